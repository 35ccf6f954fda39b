"""``tae-client order …``: insert, probe or remove single orders.

Fleets and targets are named as in turn files (``clients.fleet_refs``). A refusal is exit 1 with
the server's reason (for a probe, also in the ``--json`` document), and, when the fleet cannot
take that order type at all, the types it can take.
"""

from __future__ import annotations

import click

from protocol import Fail, Order

from .blocking import BlockingClient
from .cli_runtime import (
    EXIT_REFUSED,
    EXIT_USAGE,
    CliError,
    emit_json,
    json_option,
    refuse_when_over,
    runtime,
    say,
)
from .errors import RequestFailed
from .fleet_refs import FleetPicker, fleet_ref, parse_fleet_selector, parse_target, resolve_target
from .turn_file import ORDER_TYPES, parse_order_type

__all__ = ["order_group"]


@click.group("order")
def order_group():
    """Insert, probe or remove single orders."""


def _pick_fleet(client: BlockingClient, text: str, *, with_orders: bool = False):
    try:
        selector = parse_fleet_selector(text)
    except ValueError as error:
        raise CliError(EXIT_USAGE, str(error)) from None
    picker = FleetPicker(client.game)
    if with_orders and not selector.by_id:
        found = sorted(picker.candidates(selector), key=lambda f: (not f.orders, f.id))
        if found:
            return found[0]
    try:
        return picker.pick(selector)
    except LookupError as error:
        raise CliError(EXIT_REFUSED, str(error.args[0])) from None


def _order_and_target(client: BlockingClient, order_text: str, target_text: str | None):
    try:
        order_type = parse_order_type(order_text)
    except ValueError as error:
        raise CliError(EXIT_USAGE, str(error)) from None
    name, takes_target = ORDER_TYPES[order_type]
    if takes_target and target_text is None:
        raise CliError(EXIT_USAGE, f"{name} needs a TARGET (x,y or a star system id)")
    if not takes_target and target_text is not None:
        raise CliError(EXIT_USAGE, f"{name} takes no TARGET")
    target_id = None
    if target_text is not None:
        try:
            target = parse_target(target_text)
        except ValueError as error:
            raise CliError(EXIT_USAGE, str(error)) from None
        try:
            target_id = resolve_target(client.game, target)
        except LookupError as error:  # as in a turn file: the game, not the syntax, says no
            raise CliError(EXIT_REFUSED, str(error.args[0])) from None
    try:
        desc = client.game.order_desc(name)
    except KeyError:
        raise CliError(EXIT_REFUSED, f"the server has no order type {name}") from None
    return desc, target_id


def _refusal(client: BlockingClient, fleet, desc, error: RequestFailed) -> CliError:
    reason = error.fail.message
    allowed = client.game.allowed_orders(fleet.id)
    if desc.id not in {d.id for d in allowed}:
        names = ", ".join(d.name for d in allowed) or "no orders now"
        reason += f" ({fleet_ref(fleet)} {fleet.id} accepts: {names})"
    return CliError(EXIT_REFUSED, f"{desc.name} by {fleet_ref(fleet)} {fleet.id} refused: {reason}")


def _target_text(client: BlockingClient, target_id: int | None) -> str:
    if target_id is None:
        return ""
    for view in client.game.systems().values():
        if view.id == target_id:
            return f" → {view.x},{view.y}"
    return f" → #{target_id}"


@order_group.command("insert")
@click.argument("fleet")
@click.argument("order")
@click.argument("target", required=False)
@click.option(
    "--slot", type=int, default=-1, show_default=True, help="Where in the fleet's queue (-1: at the end)."
)
@json_option
def order_insert(fleet, order, target, slot, as_json):
    """Queue ORDER for FLEET, at TARGET (x,y or a system id)."""
    run = runtime()
    client = run.client()
    refuse_when_over(client)
    view = _pick_fleet(client, fleet)
    desc, target_id = _order_and_target(client, order, target)
    try:
        reply = client.insert_order(view.id, desc.id, target_id, slot=slot)
    except RequestFailed as error:
        raise _refusal(client, view, desc, error) from None
    slot_used = reply.slot if isinstance(reply, Order) else len(client.game.fleet(view.id).orders) - 1
    data = {
        "inserted": True,
        "fleet": view.id,
        "fleet_ref": fleet_ref(view),
        "order": desc.name,
        "order_type": desc.id,
        "target": target_id,
        "slot": slot_used,
    }
    if run.wants_json(as_json):
        emit_json(data)
    else:
        click.echo(
            f"inserted {desc.name} by {fleet_ref(view)} {view.id}"
            f"{_target_text(client, target_id)} (slot {slot_used})"
        )


@order_group.command("probe")
@click.argument("fleet")
@click.argument("order")
@click.argument("target", required=False)
@json_option
def order_probe(fleet, order, target, as_json):
    """Ask whether the server would accept ORDER for FLEET (nothing is queued)."""
    run = runtime()
    client = run.client()
    refuse_when_over(client)
    view = _pick_fleet(client, fleet)
    desc, target_id = _order_and_target(client, order, target)
    try:
        client.probe_order(view.id, desc.id, target_id)
    except RequestFailed as error:
        refusal = _refusal(client, view, desc, error)
        if run.wants_json(as_json):
            emit_json(
                {
                    "accepted": False,
                    "fleet": view.id,
                    "order": desc.name,
                    "target": target_id,
                    "reason": refusal.message,
                    "code": error.code,
                }
            )
        raise refusal from None
    if run.wants_json(as_json):
        emit_json(
            {
                "accepted": True,
                "fleet": view.id,
                "order": desc.name,
                "target": target_id,
                "reason": None,
                "code": None,
            }
        )
    else:
        click.echo(
            f"the server would accept {desc.name} by {fleet_ref(view)} {view.id}"
            f"{_target_text(client, target_id)}"
        )


@order_group.command("remove")
@click.argument("fleet")
@click.argument("slots", nargs=-1, type=click.IntRange(min=0))
@json_option
def order_remove(fleet, slots, as_json):
    """Remove FLEET's orders (all, or the given SLOTS)."""
    run = runtime()
    client = run.client()
    view = _pick_fleet(client, fleet, with_orders=True)
    count = len(view.orders)
    wanted = sorted(set(slots)) if slots else list(range(count))
    if not wanted:
        result = {"fleet": view.id, "fleet_ref": fleet_ref(view), "removed": [], "failed": []}
        say(run, as_json, result, f"{fleet_ref(view)} {view.id} has no orders")
        return
    results = client.remove_orders(view.id, wanted)
    ordered = sorted(wanted, reverse=True)
    removed = [s for s, r in zip(ordered, results) if not isinstance(r, Fail)]
    failed = [{"slot": s, "reason": r.message} for s, r in zip(ordered, results) if isinstance(r, Fail)]
    data = {"fleet": view.id, "fleet_ref": fleet_ref(view), "removed": sorted(removed), "failed": failed}
    text = f"removed {len(removed)} order(s) from {fleet_ref(view)} {view.id}"
    say(run, as_json, data, text)
    if failed:
        raise CliError(EXIT_REFUSED, "; ".join(f"slot {f['slot']}: {f['reason']}" for f in failed))


@order_group.command("clear")
@json_option
def order_clear(as_json):
    """Remove every order queued on my fleets this turn."""
    run = runtime()
    client = run.client()
    removed, failed = 0, []
    for view in client.game.my_fleets():
        if not view.orders:
            continue
        for result in client.remove_orders(view.id):
            if isinstance(result, Fail):
                failed.append(f"{fleet_ref(view)} {view.id}: {result.message}")
            else:
                removed += 1
    say(run, as_json, {"removed": removed, "failed": failed}, f"removed {removed} order(s)")
    if failed:
        raise CliError(EXIT_REFUSED, "could not remove: " + "; ".join(failed))
