"""Executing one order of a normal turn against a position (R9, R10, R13–R17, R20, R21).

Validity is checked when the order executes (`ruleset.conditions`), so earlier orders of the same
turn count (R11). An invalid order changes nothing; its owner gets a failure message that says
which condition failed (R26a).
"""

from __future__ import annotations

from . import messages as text
from .conditions import Condition, failed_condition, failure
from .kinds import EXTERNAL_CONFLICT_ORDER, Kind, Score
from .messages import Phrase
from .order_types import ORDER_TYPES, OrderType
from .orders import Order
from .position import Position
from .state import Conflict, Fleet
from .turn_log import TurnLog

# Enum members read in hot loops, as plain names (reading `OrderType.MOVE` goes through the enum
# metaclass's __getattr__ hook, several times slower than a global).
_MOVE, _ATTACK, _SETTLER = OrderType.MOVE, OrderType.ATTACK, Kind.SETTLER


def execute(position: Position, order: Order, rotation: tuple[int, ...], log: TurnLog) -> Condition | None:
    """Execute one accepted order of a normal turn: None when it succeeded, else the condition it failed."""
    order_type = ORDER_TYPES[order.type]
    fleet = position.fleets[order.fleet]
    cell = position.board.cell_of_object(order.target)
    if cell is None:
        raise ValueError(f"order target {order.target} is not a board system (check_order refuses it)")
    if order_type is _MOVE:
        return _move(position, order, fleet, cell, log)
    if order_type is _ATTACK:
        return _attack(position, order, fleet, cell, log)
    return _colonize(position, order, order_type, fleet, cell, rotation, log)


_SUBJECTS = {
    OrderType.COLONIZE: (text.COLONIZE_FAILED, "colonize"),
    OrderType.COLONIZE_MINING: (text.COLONIZE_FAILED, "colonize"),
    OrderType.MOVE: (text.MOVE_FAILED, "move to"),
    OrderType.ATTACK: (text.ATTACK_FAILED, "attack"),
}


def _check(
    position: Position, order: Order, order_type: OrderType, fleet: Fleet, cell: int, log: TurnLog
) -> Condition | None:
    """The condition the order fails now (told to its owner, R26a, and noted), or None."""
    if not log.telling:  # the condition alone: no message, and `TurnLog.note` keeps no event
        return failed_condition(position, order_type, fleet, cell)
    failed = failure(position, order_type, fleet, cell)
    if failed is None:
        return None
    condition, reason = failed
    subject, attempted = _SUBJECTS[OrderType(order.type)]
    log.tell(order.player, subject, text.order_failed(fleet, attempted, position.system(cell), reason))
    log.note("order failed", order.player, order.fleet, cell, condition.name)
    return condition


def _colonize(
    position: Position,
    order: Order,
    order_type: OrderType,
    fleet: Fleet,
    cell: int,
    rotation: tuple[int, ...],
    log: TurnLog,
) -> Condition | None:
    failed = _check(position, order, order_type, fleet, cell, log)
    if failed is not None:
        return failed

    kind = fleet.colonist_kind
    bordering = position.bordering_regions(cell)
    position.colonies[cell] = kind
    position.consume(fleet.id)
    position.changed_by[cell] = (order.player, None, "")
    if log.telling:  # (the event's detail is not built for a log that keeps none)
        log.note("colonized", order.player, fleet.id, cell, kind.label)

    telling = log.telling
    consequence: Phrase | None = None
    if len(bordering) <= 1:
        position.add_member(cell)
        if bordering:
            # The label after joining: the new colony may now be the region's lowest cell.
            scorer = _score_colony(position, position.labels()[cell], kind, log, cell)
            if telling:
                scored_by = None if scorer is None else position.piece(scorer, viewer=order.player)
                consequence = text.joined_region(kind, scored_by)
        elif telling:
            consequence = text.founded_region(kind)
    else:
        conflicts = _external_conflicts(position, bordering, cell, order.player, rotation)
        if conflicts:
            position.conflicts.extend(conflicts)
            position.conflicts_changed()
            for conflict in conflicts:
                log.note(
                    "conflict queued",
                    order.player,
                    conflict.attacker,
                    cell,
                    "external " + conflict.kind.label,
                )
            if telling:
                consequence = text.unification_pending(kind, len(bordering), [c.kind for c in conflicts])
        else:
            position.add_member(cell)
            if telling:
                consequence = text.merged_regions(kind, len(bordering))
    if consequence is None:
        return None
    log.tell(
        order.player,
        text.COLONIZE_DONE,
        text.order_done(fleet, "colonized", position.system(cell), consequence),
    )
    return None


def _score_colony(position: Position, label: int, kind: Kind, log: TurnLog, cell: int) -> int | None:
    """R13: the matching leader's owner scores; else the settler leader's, except for settlers.

    Returns the leader that scored, if any."""
    acting = position.acting_leaders(label)
    leader = acting.get(kind)
    if leader is None and kind is not _SETTLER:
        leader = acting.get(_SETTLER)
    if leader is not None:
        owner = position.owner(leader)
        position.scores[owner][kind] += 1
        if log.telling:
            log.note("scored", owner, leader, cell, Score(kind).label)
    return leader


def _external_conflicts(
    position: Position, bordering: set[int], cell: int, colonizer: int, rotation: tuple[int, ...]
) -> list[Conflict]:
    """R16: one conflict per leader kind present in two of the bordering regions."""
    found = []
    acting = [position.acting_leaders(label) for label in sorted(bordering)]
    for kind in EXTERNAL_CONFLICT_ORDER:
        leaders = [region[kind] for region in acting if kind in region]
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


def _move(position: Position, order: Order, fleet: Fleet, cell: int, log: TurnLog) -> Condition | None:
    origin = position.leader_at.get(fleet.id)
    if origin is not None:
        position.send_home(fleet.id)  # lift the leader first (R9)
    failed = _check(position, order, OrderType.MOVE, fleet, cell, log)
    if failed is not None:
        if origin is not None:
            position.place_leader(fleet.id, origin)
        return failed

    bordering = position.bordering_regions(cell)
    kind = fleet.colonist_kind
    incumbent = position.the_leader(next(iter(bordering)), kind) if bordering else None
    position.place_leader(fleet.id, cell)
    position.arrived.add(fleet.id)
    log.note("moved", order.player, fleet.id, cell)
    consequences: list[Phrase] = []
    if incumbent is not None:
        position.conflicts.append(Conflict(internal=True, kind=kind, attacker=fleet.id, defender=incumbent))
        position.conflicts_changed()
        log.note("conflict queued", order.player, fleet.id, cell, "internal " + kind.label)
        if log.telling:
            consequences.append(text.challenged(position.piece(incumbent, viewer=order.player)))
    if not log.telling:
        return None
    log.tell(
        order.player, text.MOVE_DONE, text.order_done(fleet, "moved to", position.system(cell), *consequences)
    )
    return None


def _attack(position: Position, order: Order, fleet: Fleet, cell: int, log: TurnLog) -> Condition | None:
    failed = _check(position, order, OrderType.ATTACK, fleet, cell, log)
    if failed is not None:
        return failed

    telling = log.telling
    consequences: list[Phrase] = []
    colony = position.colonies.get(cell)
    if colony is not None and telling:
        consequences.append(text.colony_bombed(colony))
    position.destroyed.add(cell)
    position.remove_colonies([cell])
    leader = position.leader_on.get(cell)
    if leader is not None:
        if telling:
            consequences.append(text.leader_bombed(position.piece(leader, viewer=order.player)))
        position.send_home(leader)
        log.note("leader sent home", position.owner(leader), leader, cell, "bombed")
    position.changed_by[cell] = (order.player, fleet.id, fleet.name)
    position.consume(fleet.id)
    log.note("destroyed", order.player, fleet.id, cell)
    withdrawn = position.withdraw_unsupported_leaders()
    for leader_id, left in withdrawn:
        log.note("leader sent home", position.owner(leader_id), leader_id, left, "unsupported")
    if not telling:
        return None
    if withdrawn:
        consequences.append(
            text.withdrawn([position.piece(fid, viewer=order.player) for fid, _ in withdrawn])
        )
    log.tell(
        order.player,
        text.ATTACK_DONE,
        text.order_done(fleet, "destroyed", position.system(cell), *consequences),
    )
    return None
