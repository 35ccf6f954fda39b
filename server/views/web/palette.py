"""Every colour the web pages and the galaxy map use, declared once, and the stylesheet made of them.

The map tells two things apart that must never be mistaken for each other:

* **what kind** a colony or a leader is: the *fill* (`KIND_FILLS`, Paul Tol's "light" scheme,
  chosen to stay apart for colour-blind eyes) and a letter (M, S, P, R), so that colour is
  never the only sign;
* **whose** a leader is: an *outline* and a *badge* with the player's number (the same number as
  `tae-client board`'s "1S"), in the player's colour (`PLAYER_COLOURS`, Okabe and Ito's
  colour-blind-safe set without black and blue, plus grey and pale cyan). A player's colour is
  never a fill of a piece, so a red player's settler leader cannot look like a scientist colony.

Players beyond the eighth reuse the colours; their numbers still tell them apart.
`tests/web/test_palette.py` checks the contrast (WCAG 2.1 AA) of every pair declared in
`TEXT_PAIRS` and `MARK_PAIRS` and that the colours stay distinct under simulated colour blindness.
The pages' stylesheet (`/static/style.css`) uses only the custom properties declared here;
`/static/map.css` is `stylesheet()`.
"""

from __future__ import annotations

from ruleset import Kind

#: The page: backgrounds, text, buttons, notices. CSS custom properties `--NAME`.
PAGE = {
    "bg": "#0b1020",
    "panel": "#141b2e",
    "header": "#060913",
    "text": "#e6e9f2",
    "quiet": "#9aa3b8",
    "body-text": "#cfd5e4",
    "link": "#8fc1ff",
    "accent": "#ffb347",
    "line": "#3b4663",
    "rule": "#2a3248",
    "input": "#0e1426",
    "button": "#2a3248",
    "primary": "#8a4f10",
    "primary-line": "#c77b26",
    "focus": "#ffd84d",
    "ok-bg": "#1d3b24",
    "error-bg": "#4a1d1d",
    "done-bg": "#1f5130",
    "wait-bg": "#6b4a12",
    "state-bg": "#2a3248",
    "combat-bg": "#3a2320",
    "hint-bg": "#1a2747",
}

#: The map: space around it, the terrain, and every mark drawn on top.
MAP = {
    "space": "#060913",
    "grid": "#0b1020",
    "habitable": "#1c2740",
    "uninhabitable": "#3b3f4a",
    "hatch": "#8d93a1",  # the stripes of an uninhabitable system
    "artifact-cell": "#2b2547",
    "destroyed": "#050608",
    "ruin": "#ff6b5b",  # the cross on a destroyed system
    "artifact": "#ffd700",
    "artifact-line": "#7a5c00",
    "region": "#dfe6ff",
    "axis": "#9aa3b8",  # the row and column numbers
    "conflict": "#ff4d6d",  # pending unification systems, the fighters and the place of a combat
    "mine": "#ffffff",  # the corner marks on the viewer's own leaders
    "order": "#ffffff",  # the viewer's pending orders
    "cursor": "#ffd84d",  # the keyboard's cursor and the chosen system
    "ink": "#0b1020",  # letters and numbers on a fill or a badge
}

#: Fills of the four kinds (merchant, scientist, settler, mining), in `ruleset.Kind` order.
KIND_FILLS = ("#44bb99", "#ee8866", "#77aadd", "#eedd88")
KIND_CLASSES = ("merchant", "scientist", "settler", "mining")
#: The fifth score line of the score plot (alien artifacts).
ARTIFACT_SCORE = MAP["artifact"]

#: Players' outlines and badges, by player id (1 is the first); 0 (nobody) is grey.
PLAYER_COLOURS = ("#e69f00", "#56b4e9", "#cc79a7", "#009e73", "#f0e442", "#d55e00", "#bbbbbb", "#99ddff")
NOBODY = "#999999"

#: Text on a background: WCAG 2.1 AA asks 4.5:1 (`tests/web/test_palette.py`).
TEXT_PAIRS: tuple[tuple[str, str], ...] = (
    *((text, bg) for text in ("text", "quiet", "link", "accent") for bg in ("bg", "panel", "header")),
    *(
        ("text", bg)
        for bg in (
            "input",
            "button",
            "primary",
            "ok-bg",
            "error-bg",
            "done-bg",
            "wait-bg",
            "state-bg",
            "combat-bg",
            "hint-bg",
        )
    ),
    ("body-text", "bg"),
    ("quiet", "hint-bg"),
    ("quiet", "combat-bg"),
)


def page_colour(name: str) -> str:
    return PAGE[name] if name in PAGE else MAP[name]


def player_colour(player: int) -> str:
    """A player's colour (ids from 1); nobody's is grey."""
    return PLAYER_COLOURS[(player - 1) % len(PLAYER_COLOURS)] if player > 0 else NOBODY


def player_class(player: int) -> str:
    """The class that colours a player's outline and badge (`pc1` … `pc8`, `pc0` for nobody)."""
    return f"pc{(player - 1) % len(PLAYER_COLOURS) + 1}" if player > 0 else "pc0"


def kind_fill(kind: Kind) -> str:
    return KIND_FILLS[kind]


def stylesheet() -> str:
    """/static/map.css: the custom properties of `PAGE` and `MAP`, and the map's rules."""
    props = ";".join(f"--{name}:{value}" for name, value in (*PAGE.items(), *MAP.items()))
    kinds = "".join(
        f".k-{name}{{fill:{fill}}}.kb-{name}{{background:{fill}}}"
        for name, fill in zip(KIND_CLASSES, KIND_FILLS, strict=True)
    )
    players = "".join(
        f".pc{i}{{stroke:{colour}}}.badge.pc{i},.swatch .pc{i}{{fill:{colour}}}"
        for i, colour in enumerate((NOBODY, *PLAYER_COLOURS))
    )
    m = MAP
    return (
        f":root{{{props}}}"
        f".cell{{stroke:{m['grid']};stroke-width:1}}.t-H .cell{{fill:{m['habitable']}}}"
        f".t-A .cell{{fill:{m['artifact-cell']}}}"
        f".destroyed .cell{{fill:{m['destroyed']}}}"
        f".x{{stroke:{m['ruin']};stroke-width:2}}"
        f".col{{stroke:{m['grid']};stroke-width:1}}"
        f"{kinds}"
        f".art{{fill:{m['artifact']};stroke:{m['artifact-line']};stroke-width:.8}}"
        f".spent{{fill:none;stroke:{m['artifact']};stroke-width:1.2;stroke-dasharray:2 2}}"
        f".ldr{{stroke-width:2.2;stroke-linejoin:round}}"
        f".halo{{fill:none;stroke:{m['ink']};stroke-width:4.6;stroke-linejoin:round}}"
        f".badge{{stroke:{m['ink']};stroke-width:.6}}"
        f".bn{{font:bold 6px sans-serif;fill:{m['ink']};text-anchor:middle;pointer-events:none}}"
        f".unif{{fill:none;stroke:{m['conflict']};stroke-width:2;stroke-dasharray:3 2}}"
        f".region{{fill:none;stroke:{m['region']};stroke-opacity:.85;stroke-width:1.6;stroke-linecap:round}}"
        f".lbl{{font:bold 8px sans-serif;fill:{m['ink']};text-anchor:middle;pointer-events:none}}"
        f".axis{{font:8px sans-serif;fill:{m['axis']};pointer-events:none}}"
        f".axis .row{{text-anchor:end}}.axis .col-n{{text-anchor:middle}}"
        f".axis-bg{{fill:{m['space']};opacity:.92}}"
        f".own{{fill:none;stroke:{m['mine']};stroke-width:1.8;pointer-events:none}}"
        f".order,.leaders,.combat{{pointer-events:none}}"
        f".ghost{{fill:none;stroke:{m['order']};stroke-width:1.5;stroke-dasharray:2.5 1.5}}"
        f".ghost-l{{font:bold 8px sans-serif;fill:{m['order']};text-anchor:middle}}"
        f".tag{{fill:{m['order']};stroke:{m['ink']};stroke-width:.5}}"
        f".tag-n{{font:bold 6.5px sans-serif;fill:{m['ink']};text-anchor:middle}}"
        f".fight{{fill:none;stroke:{m['conflict']};stroke-width:2.2;pointer-events:none}}"
        f".fight-tag{{fill:{m['conflict']}}}"
        f".clash{{fill:none;stroke:{m['conflict']};stroke-width:1.6;pointer-events:none}}"
        f".hatch-bg{{fill:{m['uninhabitable']}}}.hatch-line{{stroke:{m['hatch']};stroke-width:1.2}}"
        f".cursor{{fill:none;stroke:{m['cursor']};stroke-width:2.5;pointer-events:none}}"
        f".sys:hover .cell{{stroke:{m['mine']}}}"
        f".swatch text{{font:bold 9px sans-serif;fill:{m['ink']};text-anchor:middle}}"
        f"{players}"
    )
