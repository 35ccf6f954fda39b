"""Turn resolution (R12, R18, R24, R25): a pure function of (state, orders, rng)."""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, replace

from . import messages as text
from .artifacts import collect_artifacts, log_collections
from .conflicts import resolve_conflict, start_next_conflict
from .execution import Event, TurnLog, execute
from .final_scoring import final_result
from .kinds import HAND_SIZE, Role
from .messages import Message
from .orders import Order, check_order
from .pool import draw
from .position import Position
from .state import GameState, Phase

GAME_ENDING_ARTIFACTS = 2


class GameOverError(ValueError):
    """A turn was asked of a game that has ended."""


@dataclass(frozen=True, slots=True)
class TurnOutcome:
    """The state after a turn, the board messages it posted and what happened in it."""

    state: GameState
    messages: tuple[Message, ...]
    events: tuple[Event, ...]


def accepted_orders(state: GameState, orders: Iterable[Order]) -> list[Order]:
    """The orders, in submission order, that `check_order` accepts one after another."""
    accepted: list[Order] = []
    for order in orders:
        if check_order(state, order, accepted) is None:
            accepted.append(order)
    return accepted


def resolve_turn(state: GameState, orders: Iterable[Order], rng: random.Random) -> TurnOutcome:
    """Play the next turn of `state` with `orders` (in submission order); `rng` draws refills.

    Orders that `check_order` would refuse are ignored, so the outcome depends only on what a
    server could have accepted.
    """
    if state.phase is Phase.OVER:
        raise GameOverError("the game is over")
    accepted = accepted_orders(state, orders)
    log = TurnLog(state.turn + 1)
    position = Position(state)
    if state.phase is Phase.COMBAT:
        new_state = _combat_turn(state, position, accepted, rng, log)
    else:
        new_state = _normal_turn(state, position, accepted, rng, log)
    return TurnOutcome(new_state, tuple(log.messages), tuple(log.events))


def _normal_turn(
    state: GameState, position: Position, accepted: list[Order], rng: random.Random, log: TurnLog
) -> GameState:
    rotation = state.rotation_order()
    by_player: dict[int, list[Order]] = {}
    for order in accepted:
        by_player.setdefault(order.player, []).append(order)
    for player_id in rotation:
        for order in sorted(by_player.get(player_id, ()), key=lambda o: o.fleet):
            execute(position, order, rotation, log)

    log_collections(collect_artifacts(position), log)
    next_rotation = state.rotation + 1
    if len(position.artifacts) <= GAME_ENDING_ARTIFACTS:
        log.note("game over", detail="artifacts")
        return _game_over(position, log, next_rotation)
    if not _refill(position, rng, log):
        return _game_over(position, log, next_rotation)

    names = {p.id: p.name for p in state.players}
    ids = sorted(names)
    start = next_rotation % len(ids)
    next_order = [names[pid] for pid in ids[start:] + ids[:start]]
    for player_id in ids:
        log.tell(player_id, text.TURN_COMPLETE, text.score_report(position.scores[player_id]))
        log.tell(player_id, text.TURN_ORDER, text.turn_order(next_order))
    combat = start_next_conflict(position, names, log)
    return position.freeze(
        turn=log.turn, rotation=next_rotation, phase=Phase.COMBAT if combat else Phase.NORMAL
    )


def _combat_turn(
    state: GameState, position: Position, accepted: list[Order], rng: random.Random, log: TurnLog
) -> GameState:
    reinforcements: dict[int, int] = {}
    for order in sorted(accepted, key=lambda o: o.fleet):
        position.consume(order.fleet)
        position.removed += 1
        reinforcements[order.player] = reinforcements.get(order.player, 0) + 1
        log.note("reinforced", order.player, order.fleet)
    names = {p.id: p.name for p in state.players}
    winner, strength = resolve_conflict(position, reinforcements, names, log)
    if not _refill(position, rng, log):
        return _game_over(position, log, state.rotation)
    for player_id in sorted(names):
        log.tell(player_id, text.COMBAT_COMPLETE, text.battle_won(names[winner], strength))
        log.tell(player_id, text.TURN_COMPLETE, text.score_report(position.scores[player_id]))
    combat = start_next_conflict(position, names, log)
    return position.freeze(
        turn=log.turn, rotation=state.rotation, phase=Phase.COMBAT if combat else Phase.NORMAL
    )


def _refill(position: Position, rng: random.Random, log: TurnLog) -> bool:
    """R24: players in ascending id draw up to 6 colonists; False when the pool ran out."""
    held: dict[int, int] = {pid: 0 for pid in position.scores}
    for fleet in position.fleets.values():
        if fleet.role is Role.COLONIST:
            held[fleet.owner] += 1
    for player_id in sorted(held):
        for _ in range(HAND_SIZE - held[player_id]):
            kind = draw(position.pool, rng)
            if kind is None:
                log.note("game over", player_id, detail="pool exhausted")
                return False
            fleet = position.new_fleet(player_id, Role.COLONIST, kind)
            log.note("drawn", player_id, fleet.id)
    return True


def _game_over(position: Position, log: TurnLog, rotation: int) -> GameState:
    """R25: score with wildcards, tell everyone, accept nothing more."""
    position.conflicts.clear()
    position.conflicts_changed()
    ended = position.freeze(turn=log.turn, rotation=rotation, phase=Phase.OVER)
    result = final_result(ended.players)
    names = {p.id: p.name for p in ended.players}
    winners = [names[pid] for pid in result.winners]
    best = result.final[result.winners[0]] if result.winners else 0
    for player_id in sorted(names):
        log.tell(player_id, text.GAME_OVER, text.game_over(winners, best, result.final[player_id]))
    return replace(ended, result=result)
