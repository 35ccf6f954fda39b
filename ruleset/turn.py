"""Turn resolution (R12, R18, R24, R24a, R25): a pure function of (state, orders, rng)."""

from __future__ import annotations

import random
from collections.abc import Iterable
from operator import attrgetter

from . import messages as text
from .artifacts import collect_artifacts
from .conflicts import resolve_conflict, start_next_conflict
from .ending import GameOverError, finish, stalemate
from .execution import execute
from .kinds import HAND_SIZE, Role
from .orders import Order, check_order
from .pool import draw
from .position import Position
from .state import EndReason, GameState, Phase
from .turn_log import TurnLog, TurnOutcome

GAME_ENDING_ARTIFACTS = 2
_BY_FLEET = attrgetter("fleet")  # orders of a player run in fleet id order
# Enum members read in hot loops, as plain names (reading `Phase.OVER` goes through the enum
# metaclass's __getattr__ hook, several times slower than a global).
_OVER, _COMBAT, _NORMAL, _COLONIST = Phase.OVER, Phase.COMBAT, Phase.NORMAL, Role.COLONIST


def accepted_orders(state: GameState, orders: Iterable[Order]) -> list[Order]:
    """The orders, in submission order, that `check_order` accepts one after another.

    (`check_order` looks only at the same player's accepted orders, so each is given just those.)"""
    accepted: list[Order] = []
    by_player: dict[int, list[Order]] = {}
    for order in orders:
        mine = by_player.setdefault(order.player, [])
        if check_order(state, order, mine) is None:
            mine.append(order)
            accepted.append(order)
    return accepted


def resolve_turn(
    state: GameState, orders: Iterable[Order], rng: random.Random, *, messages: bool = True
) -> TurnOutcome:
    """Play the next turn of `state` with `orders` (in submission order); `rng` draws refills.

    Orders that `check_order` would refuse are ignored, so the outcome depends only on what a
    server could have accepted. With `messages` False no board message and no event is written
    (the outcome's `messages` and `events` are empty; the state is the same): searches and
    simulations play faster that way.
    """
    if state.phase is _OVER:
        raise GameOverError("the game is over")
    accepted = accepted_orders(state, orders)
    log = TurnLog(state.turn + 1, messages)
    position = Position(state)
    if state.phase is _COMBAT:
        new_state = _combat_turn(state, position, accepted, rng, log)
    else:
        new_state = _normal_turn(state, position, accepted, rng, log)
    return log.outcome(new_state)


def _normal_turn(
    state: GameState, position: Position, accepted: list[Order], rng: random.Random, log: TurnLog
) -> GameState:
    rotation = state.rotation_order()
    by_player: dict[int, list[Order]] = {}
    for order in accepted:
        by_player.setdefault(order.player, []).append(order)
    for player_id in rotation:
        for order in sorted(by_player.get(player_id, ()), key=_BY_FLEET):
            execute(position, order, rotation, log)

    for owner, count in collect_artifacts(position):
        log.note("artifacts collected", owner, detail=str(count))
    next_rotation = state.rotation + 1
    if len(position.artifacts) <= GAME_ENDING_ARTIFACTS:
        return finish(position, log, turn=log.turn, rotation=next_rotation, reason=EndReason.ARTIFACTS)
    if not _refill(position, rng, log):
        return finish(position, log, turn=log.turn, rotation=next_rotation, reason=EndReason.POOL)
    if not position.conflicts and stalemate(position):
        return finish(position, log, turn=log.turn, rotation=next_rotation, reason=EndReason.STALEMATE)

    if log.telling:
        ids = sorted(position.names)
        start = next_rotation % len(ids) if ids else 0  # an operator may end the turn of an empty game
        order_body = text.turn_order([position.player(pid) for pid in ids[start:] + ids[:start]])
        for player_id in ids:
            log.tell(player_id, text.TURN_COMPLETE, text.score_report(position.scores[player_id]))
            log.tell(player_id, text.TURN_ORDER, order_body)
    combat = start_next_conflict(position, log)
    return position.freeze(turn=log.turn, rotation=next_rotation, phase=_COMBAT if combat else _NORMAL)


def _combat_turn(
    state: GameState, position: Position, accepted: list[Order], rng: random.Random, log: TurnLog
) -> GameState:
    reinforcements: dict[int, int] = {}
    for order in sorted(accepted, key=_BY_FLEET):
        position.consume(order.fleet)
        position.removed += 1
        reinforcements[order.player] = reinforcements.get(order.player, 0) + 1
        log.note("reinforced", order.player, order.fleet)
    battle = resolve_conflict(position, reinforcements, log)
    if not _refill(position, rng, log):
        return finish(position, log, turn=log.turn, rotation=state.rotation, reason=EndReason.POOL)
    if battle is not None:
        for player_id in sorted(position.names):
            log.tell(player_id, text.COMBAT_COMPLETE, battle)
            log.tell(player_id, text.TURN_COMPLETE, text.score_report(position.scores[player_id]))
    combat = start_next_conflict(position, log)
    return position.freeze(turn=log.turn, rotation=state.rotation, phase=_COMBAT if combat else _NORMAL)


def _refill(position: Position, rng: random.Random, log: TurnLog) -> bool:
    """R24: players in ascending id draw up to 6 colonists; False when the pool ran out."""
    held: dict[int, int] = {pid: 0 for pid in position.scores}
    colonist = _COLONIST
    for owner in [f.owner for f in position.fleets.values() if f.role is colonist]:
        held[owner] += 1
    for player_id in sorted(held):
        for _ in range(HAND_SIZE - held[player_id]):
            kind = draw(position.pool, rng)
            if kind is None:
                log.note("pool exhausted", player_id)
                return False
            fleet = position.new_fleet(player_id, colonist, kind)
            log.note("drawn", player_id, fleet.id)
    return True
