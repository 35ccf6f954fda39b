"""A player's five scores over the turns as a small SVG line chart (their own view only)."""

from __future__ import annotations

from ruleset.kinds import SCORE_TITLES
from server.views.web.palette import ARTIFACT_SCORE, KIND_FILLS, PAGE

WIDTH, HEIGHT = 320, 170
LEFT, RIGHT, TOP, BOTTOM = 28, 8, 8, 42
#: Money, Technology, People, Raw materials in their kinds' colours (as on the map), then artifacts.
COLOURS = (*KIND_FILLS, ARTIFACT_SCORE)
BG, LINE, INK = PAGE["input"], PAGE["line"], PAGE["quiet"]


def score_plot(points: list[tuple[int, tuple[int, ...]]]) -> str:
    """`points`: (turn, (M, T, P, R, A) after that turn), oldest first."""
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    last_turn = max((turn for turn, _ in points), default=1)
    first_turn = min((turn for turn, _ in points), default=0)
    top_value = max((max(scores) for _, scores in points), default=0)
    top_value = max(top_value, 1)
    span = max(last_turn - first_turn, 1)

    def at(turn: int, value: int) -> str:
        x = LEFT + (turn - first_turn) * plot_w / span
        y = TOP + plot_h - value * plot_h / top_value
        return f"{x:.1f},{y:.1f}"

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="scoreplot" viewBox="0 0 {WIDTH} {HEIGHT}" '
        'role="img" aria-label="My scores over the turns">',
        f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="{BG}" stroke="{LINE}"/>',
        f'<text x="{LEFT - 4}" y="{TOP + 8}" font-size="9" fill="{INK}" text-anchor="end">{top_value}</text>',
        f'<text x="{LEFT - 4}" y="{TOP + plot_h}" font-size="9" fill="{INK}" text-anchor="end">0</text>',
        f'<text x="{LEFT}" y="{TOP + plot_h + 11}" font-size="9" fill="{INK}">turn {first_turn}</text>',
        f'<text x="{LEFT + plot_w}" y="{TOP + plot_h + 11}" font-size="9" fill="{INK}" '
        f'text-anchor="end">turn {last_turn}</text>',
    ]
    for index, title in enumerate(SCORE_TITLES):
        colour = COLOURS[index]
        if points:
            line = " ".join(at(turn, scores[index]) for turn, scores in points)
            out.append(
                f'<polyline fill="none" stroke="{colour}" stroke-width="1.8" points="{line}">'
                f"<title>{title}</title></polyline>"
            )
        lx = LEFT + (index % 3) * 100
        ly = TOP + plot_h + 24 + (index // 3) * 11
        out.append(f'<rect x="{lx}" y="{ly - 7}" width="8" height="8" fill="{colour}"/>')
        out.append(f'<text x="{lx + 11}" y="{ly}" font-size="9" fill="{INK}">{title}</text>')
    out.append("</svg>")
    return "".join(out)
