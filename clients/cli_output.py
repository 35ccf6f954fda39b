"""What ``tae-client`` shows for fleets, orders, messages and submissions: the data of each (the
``--json`` form, with stable keys) and its rendering with rich; and the console and JSON
helpers every command uses. ``status`` is ``clients.cli_status``, ``board`` ``clients.cli_board``.

Every ``*_data`` function reads a ``TaeGame`` (and the cache under it) and returns plain
JSON-able data; every ``render_*`` function draws that same data, so the text and the JSON
never disagree. Nothing here talks to the server.
"""

from __future__ import annotations

import json

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from protocol import ObjectArg, Order

from .fleet_refs import fleet_ref
from .game_api import TaeGame
from .tae_model import ColonyKind, FleetView

__all__ = [
    "dump_json",
    "fleets_data",
    "make_console",
    "messages_data",
    "order_name",
    "orders_data",
    "render_fleets",
    "render_messages",
    "render_orders",
    "render_submission",
]

_KIND_STYLE = {
    ColonyKind.MERCHANT: "green",
    ColonyKind.SCIENTIST: "red",
    ColonyKind.SETTLER: "bright_white",
    ColonyKind.MINING: "blue",
}


def make_console(color: bool | None, *, stderr: bool = False, width: int | None = None) -> Console:
    """A console for our output: no markup or highlighting of server text; ``color`` True
    forces colour, False turns it off, None decides by the terminal and ``NO_COLOR``."""
    return Console(
        stderr=stderr,
        force_terminal=True if color else None,
        no_color=(color is False) or None,
        color_system="auto" if color is not False else None,
        markup=False,
        highlight=False,
        emoji=False,
        width=width,
        soft_wrap=True,  # long lines are not cut or folded; tables still fit the width
    )


def dump_json(data: object) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False)


# ------------------------------------------------------------------------------------------------
# fleets and orders
# ------------------------------------------------------------------------------------------------


def fleets_data(game: TaeGame, *, everyone: bool = False) -> list[dict]:
    fleets = game.fleets() if everyone else game.my_fleets()
    return [_fleet_dict(game, fleet) for fleet in fleets]


def _fleet_dict(game: TaeGame, fleet: FleetView) -> dict:
    return {
        "id": fleet.id,
        "ref": fleet_ref(fleet),
        "name": fleet.name,
        "kind": fleet.kind.value,
        "type": fleet.colony_kind.value if fleet.colony_kind else None,
        "owner": fleet.owner,
        "owner_name": game.player_name(fleet.owner),
        "mine": fleet.owner is not None and fleet.owner == game.player_id,
        "system": fleet.system_id,
        "position": list(fleet.position) if fleet.position else None,
        "allowed": [order_name(game, t) for t in fleet.order_types],
        "orders": [_order_dict(game, fleet, slot, order) for slot, order in enumerate(fleet.orders)],
    }


def orders_data(game: TaeGame) -> list[dict]:
    return [
        _order_dict(game, fleet, slot, order)
        for fleet in game.my_fleets()
        for slot, order in enumerate(fleet.orders)
    ]


def _order_dict(game: TaeGame, fleet: FleetView, slot: int, order: Order | None) -> dict:
    if order is None:
        return {
            "fleet": fleet.id,
            "fleet_ref": fleet_ref(fleet),
            "slot": slot,
            "order": None,
            "order_type": None,
            "target": None,
        }
    target_id = next((a.object_id for a in order.args if isinstance(a, ObjectArg)), None)
    return {
        "fleet": fleet.id,
        "fleet_ref": fleet_ref(fleet),
        "slot": slot,
        "order": order_name(game, order.type),
        "order_type": order.type,
        "target": _target(game, target_id),
    }


def _target(game: TaeGame, target_id: int | None) -> dict | None:
    if target_id is None:
        return None
    obj = game.cache.objects.get(target_id)
    for view in game.systems().values():
        if view.id == target_id:
            return {"id": target_id, "x": view.x, "y": view.y, "name": view.name}
    return {"id": target_id, "x": None, "y": None, "name": obj.name if obj else None}


def order_name(game: TaeGame, type_id: int) -> str:
    desc = game.cache.order_descs.get(type_id)
    return desc.name if desc is not None else str(type_id)


def _target_text(target: dict | None) -> str:
    if target is None:
        return ""
    if target["x"] is not None:
        return f"{target['x']},{target['y']}"
    return f"#{target['id']}" + (f" {target['name']}" if target["name"] else "")


def render_fleets(console: Console, data: list[dict], *, everyone: bool = False) -> None:
    if not data:
        console.print("no fleets")
        return
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("id", justify="right")
    table.add_column("fleet")
    if everyone:
        table.add_column("owner")
    table.add_column("where")
    table.add_column("may")
    table.add_column("orders")
    for fleet in data:
        style = _KIND_STYLE.get(ColonyKind(fleet["type"])) if fleet["type"] else None
        name = Text(fleet["ref"], style=style or "")
        where = f"{fleet['position'][0]},{fleet['position'][1]}" if fleet["position"] else "home"
        orders = (
            "; ".join(f"{o['order']} {_target_text(o['target'])}".strip() for o in fleet["orders"]) or "-"
        )
        row: list[str | Text] = [str(fleet["id"]), name]
        if everyone:
            row.append(fleet["owner_name"] or str(fleet["owner"]))
        row += [where, ", ".join(fleet["allowed"]) or "-", orders]
        table.add_row(*row)
    console.print(table)


def render_orders(console: Console, data: list[dict]) -> None:
    if not data:
        console.print("no orders queued")
        return
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("fleet", justify="right")
    table.add_column("name")
    table.add_column("slot", justify="right")
    table.add_column("order")
    table.add_column("target")
    for order in data:
        table.add_row(
            str(order["fleet"]),
            order["fleet_ref"],
            str(order["slot"]),
            order["order"] or "?",
            _target_text(order["target"]),
        )
    console.print(table)


# ------------------------------------------------------------------------------------------------
# messages
# ------------------------------------------------------------------------------------------------


def messages_data(game: TaeGame, *, subject: str | None = None, since_turn: int | None = None) -> list[dict]:
    found = []
    for message in game.messages():
        if subject is not None and subject.lower() not in message.subject.lower():
            continue
        if since_turn is not None and message.turn < since_turn:
            continue
        found.append(
            {
                "board": message.board,
                "slot": message.slot,
                "turn": message.turn,
                "subject": message.subject,
                "body": message.body,
            }
        )
    return found


def render_messages(console: Console, data: list[dict]) -> None:
    if not data:
        console.print("no messages")
        return
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_lines=False)
    table.add_column("turn", justify="right")
    table.add_column("subject", style="bold")
    table.add_column("message")
    for message in data:
        table.add_row(str(message["turn"]), message["subject"], message["body"].strip())
    console.print(table)


# ------------------------------------------------------------------------------------------------
# submission
# ------------------------------------------------------------------------------------------------

_STATUS_STYLE = {
    "inserted": "green",
    "accepted": "green",
    "refused": "bold red",
    "unresolved": "bold red",
    "rolled-back": "yellow",
    "not-sent": "bright_black",
    "left-queued": "bold red",
}


def render_submission(console: Console, report: dict) -> None:
    headline = Text(
        "ok: " if report["ok"] else "refused: ", style="bold green" if report["ok"] else "bold red"
    )
    headline.append(report["message"], style="")
    console.print(headline)
    if report["replaced"]:
        console.print(
            f"replaced {len(report['replaced'])} queued order(s): "
            + ", ".join(f"{r['order']} by {r['fleet']} ({r['status']})" for r in report["replaced"])
        )
    if not report["orders"]:
        return
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("#", justify="right")
    table.add_column("order")
    table.add_column("fleet")
    table.add_column("target")
    table.add_column("status")
    for order in report["orders"]:
        fleet = f"{order['fleet']} {order['fleet_ref']}" if order["fleet"] is not None else "-"
        table.add_row(
            str(order["entry"]),
            order["order"],
            fleet,
            _submitted_target(order["target"]),
            Text(order["status"], style=_STATUS_STYLE.get(order["status"], "")),
        )
    console.print(table)
    for order in report["orders"]:
        if order["reason"]:
            line = Text(f"order {order['entry']} ", style="bold")
            line.append(f"({order['order']}", style="")
            if order["fleet"] is not None:
                line.append(f" by {order['fleet']} {order['fleet_ref']}")
            target = _submitted_target(order["target"])
            if target:
                line.append(f" → {target}")
            line.append("): ")
            line.append(order["status"], style=_STATUS_STYLE.get(order["status"], ""))
            line.append(f": {order['reason']}")
            console.print(line)


def _submitted_target(target: dict | None) -> str:
    if target is None:
        return ""
    return f"{target['x']},{target['y']}" if target["x"] is not None else f"#{target['id']}"
