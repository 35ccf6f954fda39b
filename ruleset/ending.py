"""How a game ends: the stalemate test (R24a), the frozen final position and GAME OVER! (R25,
R25a), and `end_game` for an operator who ends a game between turns."""

from __future__ import annotations

from dataclasses import replace

from . import messages as text
from .conditions import has_valid_target
from .final_scoring import final_result
from .kinds import Kind, Role
from .messages import Phrase, Standing
from .order_types import OrderType
from .position import Position
from .standing import final_standing
from .state import EndReason, GameState, Phase
from .turn_log import TurnLog, TurnOutcome


class GameOverError(ValueError):
    """A turn (or an end) was asked of a game that has ended."""


def stalemate(position: Position) -> bool:
    """R24a: no player holds a colonist fleet that has a valid target (R10, R14) as the board stands."""
    fleets = position.fleets.values()
    colonist, mining = Role.COLONIST, Kind.MINING  # (plain names in the loops: enum reads are slow)
    other = next((f for f in fleets if f.role is colonist and f.kind is not mining), None)
    if other is not None and has_valid_target(position, OrderType.COLONIZE, other):
        return False
    miner = next((f for f in fleets if f.role is colonist and f.kind is mining), None)
    return miner is None or not has_valid_target(position, OrderType.COLONIZE_MINING, miner)


def finish(position: Position, log: TurnLog, *, turn: int, rotation: int, reason: EndReason) -> GameState:
    """R25, R25a: freeze the position as it stands (queued conflicts stay, unfought), score with
    wildcards, and tell every player how the game ended."""
    log.note("game over", detail=reason.value)
    ended = position.freeze(turn=turn, rotation=rotation, phase=Phase.OVER)
    ended = replace(ended, result=final_result(ended.players, reason))
    if not log.telling:
        return ended
    standing = final_standing(ended)
    assert standing is not None
    names = position.names
    winners = [position.player(place.player) for place in standing.winners]
    best = standing.winners[0].final if standing.winners else 0
    why = text.end_reason_line(reason, len(ended.artifacts))
    standings = [
        Standing(place.rank, position.player(place.player), place.final, place.after, place.artifacts)
        for place in standing.places
    ]
    head = text.winners_line(winners, best)
    ranking_text = text.final_ranking(why, standings)
    # The winners are the first players ranked: every body names each player once, in ranking order.
    mentions = text.unique_mentions(head.mentions + ranking_text.mentions)
    for player_id in sorted(names):
        own = standing.of(player_id)
        body = text.game_over(head, own.final if own is not None else 0, ranking_text)
        log.tell(player_id, text.GAME_OVER, Phrase(body.text, mentions), unique=True)
    return ended


def end_game(state: GameState, reason: EndReason = EndReason.OPERATOR) -> TurnOutcome:
    """End a game between turns, as an operator decides: the position is frozen as it stands
    (R25a), the final scores are computed (R25) and every player gets GAME OVER!. The turn
    number does not advance; the messages carry the last turn played."""
    if state.phase is Phase.OVER:
        raise GameOverError("the game is over")
    log = TurnLog(state.turn)
    ended = finish(Position(state), log, turn=state.turn, rotation=state.rotation, reason=reason)
    return log.outcome(ended)
