"""The final standing of a finished game (R25): the one value every surface renders.

A game's standing is computed here, once, from its final state: each player's five scores as
they stood when the game ended (`before`: Money, Technology, People, Raw Materials and the alien
artifacts), the four categories after the artifacts were shared out as wildcards (`after`), the
final score (the weakest category after the sharing), and the place by the BOARD tie-break:
compare the weakest categories, then the next-weakest in turn (`ruleset.final_scoring`). Players
share a place only when all four of their sorted categories are equal; places are numbered as in
sport (1, 1, 3). The GAME OVER! message, the web pages, the API, the notifications and the
operator's tools all show this value; none computes a ranking of its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from .final_scoring import ranking
from .kinds import SCORE_KEYS
from .state import EndReason, GameState, Phase


@dataclass(frozen=True, slots=True)
class PlayerStanding:
    """One player's line of the final standing.

    `rank` is the place (1 = a winner); `shared` says another player has the same place
    (equal in all four categories after the sharing). `before` are the five scores when the
    game ended (M, T, P, R, artifacts), `after` the four categories once the artifacts were
    added to the weakest, one at a time; `final` is the lowest of `after`.
    """

    player: int
    name: str
    rank: int
    shared: bool
    final: int
    before: tuple[int, int, int, int, int]
    after: tuple[int, int, int, int]

    @property
    def winner(self) -> bool:
        return self.rank == 1

    @property
    def artifacts(self) -> int:
        return self.before[4]

    def categories_before(self) -> dict[str, int]:
        """The five scores by name (`SCORE_KEYS`), before the artifacts were shared out."""
        return dict(zip(SCORE_KEYS, self.before, strict=True))

    def categories_after(self) -> dict[str, int]:
        """The four categories by name, after the artifacts were shared out."""
        return dict(zip(SCORE_KEYS[:4], self.after, strict=True))


@dataclass(frozen=True, slots=True)
class FinalStanding:
    """Every player's place, best first (players sharing a place in ascending id), and why the
    game ended."""

    reason: EndReason
    places: tuple[PlayerStanding, ...]

    @property
    def winners(self) -> tuple[PlayerStanding, ...]:
        return tuple(place for place in self.places if place.rank == 1)

    def of(self, player: int) -> PlayerStanding | None:
        return next((place for place in self.places if place.player == player), None)


def final_standing(state: GameState) -> FinalStanding | None:
    """The standing of a finished game; None while it is being played."""
    result = state.result
    if state.phase is not Phase.OVER or result is None:
        return None
    ranked = ranking(result)
    counts: dict[int, int] = {}
    for rank, _ in ranked:
        counts[rank] = counts.get(rank, 0) + 1
    places = []
    for rank, pid in ranked:
        player = state.player(pid)
        places.append(
            PlayerStanding(
                player=pid,
                name=player.name,
                rank=rank,
                shared=counts[rank] > 1,
                final=result.final[pid],
                before=player.scores,
                after=result.distributed[pid],
            )
        )
    return FinalStanding(result.reason, tuple(places))
