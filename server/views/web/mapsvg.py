"""The galaxy as an SVG picture: one group per star system, regions outlined, tooltips.

The picture is built as text (a 64×64 board has 4096 systems; a template engine would be ten
times slower), and every piece of player-chosen text in it goes through `escape`. Players get
fixed colours by id (`owner_colour`); the page's CSS and the legend use the same ones. Each
system group carries `data-id` (its star-system object id), which the player page's script sends
as an order's target.
"""

from __future__ import annotations

from html import escape

from ruleset import Kind
from server.views.web.galaxy import KIND_LETTERS, Galaxy, SystemView, describe

CELL = 20
PALETTE = (
    "#e6194b",
    "#3cb44b",
    "#ffe119",
    "#4363d8",
    "#f58231",
    "#911eb4",
    "#46f0f0",
    "#f032e6",
    "#bcf60c",
    "#fabebe",
    "#008080",
    "#e6beff",
)
KIND_CLASSES = ("merchant", "scientist", "settler", "mining")

STYLE = (
    "<style>"
    ".cell{fill:#1b2436;stroke:#0b1020;stroke-width:1}"
    ".t-M .cell{fill:#4a4f5c}"
    ".t-A .cell{fill:#2a2440}"
    ".destroyed .cell{fill:#050608}"
    ".x{stroke:#a33;stroke-width:2}"
    ".col{stroke:#0b1020;stroke-width:1}"
    ".col.merchant{fill:#2fbf5b}.col.scientist{fill:#e04848}"
    ".col.settler{fill:#4c8df0}.col.mining{fill:#c9a24a}"
    ".art{fill:#ffd700;stroke:#7a5c00;stroke-width:.8}"
    ".spent{fill:none;stroke:#ffd700;stroke-width:1.2;stroke-dasharray:2 2}"
    ".ldr{stroke:#fff;stroke-width:1.6}"
    ".unif{fill:none;stroke:#ff9d00;stroke-width:2.4;stroke-dasharray:3 2}"
    ".region{fill:none;stroke:#dfe6ff;stroke-opacity:.85;stroke-width:1.6;stroke-linecap:round}"
    ".lbl{font:bold 8px sans-serif;fill:#0b1020;text-anchor:middle;pointer-events:none}"
    ".mine{fill:none;stroke:#fff;stroke-width:2.5;pointer-events:none}"
    ".sys:hover .cell{stroke:#fff}"
    "</style>"
)


def owner_colour(player: int) -> str:
    return PALETTE[(player - 1) % len(PALETTE)] if player > 0 else "#999"


def render_map(
    picture: Galaxy,
    overlay: str = "",
    label: str = "Galaxy map",
    standalone: bool = False,
    painter: SystemPainter | None = None,
) -> str:
    """The whole `<svg>` element; `overlay` is extra SVG drawn on top (a player's own orders).
    Pages style the map with /static/map.css (`STYLE`); a `standalone` picture carries it."""
    style = STYLE if standalone else ""
    return map_head(picture, label) + style + map_body(picture, painter) + overlay + "</svg>"


def map_head(picture: Galaxy, label: str = "Galaxy map") -> str:
    width, height = picture.width * CELL, picture.height * CELL
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="galaxy" viewBox="0 0 {width} {height}" '
        f'preserveAspectRatio="xMidYMid meet" role="img" aria-label="{escape(label)}">'
    )


def map_body(picture: Galaxy, painter: SystemPainter | None = None) -> str:
    """The systems and region outlines (everything but the `<svg>` tag and any overlay)."""
    top = picture.height
    names = picture.names
    if painter is None:
        parts = [_system(system, top, names) for system in picture.systems]
    else:
        parts = [painter.paint(system, top, names) for system in picture.systems]
    for region, edges in picture.outlines:
        d = "".join(
            f"M{x1 * CELL} {(top - y1) * CELL}L{x2 * CELL} {(top - y2) * CELL}" for x1, y1, x2, y2 in edges
        )
        parts.append(f'<path class="region" data-region="{region}" d="{d}"/>')
    return "".join(parts)


class SystemPainter:
    """Keeps the SVG of each system drawn for one game: between two turns most systems do not
    change, so a new snapshot's map redraws only the ones that did."""

    def __init__(self, limit: int = 20_000):
        self.limit = limit
        self.drawn: dict[tuple, str] = {}

    def paint(self, system: SystemView, top: int, names: dict[int, str]) -> str:
        owner = names.get(system.leader.owner) if system.leader is not None else None
        key = (system, top, owner)
        svg = self.drawn.get(key)
        if svg is None:
            if len(self.drawn) >= self.limit:
                self.drawn.clear()
            svg = self.drawn[key] = _system(system, top, names)
        return svg


def cell_centre(x: int, y: int, height: int) -> tuple[int, int]:
    return x * CELL + CELL // 2, (height - 1 - y) * CELL + CELL // 2


def _system(system: SystemView, top: int, names: dict[int, str]) -> str:
    x0 = system.x * CELL
    y0 = (top - 1 - system.y) * CELL
    cx, cy = x0 + CELL // 2, y0 + CELL // 2
    classes = f"sys t-{system.terrain if system.terrain != '.' else 'H'}"
    if system.destroyed:
        classes += " destroyed"
    title = describe(system, names)
    if system.leader is not None:  # the only player-chosen text in a system: its owner's name
        title = escape(title)
    out = [
        f'<g class="{classes}" data-id="{system.object_id}"><title>{title}</title>'
        f'<rect class="cell" x="{x0}" y="{y0}" width="{CELL}" height="{CELL}"/>'
    ]
    if system.destroyed:
        out.append(f'<path class="x" d="M{x0 + 4} {y0 + 4}l12 12m0 -12l-12 12"/>')
    if system.colony is not None:
        kind = system.colony
        out.append(f'<circle class="col {KIND_CLASSES[kind]}" cx="{cx}" cy="{cy}" r="6"/>')
        out.append(f'<text class="lbl" x="{cx}" y="{cy + 3}">{KIND_LETTERS[kind]}</text>')
    if system.terrain == "A":
        if system.artifact:
            out.append(
                f'<path class="art" d="M{cx} {y0 + 1}l2 3.5 3.5 -.5 -2 3 -3.5 -1 -3.5 1 -2 -3 3.5 .5z"/>'
            )
        else:
            out.append(f'<circle class="spent" cx="{cx}" cy="{cy}" r="8.5"/>')
    if system.leader is not None:
        out.append(_leader(system.leader.kind, owner_colour(system.leader.owner), cx, cy))
    if system.unification:
        out.append(f'<rect class="unif" x="{x0 + 2}" y="{y0 + 2}" width="16" height="16"/>')
    out.append("</g>")
    return "".join(out)


def _leader(kind: Kind, colour: str, cx: int, cy: int) -> str:
    letter = f'<text class="lbl" x="{cx}" y="{cy + 3}">{KIND_LETTERS[kind]}</text>'
    if kind is Kind.MERCHANT:
        shape = f'<rect class="ldr" x="{cx - 7}" y="{cy - 7}" width="14" height="14" fill="{colour}"/>'
    elif kind is Kind.SCIENTIST:
        shape = f'<path class="ldr" d="M{cx} {cy - 8}l8 14h-16z" fill="{colour}"/>'
    elif kind is Kind.SETTLER:
        shape = f'<circle class="ldr" cx="{cx}" cy="{cy}" r="7.5" fill="{colour}"/>'
    else:
        shape = f'<path class="ldr" d="M{cx} {cy - 8.5}l8.5 8.5 -8.5 8.5 -8.5 -8.5z" fill="{colour}"/>'
    return f'<g class="leader">{shape}{letter}</g>'


def order_marks(targets: list[tuple[int, int, str]], height: int) -> str:
    """Rings on the systems a player's own orders target: (x, y, order name) each."""
    out = []
    for x, y, title in targets:
        cx, cy = cell_centre(x, y, height)
        out.append(
            f'<circle class="mine" cx="{cx}" cy="{cy}" r="9.5"><title>{escape(title)}</title></circle>'
        )
    return "".join(out)
