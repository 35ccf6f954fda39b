"""Submitting a whole turn, all or nothing.

``submit_turn(game, turn_file)`` is a plan (``clients.plans``), so the CLI runs it on the
blocking transport and a Twisted client could run it too. The steps:

1. **Resolve** every entry against the cache: fleet names → my fleets (``FleetPicker``),
   ``x,y`` → system ids, order names → the server's order types, "Reinforce ×N" → N eligible
   fleets. Problems are reported per entry; nothing has been sent.
2. **Replace** (``replace=True``): remove this turn's orders already queued, remembering them.
3. **Probe** every order (ProbeOrder, pipelined). If the server refuses any, nothing is
   inserted (and replaced orders are put back).
4. **Insert** them one by one. Probes do not see each other, so an insert can still be refused
   (the 2-orders-per-turn limit, two orders on one system, one fleet twice): then the orders
   inserted so far are removed again, replaced orders are put back, and the report says which
   order was refused and why.

The result is a ``SubmissionReport``: ``ok``, the ``stage`` that failed, and per order its
``status`` (``inserted``, ``accepted`` = probe passed but not inserted, ``refused``,
``rolled-back``, ``not-sent``, ``unresolved``) with the server's reason. A connection error
propagates as ``ClientError``; ``report.inserted_so_far`` then lists what may be left queued.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from protocol import Fail, InsertOrder, Order, ProbeOrder

from .conflict_view import turn_phase
from .errors import ClientError, RequestFailed
from .fleet_refs import FleetPicker, fleet_ref, resolve_target
from .game_api import TaeGame
from .plans import Plan
from .turn_file import REINFORCE, OrderEntry, TurnFile

__all__ = ["PlannedOrder", "ReplacedOrder", "SubmissionReport", "submit_turn"]

INSERTED = "inserted"
ACCEPTED = "accepted"
REFUSED = "refused"
ROLLED_BACK = "rolled-back"
NOT_SENT = "not-sent"
UNRESOLVED = "unresolved"
LEFT_QUEUED = "left-queued"


@dataclass(slots=True)
class PlannedOrder:
    """One order to send (an entry may give several: Reinforce ×N; or none: count 0)."""

    entry: int
    description: str
    order: str
    order_type: int | None = None
    fleet_id: int | None = None
    fleet_ref: str | None = None
    target_id: int | None = None
    target_xy: tuple[int, int] | None = None
    status: str = "planned"
    reason: str | None = None
    code: int | None = None
    slot: int | None = None

    @property
    def fleet_and_type(self) -> tuple[int, int]:
        """The fleet and order type of a resolved order (only those are sent)."""
        if self.fleet_id is None or self.order_type is None:
            raise ValueError(f"order {self.entry} was not resolved")
        return self.fleet_id, self.order_type

    def to_dict(self) -> dict[str, object]:
        return {
            "entry": self.entry,
            "order": self.order,
            "order_type": self.order_type,
            "fleet": self.fleet_id,
            "fleet_ref": self.fleet_ref,
            "target": _target_dict(self.target_id, self.target_xy),
            "status": self.status,
            "reason": self.reason,
            "code": self.code,
            "slot": self.slot,
        }


@dataclass(slots=True)
class ReplacedOrder:
    """An order that was queued before a ``replace`` submission."""

    fleet_id: int
    order_type: int
    args: tuple
    order: str
    target_id: int | None
    slot: int = 0
    status: str = "removed"  # removed, restored, lost

    def to_dict(self) -> dict[str, object]:
        return {
            "fleet": self.fleet_id,
            "order": self.order,
            "target": self.target_id,
            "status": self.status,
        }


@dataclass(slots=True)
class SubmissionReport:
    source: str
    turn: int | None
    dry_run: bool = False
    ok: bool = False
    stage: str | None = None  # resolve, turn, replace, probe, insert (where it failed)
    message: str = ""
    orders: list[PlannedOrder] = field(default_factory=list)
    replaced: list[ReplacedOrder] = field(default_factory=list)
    rolled_back: int = 0

    @property
    def refused(self) -> list[PlannedOrder]:
        return [o for o in self.orders if o.status in (REFUSED, UNRESOLVED)]

    @property
    def inserted_so_far(self) -> list[PlannedOrder]:
        return [o for o in self.orders if o.status in (INSERTED, LEFT_QUEUED)]

    def to_dict(self) -> dict[str, object]:
        return {
            "ok": self.ok,
            "file": self.source,
            "turn": self.turn,
            "dry_run": self.dry_run,
            "stage": self.stage,
            "message": self.message,
            "orders": [o.to_dict() for o in self.orders],
            "replaced": [r.to_dict() for r in self.replaced],
            "rolled_back": self.rolled_back,
        }


def submit_turn(
    game: TaeGame, turn_file: TurnFile, *, replace: bool | None = None, dry_run: bool = False
) -> Plan[SubmissionReport]:
    """The plan described in the module docstring. ``replace`` None follows the file."""
    replace = turn_file.replace if replace is None else replace
    report = SubmissionReport(turn_file.source, game.turn, dry_run)
    if turn_file.turn is not None and game.turn is not None and turn_file.turn != game.turn:
        report.stage = "turn"
        report.message = f"the file is for turn {turn_file.turn}, but the game is at turn {game.turn}"
        return report
    phase = turn_phase(game)
    if turn_file.when is not None and phase != turn_file.when:
        report.stage = "turn"
        report.message = f"the file is for a {turn_file.when} turn, but turn {game.turn} is a {phase} turn"
        return report

    report.orders = _resolve(game, turn_file.orders, ignore_queued=replace)
    if any(o.status == UNRESOLVED for o in report.orders):
        for planned in report.orders:
            if planned.status != UNRESOLVED:
                planned.status = NOT_SENT
        report.stage = "resolve"
        report.message = _count(report.refused, "order") + " could not be resolved; nothing was sent"
        return report

    if replace and not dry_run:
        removed_ok = yield from _remove_queued(game, report)
        if not removed_ok:
            yield from _restore(game, report)
            for planned in report.orders:
                planned.status = NOT_SENT
            report.stage = "replace"
            report.message = "the orders already queued could not be removed; nothing was sent"
            return report

    # Probe every order, pipelined: nothing is inserted unless all pass.
    messages = [game.build_order(*p.fleet_and_type, p.target_id, cls=ProbeOrder) for p in report.orders]
    outcomes = (yield messages) if messages else []
    for planned, outcome in zip(report.orders, outcomes):
        if isinstance(outcome, RequestFailed):
            _refuse(game, planned, outcome)
        elif isinstance(outcome, ClientError):
            raise outcome
        else:
            planned.status = ACCEPTED
    if report.refused:
        for planned in report.orders:
            if planned.status == ACCEPTED and not dry_run:  # a dry run says which would pass
                planned.status = NOT_SENT
        yield from _restore(game, report)
        report.stage = "probe"
        report.message = f"the server refused {_count(report.refused, 'order')}; nothing was inserted"
        return report
    if dry_run:
        report.ok = True
        report.message = f"the server would accept all {_count(report.orders, 'order')} (dry run)"
        return report

    # Insert one by one; on a refusal, take back what was inserted.
    for index, planned in enumerate(report.orders):
        try:
            reply = yield from game.insert_order(*planned.fleet_and_type, planned.target_id)
        except RequestFailed as error:
            _refuse(game, planned, error)
            for later in report.orders[index + 1 :]:
                later.status = NOT_SENT
            yield from _roll_back(game, report)
            yield from _restore(game, report)
            report.stage = "insert"
            left = [o for o in report.orders if o.status == LEFT_QUEUED]
            report.message = (
                f"the server refused order {planned.entry} when it was inserted; "
                f"{_count(report.orders[:index], 'order')} inserted before it "
                + (
                    "were removed again"
                    if not left
                    else f"could not all be removed ({len(left)} left queued)"
                )
            )
            return report
        planned.status = INSERTED
        planned.slot = _slot_of(game, planned.fleet_and_type[0], reply)
    report.ok = True
    report.message = f"{_count(report.orders, 'order')} inserted for turn {game.turn}"
    return report


# ------------------------------------------------------------------------------------------------


def _resolve(game: TaeGame, entries: tuple[OrderEntry, ...], ignore_queued: bool) -> list[PlannedOrder]:
    picker = FleetPicker(game, ignore_queued=ignore_queued)
    planned: list[PlannedOrder] = []
    for entry in entries:
        description = entry.describe()
        try:
            desc = game.order_desc(entry.order_name)
        except KeyError:
            planned.append(
                PlannedOrder(
                    entry.number,
                    description,
                    entry.order_name,
                    status=UNRESOLVED,
                    reason=f"the server has no order type {entry.order_name}",
                )
            )
            continue
        try:
            if entry.order_type == REINFORCE:
                fleets = picker.pick_many(entry.fleet, entry.count, desc.id)
                target_id = None
            else:
                # A turn file gives every other order a fleet and a target (clients.turn_file).
                assert entry.fleet is not None and entry.target is not None
                fleets = [picker.pick(entry.fleet)]
                target_id = resolve_target(game, entry.target)
        except LookupError as error:
            planned.append(
                PlannedOrder(
                    entry.number,
                    description,
                    desc.name,
                    desc.id,
                    status=UNRESOLVED,
                    reason=str(error.args[0]),
                )
            )
            continue
        target_xy = _position_of(game, target_id)
        for fleet in fleets:
            planned.append(
                PlannedOrder(
                    entry.number,
                    description,
                    desc.name,
                    desc.id,
                    fleet.id,
                    fleet_ref(fleet),
                    target_id,
                    target_xy,
                )
            )
    return planned


def _position_of(game: TaeGame, system_id: int | None) -> tuple[int, int] | None:
    if system_id is None:
        return None
    for view in game.systems().values():
        if view.id == system_id:
            return view.position
    return None


def _refuse(game: TaeGame, planned: PlannedOrder, error: RequestFailed) -> None:
    planned.status = REFUSED
    planned.code = error.code
    reason = error.fail.message
    allowed = game.allowed_orders(planned.fleet_id) if planned.fleet_id is not None else []
    if planned.fleet_id is not None and planned.order_type not in {d.id for d in allowed}:
        names = ", ".join(d.name for d in allowed) or "no orders now"
        reason += f" ({planned.fleet_ref} {planned.fleet_id} accepts: {names})"
    planned.reason = reason


def _slot_of(game: TaeGame, fleet_id: int, reply) -> int | None:
    if isinstance(reply, Order) and reply.slot >= 0:
        return reply.slot
    orders = game.cache.orders_of(fleet_id)
    return len(orders) - 1 if orders else None


def _roll_back(game: TaeGame, report: SubmissionReport) -> Plan[None]:
    for planned in reversed(report.orders):
        if planned.status != INSERTED:
            continue
        fleet_id = planned.fleet_and_type[0]
        slot = planned.slot
        if slot is None:
            slot = max(len(game.cache.orders_of(fleet_id)) - 1, 0)
        try:
            results = yield from game.remove_orders(fleet_id, [slot])
        except RequestFailed as error:
            planned.status, planned.reason = LEFT_QUEUED, f"could not be removed: {error.fail.message}"
            continue
        failed = [r for r in results if isinstance(r, Fail)]
        if results and not failed:
            planned.status = ROLLED_BACK
            report.rolled_back += 1
        else:
            planned.status = LEFT_QUEUED
            planned.reason = "could not be removed: " + ("; ".join(r.message for r in failed) or "no answer")


def _remove_queued(game: TaeGame, report: SubmissionReport) -> Plan[bool]:
    """Remove every order queued on my fleets, remembering them in ``report.replaced``."""
    complete = True
    for fleet in game.my_fleets():
        if not fleet.orders:
            continue
        slots = sorted(range(len(fleet.orders)), reverse=True)  # as remove_orders sends them
        try:
            results = yield from game.remove_orders(fleet.id, slots)
        except RequestFailed:
            complete = False
            continue
        for slot, result in zip(slots, results):
            order = fleet.orders[slot]
            if isinstance(result, Fail) or order is None:
                complete = complete and not isinstance(result, Fail)
                continue
            target = next((a.object_id for a in order.args if hasattr(a, "object_id")), None)
            report.replaced.append(
                ReplacedOrder(fleet.id, order.type, order.args, _order_name(game, order.type), target, slot)
            )
    report.replaced.sort(key=lambda r: (r.fleet_id, r.slot))
    return complete


def _restore(game: TaeGame, report: SubmissionReport) -> Plan[None]:
    """Put back the orders a ``replace`` submission removed."""
    for replaced in report.replaced:
        if replaced.status != "removed":
            continue
        try:
            yield game.build_order(
                replaced.fleet_id, replaced.order_type, args=replaced.args, cls=InsertOrder
            )
        except RequestFailed:
            replaced.status = "lost"
            continue
        replaced.status = "restored"
    if report.replaced:
        yield from game.cache.refresh_objects(sorted({r.fleet_id for r in report.replaced}))


def _order_name(game: TaeGame, type_id: int) -> str:
    try:
        return game.order_desc(type_id).name
    except KeyError:
        return str(type_id)


def _target_dict(target_id: int | None, xy: tuple[int, int] | None) -> dict[str, object] | None:
    if target_id is None:
        return None
    return {"id": target_id, "x": xy[0] if xy else None, "y": xy[1] if xy else None}


def _count(items, noun: str) -> str:
    n = len(items)
    return f"{n} {noun}" + ("" if n == 1 else "s")
