"""A player's line in the status of a finished game: their place in the final standing.

Once a game is over its final standing is public (the TP board says it to everyone), so the
operator's `status` shows each player's place instead of where they are in a turn that will
never come ("not playing this turn"). The place is the ruleset's (`ruleset.final_standing`,
worded by `server.views.standing.place_words`): the BOARD tie-break, shared only when all four
categories are equal.
"""

from __future__ import annotations

from ruleset import GameState
from server.views.standing import place_words, standing_of


def standing(state: GameState, player: int) -> str:
    """ "game over: rank 1 of 3 (winner), final score 12" ("shared rank 2 of 3" when tied);
    "game over" for a player the standing does not rank."""
    final = standing_of(state)
    place = None if final is None else final.of(player)
    if final is None or place is None:
        return "game over"
    return f"game over: {place_words(place, len(final.places))}"
