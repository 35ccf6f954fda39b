"""A player's line in the status of a finished game: their rank and final score.

Once a game is over its final scores are public (the TP board says them to everyone), so the
operator's `status` shows each player's standing instead of where they are in a turn that
will never come ("not playing this turn").
"""

from __future__ import annotations

from ruleset.state import FinalResult


def standing(result: FinalResult | None, player: int) -> str:
    """ "game over: rank 1 of 3 (winner), final score 12"; "game over" for a player the result
    has no score for. Players with equal scores share a rank."""
    if result is None or player not in result.final:
        return "game over"
    score = result.final[player]
    rank = 1 + sum(1 for other in result.final.values() if other > score)
    won = " (winner)" if player in result.winners else ""
    return f"game over: rank {rank} of {len(result.final)}{won}, final score {score}"
