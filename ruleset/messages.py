"""Board messages (R26, R26a): the message value, the references it carries, and every text.

Subjects are REF's (ruleset.md §12); clients may filter on them. Bodies follow R26a: REF's first
sentence with "Your" for "You're" and single spaces, then what a player needs to know. Texts are
built from `Phrase`s, which carry the references (`Mention`s) to the systems, players and fleets
they name, so a message's references are in the order its body names them, by construction.
The exact wording of every kind of message is documented once, for client writers, in the
project notes; the tests in tests/ruleset/test_messages.py pin it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import NamedTuple

from .board import Board
from .kinds import SCORE_TITLES, Kind
from .state import EndReason, Fleet


class MentionKind(IntEnum):
    """What a reference names. The server sends SYSTEM and FLEET as TP reference type 1
    (Object) and PLAYER as 7 (Player)."""

    SYSTEM = 1  # a board star system, by its object id (`Board.system_id(cell)`)
    PLAYER = 2  # a player, by id
    FLEET = 3  # a fleet, by object id (it may have been consumed by the order it names)

    __hash__ = int.__hash__  # as the int it equals, and without a Python call (mentions are deduplicated)


class Mention(NamedTuple):
    """A reference from a message to something it names. (A named tuple rather than a frozen
    dataclass: every message builds and deduplicates a few, and tuples hash in C.)"""

    kind: MentionKind
    id: int


@dataclass(frozen=True, slots=True)
class Message:
    """One message on one player's board. `turn` is the turn being processed when it was posted;
    `mentions` are the distinct things the body names, in order of first appearance."""

    player: int
    turn: int
    subject: str
    body: str
    mentions: tuple[Mention, ...] = ()


class Phrase(NamedTuple):
    """Text and the references to what it names. (A named tuple, like `Mention`: a turn builds
    hundreds, and tuples are built in C.)"""

    text: str
    mentions: tuple[Mention, ...] = ()


def compose(*parts: Phrase | str) -> Phrase:
    """The parts one after another: their texts joined, their references in order."""
    texts: list[str] = []
    mentions: list[Mention] = []
    for part in parts:
        if type(part) is str:
            texts.append(part)
        else:
            assert type(part) is Phrase
            texts.append(part.text)
            if part.mentions:
                mentions.extend(part.mentions)
    return Phrase("".join(texts), tuple(mentions))


def listing(items: Sequence[Phrase | str], separator: str = ", ", last: str = " and ") -> Phrase:
    """ "a", "a and b", "a, b and c" (with other separators for lists of systems)."""
    parts: list[Phrase | str] = []
    for i, item in enumerate(items):
        if i:
            parts.append(last if i == len(items) - 1 else separator)
        parts.append(item)
    return compose(*parts)


def unique_mentions(mentions: tuple[Mention, ...]) -> tuple[Mention, ...]:
    """Each reference once, in order of first appearance."""
    if len(mentions) > 2 or (len(mentions) == 2 and mentions[0] == mentions[1]):
        return tuple(dict.fromkeys(mentions))
    return mentions


def message(player: int, turn: int, subject: str, body: Phrase) -> Message:
    """A message with the body's references, each named once, in order of first appearance."""
    return Message(player, turn, subject, body.text, unique_mentions(body.mentions))


# -- names ------------------------------------------------------------------------------------


def system(board: Board, cell: int) -> Phrase:
    """A board system by its name "x, y" (built once per board and system)."""
    found = board.memo.get(cell)
    if isinstance(found, Phrase):
        return found
    phrase = Phrase(board.system_name(cell), (Mention(MentionKind.SYSTEM, board.system_id(cell)),))
    board.memo[cell] = phrase
    return phrase


def player(player_id: int, name: str) -> Phrase:
    return Phrase(name, (Mention(MentionKind.PLAYER, player_id),))


def fleet(fleet_id: int, fleet_name: str) -> Phrase:
    return Phrase(fleet_name, (Mention(MentionKind.FLEET, fleet_id),))


def piece(fleet_id: int, fleet_name: str, owner: int, owner_name: str, viewer: int | None = None) -> Phrase:
    """A fleet with its owner: "bo's Mining Leader", or "your Mining Leader" for the viewer."""
    if owner == viewer:
        return compose("your ", fleet(fleet_id, fleet_name))
    return compose(player(owner, owner_name), "'s ", fleet(fleet_id, fleet_name))


# -- subjects (REF's, ruleset.md §12) ---------------------------------------------------------

COLONIZE_DONE = "Colonize fleet order complete"
COLONIZE_FAILED = "Colonize order failed"
MOVE_DONE = "Move fleet order complete"
MOVE_FAILED = "Move order failed"
ATTACK_DONE = "Attack fleet order complete"
ATTACK_FAILED = "Attack order failed"
TURN_COMPLETE = "Turn complete"
TURN_ORDER = "Turn Order"
COMBAT = "COMBAT!"
COMBAT_COMPLETE = "Combat Complete!"
GAME_OVER = "GAME OVER!"
WELCOME = "Welcome"
NEW_PLAYER = "New Player"


def category(kind: Kind) -> str:
    """The score category a kind feeds: "Money", "Technology", "People", "Raw Materials"."""
    return SCORE_TITLES[kind]


# -- orders: done and failed ------------------------------------------------------------------


def order_done(own: Fleet, done: str, target: Phrase, *more: Phrase) -> Phrase:
    """`Your fleet "<fleet>" has colonized <x>, <y>.` and what followed, one sentence each."""
    body = f'Your fleet "{own.name}" has {done} {target.text}.'
    mentions = (Mention(MentionKind.FLEET, own.id), *target.mentions)
    for sentence in more:
        body = f"{body} {sentence.text}"
        mentions += sentence.mentions
    return Phrase(body, mentions)


def order_failed(own: Fleet, attempted: str, target: Phrase, reason: Phrase) -> Phrase:
    """`Your fleet "<fleet>" could not colonize <x>, <y>: <reason>.`"""
    return Phrase(
        f'Your fleet "{own.name}" could not {attempted} {target.text}: {reason.text}.',
        (Mention(MentionKind.FLEET, own.id), *target.mentions, *reason.mentions),
    )


_FOUNDED = tuple(Phrase(f"The {kind.label} colony founds a new region; nobody scores.") for kind in Kind)
_NO_SCORER = tuple(
    Phrase(
        f"The {kind.label} colony joins a region without "
        f"{'a settler' if kind is Kind.SETTLER else f'a {kind.label} or settler'} leader; nobody scores."
    )
    for kind in Kind
)


def founded_region(kind: Kind) -> Phrase:
    return _FOUNDED[kind]


def joined_region(kind: Kind, scorer: Phrase | None) -> Phrase:
    """R13: the colony joined one region; `scorer` is the leader that scored, if any."""
    if scorer is None:
        return _NO_SCORER[kind]
    return Phrase(
        f"The {kind.label} colony joins a region; {scorer.text} scores 1 {category(kind)}.", scorer.mentions
    )


def merged_regions(kind: Kind, regions: int) -> Phrase:
    return Phrase(f"The {kind.label} colony joins {regions} regions into one; nobody scores.")


def unification_pending(kind: Kind, regions: int, fighting: Sequence[Kind]) -> Phrase:
    """R16: the colony borders regions with leaders of the same kind, who now face each other."""
    kinds = listing([k.label for k in fighting]).text
    count = len(fighting)
    queued = (
        "a conflict is queued, and until it is"
        if count == 1
        else f"{count} conflicts are queued, and until they are"
    )
    return Phrase(
        f"The {kind.label} colony borders {regions} regions with rival {kinds} leaders: {queued} decided "
        "the colony is a pending unification system; nobody scores."
    )


def challenged(incumbent: Phrase) -> Phrase:
    """R17: a Move into a region that already has a leader of that kind."""
    return compose(
        "It has entered the region of ", incumbent, ": an internal conflict between them is queued."
    )


def colony_bombed(kind: Kind) -> Phrase:
    return Phrase(f"The {kind.label} colony there is gone.")


def leader_bombed(leader: Phrase) -> Phrase:
    return compose("The bombing sent ", leader, " home.")


def withdrawn(leaders: Sequence[Phrase]) -> Phrase:
    """R21: leaders left without a scientist colony next to them."""
    them = "them" if len(leaders) > 1 else "it"
    return compose(f"Without a scientist colony next to {them}, ", listing(leaders), " returned home.")


# -- reasons an order fails or is refused (R7a, R9, R10, R14, R17, R20) ----------------------


def is_destroyed(target: Phrase) -> Phrase:
    return compose(target, " is destroyed")


def is_already_destroyed(target: Phrase) -> Phrase:
    return compose(target, " is already destroyed")


def is_colonized(target: Phrase) -> Phrase:
    return compose(target, " is already colonized")


def is_unification(target: Phrase) -> Phrase:
    return compose(target, " is a pending unification system")


def is_uninhabitable_for_colonists(target: Phrase) -> Phrase:
    return compose(target, " is uninhabitable (M): only mining colonists can colonize it")


def is_habitable_for_miners(target: Phrase) -> Phrase:
    return compose(target, " is habitable: mining colonists can only colonize uninhabitable (M) systems")


def is_uninhabitable_for_leaders(target: Phrase) -> Phrase:
    return compose(target, " is uninhabitable (M): leaders cannot enter it")


def carries_artifact(target: Phrase) -> Phrase:
    return compose(target, " carries an alien artifact")


def destroyed_this_turn(target: Phrase, by: Phrase) -> Phrase:
    return compose(target, " was destroyed earlier this turn by ", by)


def colonized_this_turn(target: Phrase, by: Phrase) -> Phrase:
    return compose(target, " was colonized earlier this turn by ", by)


def unification_this_turn(target: Phrase, by: Phrase) -> Phrase:
    return compose(
        target, " became a pending unification system earlier this turn, when ", by, " colonized it"
    )


def taken_this_turn(target: Phrase, by: Phrase) -> Phrase:
    return compose(target, " was taken earlier this turn by ", by)


def occupied(target: Phrase, by: Phrase) -> Phrase:
    return compose(target, " is occupied by ", by)


def joins_three_leader_regions() -> Phrase:
    return Phrase("it would join three regions that hold leaders")


def merges_conflict_region(leader: Phrase) -> Phrase:
    return compose("it would merge the region of ", leader, ", who is in a pending conflict")


def joins_regions(regions: int) -> Phrase:
    return Phrase(f"it would join {regions} regions")


def no_scientist_next_to_it() -> Phrase:
    return Phrase("no scientist colony is next to it")


def region_in_conflict(leader: Phrase) -> Phrase:
    return compose("its region holds ", leader, ", who is in a pending conflict")


# -- end of turn ------------------------------------------------------------------------------


def score_report(scores: Sequence[int]) -> Phrase:
    m, t, p, r, a = scores
    return Phrase(
        f"Your Current Score: \nMoney: {m}\nTechnology: {t}\nPeople: {p}\nRaw Materials: {r}\n"
        f"Alien Artifacts: {a}"
    )


def turn_order(players: Iterable[Phrase]) -> Phrase:
    names = list(players)
    return Phrase(
        "The order for the next turn is: " + "".join(f"{name.text} " for name in names),
        tuple(m for name in names for m in name.mentions),
    )


# -- conflicts (R16-R19) ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Side:
    """One side of a conflict, for the messages: its player, leader, the leader's system and strength."""

    player: Phrase
    leader: Phrase
    at: Phrase
    strength: int


def combat_starts(
    internal: bool, kind: Kind, attacker: Side, defender: Side, unification: Phrase | None
) -> Phrase:
    """COMBAT!: REF's sentence, then who fights where, what is at stake, reinforcements, ties."""
    a, d = attacker, defender
    kinds = kind.label
    place: tuple[Mention, ...] = ()
    if internal:
        which, reinforcements = "INTERNAL", Kind.SCIENTIST.label
        stake = "Both stand in one region. The loser returns home, and the winner scores 1 Technology."
    else:
        assert unification is not None
        which, reinforcements, place = "EXTERNAL", kinds, unification.mentions
        stake = (
            f"The colony at {unification.text} would join their regions. The loser's {kinds} colonies "
            f"in its region are removed (artifact systems stay), and the winner scores 1 {category(kind)} "
            "plus 1 per colony removed."
        )
    body = (
        f"The next turn is an {which} combat turn! Combatants are: {a.player.text} with an initial "
        f"strength of {a.strength} and {d.player.text} with an initial strength of {d.strength}.\n"
        f"{kinds.capitalize()} leaders fight: {a.leader.text} at {a.at.text} attacks and "
        f"{d.leader.text} at {d.at.text} defends.\n"
        f"{stake}\n"
        f"Reinforcements are {reinforcements} colonists: {a.player.text} and {d.player.text} may each "
        "send any number with Reinforce orders, each adding 1 to its owner's strength.\n"
        f"A tie goes to the defender, {d.player.text}."
    )
    mentions = (
        a.player.mentions
        + d.player.mentions
        + a.leader.mentions
        + a.at.mentions
        + d.leader.mentions
        + d.at.mentions
        + place
    )
    return Phrase(body, mentions)


def battle_won(
    winner: Side,
    loser: Side,
    kind: Kind,
    internal: bool,
    removed: Sequence[Phrase],
    gain: int,
    went_home: Sequence[Phrase],
) -> Phrase:
    """Combat Complete!: REF's sentence, the loser, what was removed and gained, and R21's withdrawals."""
    w, lost = winner, loser
    body = (
        f"{w.player.text} has won the battle with a strength of {w.strength}!\n"
        f"{lost.player.text} lost with a strength of {lost.strength}, and {lost.leader.text} returned "
        f"home from {lost.at.text}.\n"
    )
    mentions = w.player.mentions + lost.player.mentions + lost.leader.mentions + lost.at.mentions
    if not internal:
        if removed:
            systems = listing(removed, "; ", "; ")
            body += f"Removed {kind.label} colonies: {systems.text}.\n"
            mentions += systems.mentions
        else:
            body += f"No {kind.label} colonies were removed.\n"
    body += f"{w.player.text} gains {gain} {category(Kind.SCIENTIST if internal else kind)}."
    if went_home:
        home = withdrawn(went_home)
        body += f"\n{home.text}"
        mentions += home.mentions
    return Phrase(body, mentions)


# -- the end (R25, R25a) ----------------------------------------------------------------------


def end_reason_line(reason: EndReason, artifacts_left: int) -> str:
    """Why the game ended (R25, R24a, or the operator's decision)."""
    if reason is EndReason.ARTIFACTS:
        if artifacts_left == 0:
            return "The game ended because no alien artifacts were left on the board."
        if artifacts_left == 1:
            return "The game ended because only 1 alien artifact was left on the board."
        return f"The game ended because only {artifacts_left} alien artifacts were left on the board."
    if reason is EndReason.POOL:
        return "The game ended because the colonist pool ran out."
    if reason is EndReason.STALEMATE:
        return "The game ended in a stalemate: no colonist fleet could colonize any system."
    return "The game was ended by the operator."


@dataclass(frozen=True, slots=True)
class Standing:
    """One line of the final ranking: rank (equal profiles share one), player, final score, the four
    categories after the alien artifacts were distributed, and how many artifacts they had."""

    rank: int
    player: Phrase
    final: int
    categories: tuple[int, int, int, int]
    artifacts: int


def standing_line(standing: Standing) -> Phrase:
    """`1. ann: 4 (Money 4, Technology 5, People 4, Raw Materials 6; 2 alien artifacts)`"""
    values = ", ".join(f"{title} {value}" for title, value in zip(SCORE_TITLES, standing.categories))
    artifacts = "1 alien artifact" if standing.artifacts == 1 else f"{standing.artifacts} alien artifacts"
    return compose(f"{standing.rank}. ", standing.player, f": {standing.final} ({values}; {artifacts})")


def final_ranking(reason: str, ranking: Sequence[Standing]) -> Phrase:
    """What every player's GAME OVER! says after its first sentence: why, and the ranking."""
    parts: list[Phrase | str] = [reason, "\nFinal ranking (categories after distributing alien artifacts):"]
    for standing in ranking:
        parts += ["\n", standing_line(standing)]
    return compose(*parts)


def winners_line(winners: Sequence[Phrase], best: int) -> Phrase:
    """The start of every GAME OVER!: who won, with what score (R25)."""
    if not winners:
        return Phrase("Nobody has won the game. Your final score was: ")
    verb = "has" if len(winners) == 1 else "have"
    return compose(
        listing(winners),
        f" {verb} won the game with a score of {best}! Your final score after distributing your "
        "alien artifacts was: ",
    )


def game_over(head: Phrase, own: int, ranking: Phrase) -> Phrase:
    """GAME OVER!: `winners_line`, this player's final score, then `final_ranking`."""
    return Phrase(f"{head.text}{own}.\n{ranking.text}", head.mentions + ranking.mentions)


# -- joining ----------------------------------------------------------------------------------


def welcome(server: str) -> Phrase:
    return Phrase(
        f"Welcome to Thousand Parsec!\nThis server is running on {server}.  Please report any "
        "problems and enjoy the game."
    )


def new_player(who: Phrase) -> Phrase:
    return compose("New player ", who, " has joined the game.")
