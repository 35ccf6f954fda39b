"""Executing one order against a position (R9, R10, R13–R17, R20, R21).

Validity is checked when the order executes, so earlier orders of the same turn count (R11).
An invalid order changes nothing but the owner's board: a failure message.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import messages as text
from .board import UNINHABITABLE
from .kinds import EXTERNAL_CONFLICT_ORDER, Kind, Score
from .messages import Message
from .orders import Order, OrderType
from .position import Position
from .state import Conflict


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened in a turn, for logs, audits and turn records."""

    kind: str
    player: int | None = None
    fleet: int | None = None
    cell: int | None = None
    detail: str = ""


class TurnLog:
    """Messages and events collected while a turn is resolved."""

    def __init__(self, turn: int):
        self.turn = turn
        self.messages: list[Message] = []
        self.events: list[Event] = []

    def tell(self, player: int, subject: str, body: str) -> None:
        self.messages.append(Message(player, self.turn, subject, body))

    def note(
        self,
        kind: str,
        player: int | None = None,
        fleet: int | None = None,
        cell: int | None = None,
        detail: str = "",
    ) -> None:
        self.events.append(Event(kind, player, fleet, cell, detail))


def execute(position: Position, order: Order, rotation: tuple[int, ...], log: TurnLog) -> bool:
    """Execute one accepted order of a normal turn; True when it succeeded."""
    order_type = OrderType(order.type)
    if order_type is OrderType.MOVE:
        return _move(position, order, log)
    if order_type is OrderType.ATTACK:
        return _attack(position, order, log)
    return _colonize(position, order, rotation, log)


def _fail(log: TurnLog, order: Order, subject: str, body: str) -> bool:
    log.tell(order.player, subject, body)
    log.note("order failed", order.player, order.fleet, detail=body)
    return False


def _colonize(position: Position, order: Order, rotation: tuple[int, ...], log: TurnLog) -> bool:
    fleet = position.fleets[order.fleet]
    cell = position.board.cell_of_object(order.target)
    if cell is None:
        return _fail(log, order, text.COLONIZE_FAILED, text.colonize_not_a_system(fleet.name))
    mining = fleet.kind is Kind.MINING
    if (
        cell in position.destroyed
        or cell in position.colonies
        or cell in position.leader_on
        or mining != (position.board.terrain[cell] == UNINHABITABLE)
    ):
        return _fail(log, order, text.COLONIZE_FAILED, text.colonize_impossible(fleet.name))
    bordering = position.bordering_regions(cell)
    if len(bordering) >= 2:
        with_leaders = [label for label in bordering if position.leaders_in(label)]
        if len(with_leaders) >= 3:
            return _fail(log, order, text.COLONIZE_FAILED, text.colonize_too_many_regions(fleet.name))
        if any(position.region_has_conflict_leader(label) for label in bordering):
            return _fail(log, order, text.COLONIZE_FAILED, text.colonize_merges_pending_conflict(fleet.name))

    position.colonies[cell] = fleet.kind
    position.consume(fleet.id)
    log.tell(order.player, text.COLONIZE_DONE, text.colonized(fleet.name, position.board.system_name(cell)))
    log.note("colonized", order.player, fleet.id, cell, fleet.kind.label)

    if len(bordering) <= 1:
        position.add_member(cell)
        if bordering:
            # The label after joining: the new colony may now be the region's lowest cell.
            _score_colony(position, position.labels()[cell], fleet.kind, log, cell)
        return True

    conflicts = _external_conflicts(position, bordering, cell, order.player, rotation)
    if conflicts:
        position.conflicts.extend(conflicts)
        position.conflicts_changed()
        for conflict in conflicts:
            log.note(
                "conflict queued", order.player, conflict.attacker, cell, "external " + conflict.kind.label
            )
    else:
        position.add_member(cell)
    return True


def _score_colony(position: Position, label: int, kind: Kind, log: TurnLog, cell: int) -> None:
    """R13: the matching leader's owner scores; else the settler leader's, except for settlers."""
    leader = position.the_leader(label, kind)
    if leader is None and kind is not Kind.SETTLER:
        leader = position.the_leader(label, Kind.SETTLER)
    if leader is not None:
        owner = position.owner(leader)
        position.scores[owner][kind] += 1
        log.note("scored", owner, leader, cell, Score(kind).label)


def _external_conflicts(
    position: Position, bordering: set[int], cell: int, colonizer: int, rotation: tuple[int, ...]
) -> list[Conflict]:
    """R16: one conflict per leader kind present in two of the bordering regions."""
    found = []
    for kind in EXTERNAL_CONFLICT_ORDER:
        leaders = [
            fid for label in sorted(bordering) if (fid := position.the_leader(label, kind)) is not None
        ]
        if len(leaders) < 2:
            continue
        first, second = leaders[0], leaders[1]
        attacker, defender = _attacker_first(position, first, second, colonizer, rotation)
        found.append(
            Conflict(internal=False, kind=kind, attacker=attacker, defender=defender, unification=cell)
        )
    return found


def _attacker_first(
    position: Position, a: int, b: int, colonizer: int, rotation: tuple[int, ...]
) -> tuple[int, int]:
    """The colonizer's leader attacks; else the leader whose owner comes first after the colonizer."""
    owner_a, owner_b = position.owner(a), position.owner(b)
    if owner_a == colonizer:
        return a, b
    if owner_b == colonizer:
        return b, a
    # The rotation holds every player; count from the one after the colonizer, wrapping round.
    start = rotation.index(colonizer) + 1
    order = rotation[start:] + rotation[:start]
    return (a, b) if order.index(owner_a) < order.index(owner_b) else (b, a)


def _move(position: Position, order: Order, log: TurnLog) -> bool:
    fleet = position.fleets[order.fleet]
    cell = position.board.cell_of_object(order.target)
    if cell is None:
        return _fail(log, order, text.MOVE_FAILED, text.move_not_a_system(fleet.name))
    origin = position.leader_at.get(fleet.id)
    if origin is not None:
        position.send_home(fleet.id)  # lift the leader first (R9)

    problem = None
    if (
        position.board.terrain[cell] == UNINHABITABLE
        or cell in position.destroyed
        or cell in position.colonies
        or cell in position.leader_on
    ):
        problem = text.move_invalid_system(fleet.name)
    else:
        bordering = position.bordering_regions(cell)
        if len(bordering) > 1:
            problem = text.move_joins_regions(fleet.name)
        elif not position.borders_scientist(cell):
            problem = text.move_no_science(fleet.name)
        elif bordering and position.region_has_conflict_leader(next(iter(bordering))):
            problem = text.move_into_conflict(fleet.name)
    if problem is not None:
        if origin is not None:
            position.place_leader(fleet.id, origin)
        return _fail(log, order, text.MOVE_FAILED, problem)

    incumbent = position.the_leader(next(iter(bordering)), fleet.kind) if bordering else None
    position.place_leader(fleet.id, cell)
    log.tell(order.player, text.MOVE_DONE, text.moved(fleet.name, position.board.system_name(cell)))
    log.note("moved", order.player, fleet.id, cell)
    if incumbent is not None:
        position.conflicts.append(
            Conflict(internal=True, kind=fleet.kind, attacker=fleet.id, defender=incumbent)
        )
        position.conflicts_changed()
        log.note("conflict queued", order.player, fleet.id, cell, "internal " + fleet.kind.label)
    return True


def _attack(position: Position, order: Order, log: TurnLog) -> bool:
    fleet = position.fleets[order.fleet]
    cell = position.board.cell_of_object(order.target)
    if cell is None:
        return _fail(log, order, text.ATTACK_FAILED, text.attack_not_a_system(fleet.name))
    if cell in position.destroyed or cell in position.artifacts or cell in position.unification():
        return _fail(
            log,
            order,
            text.ATTACK_FAILED,
            text.attack_impossible(fleet.name, position.board.system_name(cell)),
        )
    position.destroyed.add(cell)
    position.remove_colony(cell)
    leader = position.leader_on.get(cell)
    if leader is not None:
        position.send_home(leader)
        log.note("leader sent home", position.owner(leader), leader, cell, "bombed")
    position.consume(fleet.id)
    log.tell(order.player, text.ATTACK_DONE, text.destroyed(fleet.name, position.board.system_name(cell)))
    log.note("destroyed", order.player, fleet.id, cell)
    for withdrawn in position.withdraw_unsupported_leaders():
        log.note("leader sent home", position.owner(withdrawn), withdrawn, detail="unsupported")
    return True
