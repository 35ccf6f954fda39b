"""The declared colours (server/views/web/palette.py) meet WCAG 2.1 AA and stay apart for
colour-blind eyes; nothing else on the pages declares a colour.

Contrast is WCAG's: relative luminance from linear sRGB, (L1 + 0.05) / (L2 + 0.05); 4.5:1 for
text, 3:1 for graphical objects that carry meaning (1.4.11). Colour blindness is simulated with
Machado, Oliveira and Fernandes (2009) at full severity (protanopia, deuteranopia, tritanopia);
two colours stay apart when their CIELAB distance (ΔE 1976) is at least `APART`.
"""

from __future__ import annotations

import itertools
import math
import re
from pathlib import Path

import pytest

from server.views.web.palette import (
    ARTIFACT_SCORE,
    KIND_FILLS,
    MAP,
    PAGE,
    PLAYER_COLOURS,
    TEXT_PAIRS,
    page_colour,
    player_class,
    player_colour,
    stylesheet,
)

TEXT, GRAPHIC = 4.5, 3.0
APART = 12.0  # ΔE76: clearly different at a glance; a just noticeable difference is about 2.3
STATIC = Path(__file__).resolve().parents[2] / "server" / "web" / "static"


def linear(channel: int) -> float:
    c = channel / 255
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def rgb(colour: str) -> tuple[int, int, int]:
    value = colour.lstrip("#")
    return int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16)


def luminance(colour: str) -> float:
    r, g, b = (linear(c) for c in rgb(colour))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


MACHADO = {
    "protanopia": (
        (0.152286, 1.052583, -0.204868),
        (0.114503, 0.786281, 0.099216),
        (-0.003882, -0.048116, 1.051998),
    ),
    "deuteranopia": (
        (0.367322, 0.860646, -0.227968),
        (0.280085, 0.672501, 0.047413),
        (-0.011820, 0.042940, 0.968881),
    ),
    "tritanopia": (
        (1.255528, -0.076749, -0.178779),
        (-0.078411, 0.930809, 0.147602),
        (0.004733, 0.691367, 0.303900),
    ),
}


def seen(colour: str, vision: str) -> tuple[float, float, float]:
    """The colour's CIELAB coordinates as someone with `vision` sees it."""
    linear_rgb = [linear(c) for c in rgb(colour)]
    if vision != "typical":
        m = MACHADO[vision]
        linear_rgb = [min(1.0, max(0.0, sum(m[i][j] * linear_rgb[j] for j in range(3)))) for i in range(3)]
    r, g, b = linear_rgb
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


VISIONS = ("typical", *MACHADO)


def test_the_contrast_helper_is_wcags():
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)  # the classic near miss


@pytest.mark.parametrize(("text", "background"), TEXT_PAIRS, ids=lambda name: name)
def test_page_text_has_aa_contrast(text, background):
    assert contrast(page_colour(text), page_colour(background)) >= TEXT, (text, background)


def test_the_letters_and_numbers_on_the_map_have_aa_contrast():
    ink = MAP["ink"]
    for fill in (*KIND_FILLS, *PLAYER_COLOURS, MAP["order"], MAP["conflict"]):
        assert contrast(ink, fill) >= TEXT, fill  # kind letters, badge numbers, order and A/D tags
    assert contrast(MAP["axis"], MAP["space"]) >= TEXT  # row and column numbers
    assert contrast(MAP["order"], MAP["habitable"]) >= TEXT  # a pending order's letter (no fill)


def test_every_mark_stands_out_from_the_systems_it_is_drawn_on():
    cells = {name: MAP[name] for name in ("habitable", "uninhabitable", "artifact-cell")}
    # colonies of the three habitable kinds sit on habitable and artifact systems; mining ones
    # on uninhabitable systems
    for fill in KIND_FILLS[:3]:
        assert min(contrast(fill, MAP[c]) for c in ("habitable", "artifact-cell")) >= GRAPHIC, fill
    assert contrast(KIND_FILLS[3], MAP["uninhabitable"]) >= GRAPHIC
    # leaders stand on habitable systems only; their outline and badge must show there
    for colour in PLAYER_COLOURS:
        assert contrast(colour, MAP["habitable"]) >= GRAPHIC, colour
        assert contrast(colour, MAP["ink"]) >= GRAPHIC, colour  # against the dark halo
    for mark in ("region", "conflict", "mine", "order", "cursor"):
        for name, cell in cells.items():
            assert contrast(MAP[mark], cell) >= GRAPHIC, (mark, name)
    assert contrast(MAP["hatch"], MAP["uninhabitable"]) >= GRAPHIC  # the stripes
    assert contrast(MAP["ruin"], MAP["destroyed"]) >= GRAPHIC
    assert contrast(MAP["artifact"], MAP["artifact-cell"]) >= GRAPHIC
    assert contrast(PAGE["focus"], PAGE["bg"]) >= GRAPHIC  # the keyboard's focus ring
    for colour in (*KIND_FILLS, ARTIFACT_SCORE):  # the score plot's lines on its background
        assert contrast(colour, PAGE["input"]) >= GRAPHIC, colour


@pytest.mark.parametrize("vision", VISIONS)
def test_the_four_kinds_stay_apart_for_colour_blind_eyes(vision):
    for a, b in itertools.combinations(KIND_FILLS, 2):
        assert math.dist(seen(a, vision), seen(b, vision)) >= APART, (vision, a, b)


@pytest.mark.parametrize("vision", VISIONS)
def test_the_players_stay_apart_for_colour_blind_eyes(vision):
    """Eight players are told apart by colour; beyond that, and always, by their numbers."""
    for a, b in itertools.combinations(PLAYER_COLOURS, 2):
        assert math.dist(seen(a, vision), seen(b, vision)) >= APART, (vision, a, b)


def test_player_colours_repeat_after_eight_and_the_class_follows():
    assert player_colour(1) == PLAYER_COLOURS[0] and player_colour(9) == PLAYER_COLOURS[0]
    assert player_class(9) == "pc1" and player_class(8) == "pc8" and player_class(0) == "pc0"


def test_no_stylesheet_or_template_declares_a_colour_of_its_own():
    """One declaration of each colour: style.css and the templates use the palette's custom
    properties and classes (map.css is the palette's stylesheet)."""
    literal = re.compile(r"#[0-9a-fA-F]{3,8}\b|rgba?\(|hsla?\(")
    css = (STATIC / "style.css").read_text()
    assert not literal.findall(css)
    for name in re.findall(r"var\(--([a-z-]+)\)", css):
        assert name in PAGE or name in MAP, name
    templates = STATIC.parent / "templates"
    for path in templates.glob("*.html"):
        assert not re.findall(r'(?:fill|stroke|color)="#', path.read_text()), path.name
    sheet = stylesheet()
    assert all(colour in sheet for colour in (*KIND_FILLS, *PLAYER_COLOURS))
