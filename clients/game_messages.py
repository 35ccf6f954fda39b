"""Reading what a TaE server's board messages say: scores, the conflict of a combat turn, the end.

Subjects are fixed (spec/ruleset.md §12, R26a: clients may filter on them). What a message is
about comes from its references (spec/protocol.md §7.2: reftype 1 Object for the systems and
fleets it names, 7 Player for the players) and from the object data in the cache, not from its
sentences. Two bodies are data by design, and are read as such:

* the score report of "Turn complete" (``Money: 3`` … one line per category): the only place a
  player's scores are on the wire (R27);
* the final ranking of "GAME OVER!", one line per player (R26a)::

      1. ann: 4 (Money 4, Technology 5, People 4, Raw Materials 6; 2 alien artifacts)

  matched to the players the message references.

For servers that send neither references nor a ranking (tpserver-cpp, and this server before
R26a), REF's COMBAT! and GAME OVER! sentences (§12) are read as a fallback, marked as such
(``from_references`` / ``ranking == ()``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from protocol import BoardMessage, ReferenceType

from .tae_model import Scores

__all__ = [
    "COMBAT",
    "CATEGORY_KEYS",
    "COMBAT_COMPLETE",
    "GAME_OVER",
    "TURN_COMPLETE",
    "GameOver",
    "RefCombat",
    "Standing",
    "object_references",
    "parse_ref_combat",
    "parse_scores",
    "player_references",
    "read_game_over",
]

TURN_COMPLETE = "Turn complete"
COMBAT = "COMBAT!"
COMBAT_COMPLETE = "Combat Complete!"
GAME_OVER = "GAME OVER!"


def player_references(message: BoardMessage) -> tuple[int, ...]:
    """The player ids a message references, in the order the server gave them."""
    return tuple(ref.id for ref in message.references if ref.type == ReferenceType.PLAYER)


def object_references(message: BoardMessage) -> tuple[int, ...]:
    """The object ids (systems, fleets) a message references, in order."""
    return tuple(ref.id for ref in message.references if ref.type == ReferenceType.OBJECT)


# ------------------------------------------------------------------------------------------------
# Scores
# ------------------------------------------------------------------------------------------------

_SCORE_LINE = re.compile(r"^\s*([A-Za-z][A-Za-z ]*?)\s*:\s*(-?\d+)\s*$", re.MULTILINE)
_SCORE_KEYS = {
    "money": "money",
    "technology": "technology",
    "people": "people",
    "raw materials": "raw_materials",
    "alien artifacts": "artifacts",
}


def parse_scores(body: str, turn: int = 0) -> Scores | None:
    """Parse "Your Current Score: \\nMoney: m\\nTechnology: t\\nPeople: p\\nRaw Materials: r\\n
    Alien Artifacts: a"; None if any of the five lines is missing."""
    values: dict[str, int] = {}
    for label, number in _SCORE_LINE.findall(body):
        key = _SCORE_KEYS.get(label.strip().lower())
        if key is not None:
            values[key] = int(number)
    if len(values) != len(_SCORE_KEYS):
        return None
    return Scores(
        values["money"],
        values["technology"],
        values["people"],
        values["raw_materials"],
        values["artifacts"],
        turn,
    )


# ------------------------------------------------------------------------------------------------
# The end of the game
# ------------------------------------------------------------------------------------------------

_RANKING_LINE = re.compile(
    r"^\s*(?P<rank>\d+)\.\s+(?P<name>.+?):\s+(?P<final>-?\d+)\s+\(Money (?P<m>-?\d+), "
    r"Technology (?P<t>-?\d+), People (?P<p>-?\d+), Raw Materials (?P<r>-?\d+); "
    r"(?P<a>\d+) alien artifacts?\)\s*$"
)
_RANKING_HEADER = "Final ranking"
_REF_GAME_OVER = re.compile(
    r"^(?P<who>.*?) (?:has|have) won the game with a score of (?P<best>-?\d+)!\s*"
    r"Your final score after distributing your alien artifacts was: (?P<own>-?\d+)",
    re.DOTALL,
)


CATEGORY_KEYS = ("money", "technology", "people", "raw_materials")


@dataclass(frozen=True, slots=True)
class Standing:
    """One line of the final ranking: ``categories`` are Money, Technology, People, Raw
    Materials after the alien artifacts were shared out (R25), ``artifacts`` how many there
    were to share. Players equal in all four categories share a rank (``shared``): the server
    writes the same number on their lines."""

    rank: int
    name: str
    player_id: int | None
    final: int
    categories: tuple[int, int, int, int]
    artifacts: int
    shared: bool = False

    @property
    def winner(self) -> bool:
        return self.rank == 1

    def categories_after(self) -> dict[str, int]:
        """The four categories by name (``raw_materials``, as everywhere), after the sharing."""
        return dict(zip(CATEGORY_KEYS, self.categories, strict=True))

    def to_dict(self) -> dict[str, object]:
        """A numeric ``rank`` (1: a winner) and ``shared``, the ``final`` score, the categories
        after the artifacts were shared out (``categories_after``) and the artifacts that were
        (``artifacts``). The flat ``money`` … ``raw_materials`` keys are the same values as
        ``categories_after``, kept one release for scripts that read them."""
        return {
            "rank": self.rank,
            "shared": self.shared,
            "winner": self.winner,
            "player": self.player_id,
            "name": self.name,
            "final": self.final,
            "categories_after": self.categories_after(),
            "artifacts": self.artifacts,
            **self.categories_after(),
        }


@dataclass(frozen=True, slots=True)
class GameOver:
    """The "GAME OVER!" message, read: ``reason`` is the sentence saying why the game ended,
    ``ranking`` every player's final standing, ``winners`` the names ranked first with their
    ``winning_score``, and ``final_score`` this player's (None when the message does not say)."""

    turn: int
    body: str
    reason: str | None = None
    ranking: tuple[Standing, ...] = ()
    winners: tuple[str, ...] = ()
    winning_score: int | None = None
    final_score: int | None = None

    def standing_of(self, player_id: int | None) -> Standing | None:
        return next((s for s in self.ranking if player_id is not None and s.player_id == player_id), None)

    def to_dict(self, me: int | None = None) -> dict[str, object]:
        """The message read: why, who won, every line of the ranking, and (with ``me``) my
        own ``rank`` and whether it is ``shared`` (None when the message has no ranking)."""
        mine = self.standing_of(me)
        return {
            "turn": self.turn,
            "message": self.body,
            "reason": self.reason,
            "winners": list(self.winners),
            "winning_score": self.winning_score,
            "final_score": self.final_score,
            "rank": None if mine is None else mine.rank,
            "shared": None if mine is None else mine.shared,
            "ranking": [standing.to_dict() for standing in self.ranking],
        }

    @property
    def headline(self) -> str:
        """The first line of the body (who won)."""
        return self.body.strip().splitlines()[0] if self.body.strip() else ""


def read_game_over(message: BoardMessage, names: Mapping[int, str], me: int | None) -> GameOver:
    """Read a GAME OVER! message; ``names`` are the players' names by id (for the references)."""
    referenced = {names[pid]: pid for pid in player_references(message) if pid in names}
    lines = message.body.strip().splitlines()
    ranking = []
    for line in lines:
        match = _RANKING_LINE.match(line)
        if match is None:
            continue
        name = match.group("name")
        ranking.append(
            Standing(
                rank=int(match.group("rank")),
                name=name,
                player_id=referenced.get(name),
                final=int(match.group("final")),
                categories=(
                    int(match.group("m")),
                    int(match.group("t")),
                    int(match.group("p")),
                    int(match.group("r")),
                ),
                artifacts=int(match.group("a")),
            )
        )
    if ranking:
        ranks = [standing.rank for standing in ranking]
        ranking = [replace(s, shared=ranks.count(s.rank) > 1) for s in ranking]
        mine = next((s for s in ranking if me is not None and s.player_id == me), None)
        reason = next(
            (line.strip() for line in lines[1:] if line.strip() and not line.startswith(_RANKING_HEADER)),
            None,
        )
        if reason is not None and _RANKING_LINE.match(reason):
            reason = None
        first = [s for s in ranking if s.rank == 1]
        return GameOver(
            message.turn,
            message.body,
            reason,
            tuple(ranking),
            tuple(s.name for s in first),
            first[0].final if first else None,
            mine.final if mine is not None else None,
        )
    match = _REF_GAME_OVER.search(message.body.strip())
    if match is None:
        return GameOver(message.turn, message.body)
    who = match.group("who")
    if " and " in who:
        head, _, last = who.rpartition(" and ")
        winners = tuple(n for n in head.split(", ") if n) + (last,)
    else:
        winners = (who,)
    return GameOver(
        message.turn,
        message.body,
        winners=winners,
        winning_score=int(match.group("best")),
        final_score=int(match.group("own")),
    )


# ------------------------------------------------------------------------------------------------
# REF's COMBAT! sentence (servers without message references)
# ------------------------------------------------------------------------------------------------

_REF_COMBAT = re.compile(
    r"next turn is an (INTERNAL|EXTERNAL) combat turn! Combatants are:\s+(.+?) with an initial "
    r"strength of (-?\d+) and (.+?) with an initial strength of (-?\d+)\.?\s*$",
    re.DOTALL | re.MULTILINE,
)


@dataclass(frozen=True, slots=True)
class RefCombat:
    """What REF's COMBAT! sentence says: the kind of conflict, the combatants' names (attacker
    first) and their initial strengths."""

    internal: bool
    attacker: str
    attacker_strength: int
    defender: str
    defender_strength: int


def parse_ref_combat(body: str) -> RefCombat | None:
    """REF's COMBAT! sentence (R26), for servers that send no references; None if absent."""
    match = _REF_COMBAT.search(body)
    if match is None:
        return None
    return RefCombat(
        match.group(1) == "INTERNAL", match.group(2), int(match.group(3)), match.group(4), int(match.group(5))
    )
