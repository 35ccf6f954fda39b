"""What ``tae-client`` shows: the data of each read command (the ``--json`` form, with stable
keys) and its rendering for people with rich (tables, the coloured board).

Every ``*_data`` function reads a ``TaeGame`` (and the cache under it) and returns plain
JSON-able data; every ``render_*`` function draws that same data, so the text and the JSON
never disagree. Nothing here talks to the server.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from rich import box
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from protocol import ObjectArg, Order, Version

from .fleet_refs import fleet_ref
from .game_api import TaeGame
from .tae_model import ColonyKind, FleetView, SystemView

__all__ = [
    "board_data",
    "dump_json",
    "fleets_data",
    "make_console",
    "messages_data",
    "orders_data",
    "render_board",
    "render_fleets",
    "render_messages",
    "render_orders",
    "render_status",
    "render_submission",
    "status_data",
]

ORDERS_PER_TURN = 2  # R11, for the "queued n/2" hint only; the server decides

_KIND_STYLE = {
    ColonyKind.MERCHANT: "green",
    ColonyKind.SCIENTIST: "red",
    ColonyKind.SETTLER: "bright_white",
    ColonyKind.MINING: "blue",
}
_COLONY_LETTER = {
    ColonyKind.MERCHANT: "m",
    ColonyKind.SCIENTIST: "s",
    ColonyKind.SETTLER: "p",
    ColonyKind.MINING: "r",
}
_REGION_BACKGROUNDS = (
    "on grey23",
    "on dark_blue",
    "on dark_green",
    "on dark_red",
    "on purple4",
    "on dark_cyan",
    "on orange4",
    "on deep_pink4",
)
_REGION_TAGS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


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
# status
# ------------------------------------------------------------------------------------------------


def phase_of(game: TaeGame) -> str:
    """ "over", "combat" or "normal". TP04 names a combat turn in TimeRemaining; otherwise a
    turn in which none of my fleets may take any order is a combat turn I am not part of, and
    one in which some may Reinforce is a combat turn I am part of."""
    if game.is_over:
        return "over"
    remaining = game.cache.time_remaining
    if remaining is not None and "combat" in (remaining.turn_name or "").lower():
        return "combat"
    mine = game.my_fleets()
    reinforce = _order_type_id(game, "Reinforce")
    if mine and any(reinforce in f.order_types for f in mine):
        return "combat"
    if mine and not any(f.order_types for f in mine):
        return "combat"
    return "normal"


def status_data(game: TaeGame, *, game_name: str | None, host: str, port: int) -> dict:
    cache = game.cache
    remaining = cache.time_remaining
    waiting: list[int] | None = None
    if remaining is not None and game.version == Version.TP04:
        waiting = list(remaining.waiting)
    players = []
    for player_id in sorted(cache.players):
        player = cache.players[player_id]
        players.append(
            {
                "id": player.id,
                "name": player.name,
                "me": player.id == game.player_id,
                "waiting": None if waiting is None else player.id in waiting,
            }
        )
    scores = game.scores()
    over = game.game_over
    queued = sum(1 for f in game.my_fleets() if f.orders)
    time_left = game.time_remaining
    return {
        "server": {"host": host, "port": port, "protocol": game.version.name.lower()},
        "game": game_name,
        "player": {"id": game.player_id, "name": game.player_name(game.player_id)},
        "turn": game.turn,
        "turn_name": (remaining.turn_name or None)
        if remaining is not None and game.version == Version.TP04
        else None,
        "phase": phase_of(game),
        "time_left": None if time_left is None or time_left < 0 else time_left,
        "players": players,
        "waiting_for": None if waiting is None else [game.player_name(pid) or str(pid) for pid in waiting],
        "orders_queued": queued,
        "scores": _scores_dict(scores),
        "game_over": {"turn": over.turn, "message": over.body} if over else None,
    }


def _scores_dict(scores) -> dict | None:
    if scores is None:
        return None
    return {
        "money": scores.money,
        "technology": scores.technology,
        "people": scores.people,
        "raw_materials": scores.raw_materials,
        "artifacts": scores.artifacts,
        "final": scores.final,
        "turn": scores.turn,
    }


def render_status(console: Console, data: dict) -> None:
    table = Table(box=None, show_header=False, pad_edge=False)
    table.add_column(style="bold")
    table.add_column()
    server = data["server"]
    player = data["player"]
    table.add_row("server", f"{server['host']}:{server['port']} ({server['protocol']})")
    if data["game"]:
        table.add_row("game", data["game"])
    table.add_row("player", f"{player['name'] or '?'} (id {player['id']})")
    table.add_row("turn", f"{data['turn']}")
    phase = Text(data["phase"])
    if data["phase"] == "combat":
        phase.stylize("bold yellow")
    elif data["phase"] == "over":
        phase.stylize("bold red")
    table.add_row("phase", phase)
    table.add_row("time left", format_seconds(data["time_left"]))
    if data["phase"] != "over":
        table.add_row(
            "my orders",
            f"{data['orders_queued']} queued (at most {ORDERS_PER_TURN})"
            if data["phase"] == "normal"
            else f"{data['orders_queued']} queued",
        )
    if data["players"]:
        parts = []
        for player in data["players"]:
            name = player["name"] + (" (me)" if player["me"] else "")
            if player["waiting"] is None:
                parts.append(Text(name))
            elif player["waiting"]:
                parts.append(Text(f"{name}: playing", style="yellow"))
            else:
                parts.append(Text(f"{name}: finished", style="green"))
        table.add_row("players", Text(", ").join(parts))
    scores = data["scores"]
    if scores:
        table.add_row(
            "scores",
            f"M {scores['money']}  T {scores['technology']}  P {scores['people']}  "
            f"R {scores['raw_materials']}  A {scores['artifacts']}  (final {scores['final']})",
        )
    else:
        table.add_row("scores", "none yet")
    console.print(table)
    if data["game_over"]:
        console.print(Text("GAME OVER", style="bold red"))
        console.print(data["game_over"]["message"])


def format_seconds(seconds: int | None) -> str:
    if seconds is None:
        return "no deadline"
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours}h {minutes:02d}m {secs:02d}s"
    if minutes:
        return f"{minutes}m {secs:02d}s"
    return f"{secs}s"


# ------------------------------------------------------------------------------------------------
# board
# ------------------------------------------------------------------------------------------------


def board_data(game: TaeGame) -> dict:
    systems = game.systems()
    width, height = game.board_size()
    fleets = {f.id: f for f in game.fleets()}
    tags = _region_tags(systems.values())
    squares = []
    for x, y in sorted(systems, key=lambda p: (p[1], p[0])):
        view = systems[(x, y)]
        squares.append(
            {
                "id": view.id,
                "x": x,
                "y": y,
                "name": view.name,
                "terrain": view.terrain,
                "habitable": view.habitable,
                "destroyed": view.destroyed,
                "colony": view.colony.value if view.colony else None,
                "artifact": view.artifact,
                "region": view.region,
                "leaders": [_leader_dict(game, fleets[i]) for i in view.leaders if i in fleets],
            }
        )
    regions = []
    for region_id, positions in sorted(game.regions().items()):
        members = [systems[p] for p in sorted(positions, key=lambda p: (p[1], p[0]))]
        regions.append(
            {
                "id": region_id,
                "tag": tags.get(region_id),
                "systems": [[v.x, v.y] for v in members],
                "colonies": {kind.value: sum(1 for v in members if v.colony is kind) for kind in ColonyKind},
                "artifacts": sum(1 for v in members if v.artifact),
                "leaders": [_leader_dict(game, fleets[i]) for v in members for i in v.leaders if i in fleets],
            }
        )
    return {
        "turn": game.turn,
        "width": width,
        "height": height,
        "regions_from_server": game.regions_from_server,
        "rows": game.render().splitlines(),
        "systems": squares,
        "regions": regions,
    }


def _leader_dict(game: TaeGame, fleet: FleetView) -> dict:
    return {
        "id": fleet.id,
        "type": fleet.colony_kind.value if fleet.colony_kind else None,
        "owner": fleet.owner,
        "owner_name": game.player_name(fleet.owner),
        "mine": fleet.owner is not None and fleet.owner == game.player_id,
    }


def _region_tags(views: Iterable[SystemView]) -> dict[int, str | None]:
    """A letter for every region of two or more systems or with a leader (a lone colony or
    artifact system is a region too, but tagging each would only add noise)."""
    members: dict[int, list[SystemView]] = {}
    for view in views:
        if view.region:
            members.setdefault(view.region, []).append(view)
    tags: dict[int, str | None] = {}
    letters = iter(_REGION_TAGS)
    for region in sorted(members):
        notable = len(members[region]) > 1 or any(v.leaders for v in members[region])
        tags[region] = next(letters, "+") if notable else None
    return tags


def _cell(square: dict, region_style: str, color: bool) -> Text:
    """Three characters: two for what is on the square, one for its region's tag."""
    tag = square.get("_tag") or " "
    if square["destroyed"]:
        glyph, style = "##", "bold bright_red"
    elif square["leaders"]:
        leader = square["leaders"][0]
        owner = leader["owner"]
        digit = str(owner) if isinstance(owner, int) and 0 < owner < 10 else "+"
        letter = _COLONY_LETTER[ColonyKind(leader["type"])].upper() if leader["type"] else "L"
        glyph = f"{digit}{letter}"
        style = (
            f"bold reverse {_KIND_STYLE[ColonyKind(leader['type'])]}" if leader["type"] else "bold reverse"
        )
    elif square["artifact"]:
        glyph, style = "A ", "bold yellow"
    elif square["colony"]:
        kind = ColonyKind(square["colony"])
        glyph, style = f"{_COLONY_LETTER[kind]} ", f"bold {_KIND_STYLE[kind]}"
    elif not square["habitable"]:
        glyph, style = "~~", "cyan"
    else:
        glyph, style = ". ", "bright_black"
    text = Text(glyph, style=style)
    text.append(tag, style="bold" if tag != " " else "")
    if color and region_style:
        text.stylize(region_style)
    return text


def render_board(console: Console, data: dict, *, color: bool = True) -> None:
    by_position = {(s["x"], s["y"]): s for s in data["systems"]}
    tags = {r["id"]: r["tag"] for r in data["regions"]}
    tagged = sorted(region for region, tag in tags.items() if tag)
    backgrounds = {
        region: _REGION_BACKGROUNDS[i % len(_REGION_BACKGROUNDS)] for i, region in enumerate(tagged)
    }
    width, height = data["width"], data["height"]
    lines = []
    for y in reversed(range(height)):
        line = Text(f"{y:>3} ")
        for x in range(width):
            square = by_position.get((x, y))
            if square is None:
                line.append("    ")
                continue
            square = dict(square, _tag=tags.get(square["region"]) if square["region"] else None)
            line.append_text(_cell(square, backgrounds.get(square["region"], ""), color))
            line.append(" ")
        lines.append(line)
    axis = Text("    ")
    for x in range(width):
        axis.append(f"{x:<4}")
    lines.append(Text(axis.plain.rstrip(), style="bright_black"))
    console.print(Group(*lines))
    console.print(Text(f"turn {data['turn']}; row 0 at the bottom", style="bright_black"))
    legend = Text("  ")
    legend.append(". ", style="bright_black")
    legend.append(" empty   ")
    legend.append("~~", style="cyan")
    legend.append(" uninhabitable (map M: mining colonists only)   ")
    legend.append("##", style="bold bright_red")
    legend.append(" destroyed")
    console.print(legend)
    colonies = Text("  ")
    colonies.append("A ", style="bold yellow")
    colonies.append(" artifact (a scientist colony)  ")
    for kind in ColonyKind:
        colonies.append(" " + _COLONY_LETTER[kind], style=f"bold {_KIND_STYLE[kind]}")
        colonies.append(f" {kind.value}")
    console.print(colonies)
    leaders = Text("  ")
    leaders.append("1S", style="bold reverse red")
    leaders.append(" leader: owner's player id, then M/S/P/R (merchant … mining)")
    console.print(leaders)
    notable = [r for r in data["regions"] if r["tag"]]
    if notable:
        console.print(Text("  regions (the letter after a square):"))
        for region in notable:
            style = f"bold {backgrounds.get(region['id'], '')}" if color else "bold"
            line = Text("    ")
            line.append(region["tag"], style=style)
            counts = ", ".join(f"{n} {kind}" for kind, n in region["colonies"].items() if n) or "no colonies"
            leaders_text = ", ".join(_leader_label(leader) for leader in region["leaders"]) or "none"
            line.append(
                f" region {region['id']}: {_plural(len(region['systems']), 'system')} "
                f"({counts}), {_plural(region['artifacts'], 'artifact')}; "
                f"leaders: {leaders_text}"
            )
            console.print(line)
    lone = len(data["regions"]) - len(notable)
    if lone:
        console.print(Text(f"  and {_plural(lone, 'region')} of a single colony, untagged"))
    if not data["regions_from_server"]:
        console.print(Text("  (TP03: regions computed by the client)", style="bright_black"))


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _leader_label(leader: dict) -> str:
    owner = leader["owner_name"] or f"player {leader['owner']}"
    return f"{owner}'s {leader['type'] or '?'}"


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
        "allowed": [_order_name(game, t) for t in fleet.order_types],
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
        "order": _order_name(game, order.type),
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


def _order_name(game: TaeGame, type_id: int) -> str:
    desc = game.cache.order_descs.get(type_id)
    return desc.name if desc is not None else str(type_id)


def _order_type_id(game: TaeGame, name: str) -> int | None:
    try:
        return game.order_desc(name).id
    except KeyError:
        return None


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
        row = [str(fleet["id"]), name]
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
