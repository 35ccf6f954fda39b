"""``tae-client board``: the board as data (the ``--json`` form) and drawn with rich, in colour:
colonies by type, leaders with their owner, artifacts, destroyed systems and tagged regions."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console, Group
from rich.text import Text

from .game_api import TaeGame
from .tae_model import ColonyKind, FleetView, SystemView

__all__ = ["KIND_STYLE", "board_data", "render_board"]

KIND_STYLE = {
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
        style = f"bold reverse {KIND_STYLE[ColonyKind(leader['type'])]}" if leader["type"] else "bold reverse"
    elif square["artifact"]:
        glyph, style = "A ", "bold yellow"
    elif square["colony"]:
        kind = ColonyKind(square["colony"])
        glyph, style = f"{_COLONY_LETTER[kind]} ", f"bold {KIND_STYLE[kind]}"
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
        colonies.append(" " + _COLONY_LETTER[kind], style=f"bold {KIND_STYLE[kind]}")
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
