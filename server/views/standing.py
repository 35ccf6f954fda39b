"""The final standing of a finished game, as every surface shows it.

The ruleset computes the standing once (`ruleset.final_standing`: places by the BOARD tie-break,
each player's scores before and categories after the alien artifacts were shared out, the
reason the game ended). This module turns that one value into what programs read (a JSON-ready
document with a numeric `rank`, the `final` score and named categories, never a sentence as a
value) and into the words people read. The web pages, the API, the notifications, `tae-server
status` and the admin `status` all render from here; none ranks players itself.

Once a game is over its standing is public (GAME OVER! tells it to every player), so these
documents may be shown to anyone.
"""

from __future__ import annotations

from typing import Any

from ruleset import FinalStanding, GameState, PlayerStanding, final_standing
from ruleset.kinds import SCORE_TITLES
from ruleset.messages import end_reason_line


def standing_of(state: GameState) -> FinalStanding | None:
    """The standing of the game in `state`; None while it is played."""
    return final_standing(state)


def place_document(place: PlayerStanding, of: int) -> dict[str, Any]:
    """One player's line: `rank` (1 = a winner), `of` (how many players are ranked), `shared`
    (another player has the same place), `final`, the five scores before the artifacts were
    shared out and the four categories after."""
    return {
        "player": place.player,
        "name": place.name,
        "rank": place.rank,
        "of": of,
        "shared": place.shared,
        "winner": place.winner,
        "final": place.final,
        "categories_before": place.categories_before(),
        "categories_after": place.categories_after(),
    }


def standing_document(standing: FinalStanding, artifacts_left: int) -> dict[str, Any]:
    """The whole standing: why the game ended (`reason`, a key, and `reason_text`, the sentence
    GAME OVER! says) and every place, best first."""
    of = len(standing.places)
    return {
        "reason": standing.reason.value,
        "reason_text": end_reason_line(standing.reason, artifacts_left),
        "winners": [place.name for place in standing.winners],
        "places": [place_document(place, of) for place in standing.places],
    }


def state_standing_document(state: GameState) -> dict[str, Any] | None:
    """`standing_document` of a finished game's state; None while it is played."""
    standing = final_standing(state)
    return None if standing is None else standing_document(standing, len(state.artifacts))


def place_words(place: PlayerStanding, of: int) -> str:
    """ "rank 1 of 4 (winner), final score 5" — "shared rank 2 of 4" when tied."""
    rank = f"{'shared ' if place.shared else ''}rank {place.rank} of {of}"
    won = " (winner)" if place.winner else ""
    return f"{rank}{won}, final score {place.final}"


def categories_words(place: PlayerStanding) -> str:
    """ "after artifacts: Money 5, Technology 6, People 5, Raw Materials 7 (before: 4, 6, 5, 6; 2
    alien artifacts)" """
    after = ", ".join(f"{title} {value}" for title, value in zip(SCORE_TITLES, place.after, strict=False))
    before = ", ".join(str(value) for value in place.before[:4])
    artifacts = "1 alien artifact" if place.artifacts == 1 else f"{place.artifacts} alien artifacts"
    return f"after artifacts: {after} (before: {before}; {artifacts})"
