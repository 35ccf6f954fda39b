"""The galaxy as an SVG picture: one group per star system, regions outlined, tooltips.

The picture is built as text (a 64×64 board has 4096 systems; a template engine would be ten
times slower), and every piece of player-chosen text in it goes through `escape`. Colours come
from `server.views.web.palette` only, through classes: a colony or a leader is *filled* with its
kind's colour and carries its kind's letter; a leader is *outlined* in its owner's colour and
wears a badge with the owner's number. Row numbers run up the left edge and column numbers
along the bottom, the same "x, y" as every message, the history and `tae-client board`.
Each system group carries `data-id` (its star-system object id), which the player page's
script sends as an order's target.

Overlays drawn on top, per viewer: `own_marks` (corner marks on the viewer's own leaders),
`order_marks` (each pending order: a dashed ghost of what it will place, its number). The
fighters of a combat turn and the place they fight over are part of the public picture
(`Galaxy.combat`).
"""

from __future__ import annotations

from html import escape

from ruleset import Kind
from server.views.web.galaxy import KIND_LETTERS, Galaxy, SystemView, describe
from server.views.web.palette import KIND_CLASSES, player_class, player_colour, stylesheet

CELL = 20
GUTTER_LEFT = 16  # the row numbers
GUTTER_BOTTOM = 13  # the column numbers
GUTTER_TOP = 4  # room for the badges of the top row

STYLE = "<style>" + stylesheet() + "</style>"
#: Uninhabitable systems are striped, so that terrain never rests on colour alone.
DEFS = (
    '<defs><pattern id="hatch" width="5" height="5" patternUnits="userSpaceOnUse" '
    'patternTransform="rotate(45)"><rect class="hatch-bg" width="5" height="5"/>'
    '<line class="hatch-line" x1="0" y1="0" x2="0" y2="5"/></pattern></defs>'
)


def owner_colour(player: int) -> str:
    """A player's colour (`server.views.web.palette.player_colour`)."""
    return player_colour(player)


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
        f'<svg xmlns="http://www.w3.org/2000/svg" class="galaxy" '
        f'viewBox="{-GUTTER_LEFT} {-GUTTER_TOP} {width + GUTTER_LEFT} {height + GUTTER_TOP + GUTTER_BOTTOM}" '
        f'data-columns="{picture.width}" data-rows="{picture.height}" '
        f'preserveAspectRatio="xMidYMid meet" role="img" aria-label="{escape(label)}">'
    )


def map_body(picture: Galaxy, painter: SystemPainter | None = None) -> str:
    """The systems, region outlines, coordinates and combat marks (everything but the `<svg>`
    tag and a viewer's overlay)."""
    top = picture.height
    names = picture.names
    parts = [DEFS]
    if painter is None:
        parts += [_system(system, top, names) for system in picture.systems]
    else:
        parts += [painter.paint(system, top, names) for system in picture.systems]
    for region, edges in picture.outlines:
        d = "".join(
            f"M{x1 * CELL} {(top - y1) * CELL}L{x2 * CELL} {(top - y2) * CELL}" for x1, y1, x2, y2 in edges
        )
        parts.append(f'<path class="region" data-region="{region}" d="{d}"/>')
    # leaders above the outlines, so that a region's edge never crosses a badge; clicks go
    # through them to their system
    leaders = "".join(
        leader_glyph(s.leader.kind, s.leader.owner, *cell_centre(s.x, s.y, top), s.object_id)
        for s in picture.systems
        if s.leader is not None
    )
    parts.append(f'<g class="leaders">{leaders}</g>')
    parts.append(axes(picture.width, picture.height))
    if picture.combat is not None:
        parts.append(combat_marks(picture, top))
    return "".join(parts)


def axes(width: int, height: int) -> str:
    """Row numbers (y, row 0 at the bottom) on the left, column numbers (x) along the bottom,
    each on a strip of space: when the map is zoomed, the page's script slides the strips along
    so that they stay at the edges of what is shown (`/static/live.js`)."""
    rows = "".join(
        f'<text class="row" x="-3" y="{(height - 1 - y) * CELL + CELL // 2 + 3}">{y}</text>'
        for y in range(height)
    )
    columns = "".join(
        f'<text class="col-n" x="{x * CELL + CELL // 2}" y="{height * CELL + 10}">{x}</text>'
        for x in range(width)
    )
    full_width, full_height = width * CELL + GUTTER_LEFT, height * CELL + GUTTER_TOP + GUTTER_BOTTOM
    return (
        f'<g class="axis axis-columns" aria-hidden="true"><rect class="axis-bg" x="{-GUTTER_LEFT}" '
        f'y="{height * CELL}" width="{full_width}" height="{GUTTER_BOTTOM}"/>{columns}</g>'
        f'<g class="axis axis-rows" aria-hidden="true"><rect class="axis-bg" x="{-GUTTER_LEFT}" '
        f'y="{-GUTTER_TOP}" width="{GUTTER_LEFT}" height="{full_height}"/>{rows}</g>'
    )


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
    terrain = system.terrain if system.terrain != "." else "H"
    classes = f"sys t-{terrain}"
    if system.destroyed:
        classes += " destroyed"
    title = describe(system, names)
    if system.leader is not None:  # the only player-chosen text in a system: its owner's name
        title = escape(title)
    hatch = ' fill="url(#hatch)"' if terrain == "M" else ""
    out = [
        f'<g class="{classes}" data-id="{system.object_id}"><title>{title}</title>'
        f'<rect class="cell" x="{x0}" y="{y0}" width="{CELL}" height="{CELL}"{hatch}/>'
    ]
    if system.destroyed:
        out.append(f'<path class="x" d="M{x0 + 4} {y0 + 4}l12 12m0 -12l-12 12"/>')
    if system.colony is not None:
        kind = system.colony
        out.append(f'<circle class="col k-{KIND_CLASSES[kind]}" cx="{cx}" cy="{cy}" r="6"/>')
        out.append(f'<text class="lbl" x="{cx}" y="{cy + 3}">{KIND_LETTERS[kind]}</text>')
    if system.terrain == "A":
        if system.artifact:
            out.append(
                f'<path class="art" d="M{cx} {y0 + 1}l2 3.5 3.5 -.5 -2 3 -3.5 -1 -3.5 1 -2 -3 3.5 .5z"/>'
            )
        else:
            out.append(f'<circle class="spent" cx="{cx}" cy="{cy}" r="8.5"/>')
    if system.unification:
        out.append(f'<rect class="unif" x="{x0 + 2}" y="{y0 + 2}" width="16" height="16"/>')
    out.append("</g>")
    return "".join(out)


def leader_shape(kind: Kind, cx: float, cy: float, extra: str = "") -> str:
    """A leader's outline, one shape per kind: ■ merchant, ▲ scientist, ⌂ settler, ◆ mining."""
    if kind is Kind.MERCHANT:
        return f'<rect{extra} x="{cx - 7}" y="{cy - 7}" width="14" height="14"/>'
    if kind is Kind.SCIENTIST:
        return f'<path{extra} d="M{cx} {cy - 8.5}l8.5 15h-17z"/>'
    if kind is Kind.SETTLER:
        return f'<path{extra} d="M{cx} {cy - 8.5}l8 6.5v8.5h-16v-8.5z"/>'
    return f'<path{extra} d="M{cx} {cy - 9}l9 9 -9 9 -9 -9z"/>'


def leader_glyph(kind: Kind, owner: int, cx: float, cy: float, at: int | None = None) -> str:
    """A leader: its kind's shape filled with its kind's colour and letter, outlined in its
    owner's colour, with the owner's number on a badge at the top right."""
    halo = leader_shape(kind, cx, cy, ' class="halo"')  # keeps the outline apart from the fill
    shape = leader_shape(kind, cx, cy, f' class="ldr k-{KIND_CLASSES[kind]} {player_class(owner)}"')
    letter = f'<text class="lbl" x="{cx}" y="{cy + 3.5}">{KIND_LETTERS[kind]}</text>'
    where = "" if at is None else f' data-at="{at}"'
    return (
        f'<g class="leader" data-owner="{owner}"{where}>'
        f"{halo}{shape}{letter}{badge(owner, cx + 6.5, cy - 6.5)}</g>"
    )


def badge(player: int, cx: float, cy: float) -> str:
    """A player's number on a disc of their colour (wider for two digits)."""
    number = str(player)
    width = 4.2 + 2.6 * (len(number) - 1)
    disc = (
        f'<rect class="badge {player_class(player)}" x="{cx - width:g}" y="{cy - 4.2:g}" '
        f'width="{2 * width:g}" height="8.4" rx="4.2"/>'
    )
    return f'{disc}<text class="bn" x="{cx:g}" y="{cy + 2.1:g}">{number}</text>'


def combat_marks(picture: Galaxy, top: int) -> str:
    """The combat of this turn: a ring and a tag (A attacks, D defends) on each fighting
    leader, and a burst round the system they fight over (an external conflict's new colony)."""
    assert picture.combat is not None
    out = ['<g class="combat">']
    for cell, tag in ((picture.combat.attacker, "A"), (picture.combat.defender, "D")):
        if cell is None:
            continue
        system = picture.systems[cell]
        out.append(_fight(*cell_centre(system.x, system.y, top), tag))
    if picture.combat.place is not None:
        system = picture.systems[picture.combat.place]
        out.append(_clash(*cell_centre(system.x, system.y, top)))
    out.append("</g>")
    return "".join(out)


def own_marks(cells: list[tuple[int, int]], height: int) -> str:
    """Corner marks round the systems of the viewer's own leaders: (x, y) each."""
    out = []
    for x, y in cells:
        x0, y0 = x * CELL, (height - 1 - y) * CELL
        out.append(
            f'<path class="own" d="M{x0 + 1} {y0 + 6}V{y0 + 1}H{x0 + 6}M{x0 + 14} {y0 + 1}H{x0 + 19}V{y0 + 6}'
            f'M{x0 + 19} {y0 + 14}V{y0 + 19}H{x0 + 14}M{x0 + 6} {y0 + 19}H{x0 + 1}V{y0 + 14}"/>'
        )
    return "".join(out)


def order_marks(orders: list[dict], height: int) -> str:
    """The viewer's pending orders on their targets, each a dashed ghost of what it will do (a
    colony of the colonist's kind, the leader's shape, a bomber's cross hairs) with its kind's
    letter and the order's number in the list of orders. `orders`: dicts with `number`, `x`,
    `y`, `role` ("colonist", "leader", "bomber"), `kind` (a `ruleset.Kind` or None), `title`."""
    out = []
    for order in orders:
        cx, cy = cell_centre(order["x"], order["y"], height)
        x0, y0 = cx - CELL // 2, cy - CELL // 2
        kind = order["kind"]
        letter = KIND_LETTERS[kind] if kind is not None else "B"
        if order["role"] == "leader" and kind is not None:
            ghost = leader_shape(kind, cx, cy, ' class="ghost"')
        elif order["role"] == "bomber":
            ghost = (
                f'<circle class="ghost" cx="{cx}" cy="{cy}" r="7"/>'
                f'<path class="ghost" d="M{cx - 9} {cy}h5m8 0h5M{cx} {cy - 9}v5m0 8v5"/>'
            )
        else:
            ghost = f'<circle class="ghost" cx="{cx}" cy="{cy}" r="7"/>'
        out.append(
            f'<g class="order" data-order="{order["number"]}"><title>{escape(order["title"])}</title>{ghost}'
            f'<text class="ghost-l" x="{cx}" y="{cy + 3}">{letter}</text>'
            f'<rect class="tag" x="{x0 + 0.5}" y="{y0 + 0.5}" width="7.5" height="8" rx="1.5"/>'
            f'<text class="tag-n" x="{x0 + 4.25}" y="{y0 + 6.8}">{order["number"]}</text></g>'
        )
    return "".join(out)


# -- the map key --------------------------------------------------------------------------------

KIND_WORDS = ("merchant", "scientist", "settler", "mining")
SCORE_WORDS = ("Money", "Technology", "People", "Raw materials")


def _icon(body: str, terrain: str = "H", classes: str = "") -> str:
    """A one-system picture for the key (the same classes as the map's systems)."""
    hatch = ' fill="url(#hatch)"' if terrain == "M" else ""
    return (
        f'<svg class="key-icon" viewBox="0 0 {CELL} {CELL}" aria-hidden="true">'
        f'<g class="t-{terrain}{classes}"><rect class="cell" width="{CELL}" height="{CELL}"{hatch}/>'
        f"{body}</g></svg>"
    )


def _colony(kind: Kind) -> str:
    return (
        f'<circle class="col k-{KIND_CLASSES[kind]}" cx="10" cy="10" r="6"/>'
        f'<text class="lbl" x="10" y="13">{KIND_LETTERS[kind]}</text>'
    )


def map_key(player_page: bool) -> list[tuple[str, list[tuple[str, str]]]]:
    """Every mark the map draws, drawn by the same code as the map, with its meaning in words:
    groups of (icon SVG, text). The player page adds the viewer's own marks."""
    star = '<path class="art" d="M10 1l2 3.5 3.5 -.5 -2 3 -3.5 -1 -3.5 1 -2 -3 3.5 .5z"/>'
    systems = [
        (_icon(""), "habitable"),
        (_icon("", "M"), "uninhabitable (striped): mining colonies only"),
        (
            _icon(_colony(Kind.SCIENTIST) + star, "A"),
            "artifact system: a scientist colony holding an alien artifact",
        ),
        (
            _icon(_colony(Kind.SCIENTIST) + '<circle class="spent" cx="10" cy="10" r="8.5"/>', "A"),
            "artifact system whose artifact was taken",
        ),
        (_icon('<path class="x" d="M4 4l12 12m0 -12l-12 12"/>', classes=" destroyed"), "destroyed"),
    ]
    colonies = [
        (_icon(_colony(kind)), f"{KIND_WORDS[kind]} ({KIND_LETTERS[kind]}: {SCORE_WORDS[kind]})")
        for kind in Kind
    ]
    leaders = [(_icon(leader_glyph(kind, 1, 10, 10.5)), f"{KIND_WORDS[kind]} leader") for kind in Kind]
    marks = [
        (_icon('<path class="region in-key" d="M1 1H19V19H1Z"/>'), "a region's outline"),
        (
            _icon(_colony(Kind.MERCHANT) + '<rect class="unif" x="2" y="2" width="16" height="16"/>'),
            "a colony waiting for its conflict (pending unification)",
        ),
        (
            _icon(leader_glyph(Kind.SETTLER, 2, 10, 10.5) + _fight(10, 10.5, "A")),
            "a leader fighting this combat turn: A attacks, D defends",
        ),
        (_icon(_colony(Kind.MERCHANT) + _clash(10, 10)), "the system the combat is fought over"),
    ]
    if player_page:
        order = {"number": 1, "x": 0, "y": 0, "role": "colonist", "kind": Kind.SETTLER, "title": "an order"}
        marks += [
            (_icon(leader_glyph(Kind.MERCHANT, 1, 10, 10.5) + own_marks([(0, 0)], 1)), "your own leader"),
            (
                _icon(order_marks([order], 1)),
                "your pending order 1, dashed: what it will place (the list of orders names its fleet)",
            ),
            (
                _icon('<rect class="cursor" x="1" y="1" width="18" height="18"/>'),
                "the system you chose last, or the keyboard's cursor",
            ),
        ]
    return [
        ("Systems", systems),
        ("Colonies: the fill and the letter say the kind", colonies),
        ("Leaders: the shape, fill and letter say the kind; the outline and the number say whose", leaders),
        ("Marks", marks),
    ]


def _fight(cx: float, cy: float, tag: str) -> str:
    """A fighting leader's ring and its tag: A attacks, D defends."""
    return (
        f'<circle class="fight" cx="{cx}" cy="{cy}" r="9.2"/>'
        f'<rect class="fight-tag" x="{cx - 10}" y="{cy + 3}" width="7" height="7" rx="1"/>'
        f'<text class="tag-n" x="{cx - 6.5}" y="{cy + 8.9}">{tag}</text>'
    )


def _clash(cx: float, cy: float) -> str:
    points = " ".join(
        f"{cx + dx:.1f},{cy + dy:.1f}"
        for dx, dy in (
            (0, -10), (2.5, -4), (9, -6), (4.5, -1), (10, 3), (3.5, 3.5),
            (3, 10), (0, 5), (-3, 10), (-3.5, 3.5), (-10, 3), (-4.5, -1), (-9, -6), (-2.5, -4),
        )
    )  # fmt: skip
    return f'<polygon class="clash" points="{points}"/>'
