"""The diagrams of docs/rules.md, made from the rules themselves so that they cannot drift.

* `board_svg(board)`: docs/diagrams/board.svg, the default map as an SVG grid.
* `example_diagrams(path)`: for a scenario file of docs/examples/, the position before and after
  its turns as text diagrams (the position on the left, the region of each member on the right),
  computed by `ruleset.scenario`. docs/rules.md quotes them; tests/packaging/test_docs.py checks
  that every quoted diagram is still what the rules give.

    python -m tests.packaging.docs_diagrams            # rewrite board.svg, print every diagram
"""

from __future__ import annotations

import sys
from pathlib import Path

from ruleset import DEFAULT_BOARD, Board
from ruleset.scenario.play import play
from ruleset.scenario.result import result

from .docs_scenarios import load

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
EXAMPLES = DOCS / "examples"
BOARD_SVG = DOCS / "diagrams" / "board.svg"

KIND_LETTER = {"merchant": "m", "scientist": "t", "settler": "p", "mining": "r"}

# -- the board ---------------------------------------------------------------------------------

CELL = 40
MARGIN = 34
FILL = {".": "#1d2b53", "M": "#5f574f", "A": "#ffcc33"}
TITLE = {".": "habitable", "M": "uninhabitable (mining colonies only)", "A": "artifact system"}


def board_svg(board: Board = DEFAULT_BOARD) -> str:
    """The board as SVG: row 0 at the bottom, as the coordinates count."""
    width = max(len(row) for row in board.rows)
    height = len(board.rows)
    w, h = MARGIN + width * CELL + 10, MARGIN + height * CELL + 70
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
        'font-family="sans-serif" font-size="12">',
        "<title>The default TaE board: 16 columns, 11 rows, 10 artifact systems</title>",
        f'<rect width="{w}" height="{h}" fill="#ffffff"/>',
    ]
    for y, row in enumerate(board.rows):
        top = MARGIN + (height - 1 - y) * CELL
        out.append(f'<text x="{MARGIN - 8}" y="{top + CELL / 2 + 4}" text-anchor="end">{y}</text>')
        for x, terrain in enumerate(row):
            left = MARGIN + x * CELL
            out.append(
                f'<rect class="cell" data-x="{x}" data-y="{y}" data-terrain="{terrain}" x="{left}" y="{top}" '
                f'width="{CELL}" height="{CELL}" fill="{FILL[terrain]}" stroke="#ffffff">'
                f"<title>{x}, {y}: {TITLE[terrain]}</title></rect>"
            )
            if terrain == "A":
                out.append(
                    f'<text x="{left + CELL / 2}" y="{top + CELL / 2 + 5}" text-anchor="middle" '
                    f'font-size="16" font-weight="bold" fill="#1d2b53">A</text>'
                )
    for x in range(width):
        out.append(
            f'<text x="{MARGIN + x * CELL + CELL / 2}" y="{MARGIN - 10}" text-anchor="middle">{x}</text>'
        )
    legend_top = MARGIN + height * CELL + 22
    for offset, terrain in zip((0, 120, 380), (".", "M", "A"), strict=True):
        left = MARGIN + offset
        out.append(
            f'<rect x="{left}" y="{legend_top}" width="16" height="16" '
            f'fill="{FILL[terrain]}" stroke="#000000"/>'
        )
        out.append(f'<text x="{left + 22}" y="{legend_top + 13}">{TITLE[terrain]}</text>')
    out.append(
        f'<text x="{MARGIN}" y="{legend_top + 40}">x = column, y = row; systems are named "x, y"; '
        "neighbours are left, right, above and below</text>"
    )
    out.append("</svg>")
    return "\n".join(out) + "\n"


# -- example positions -------------------------------------------------------------------------


def shown_rows(path: Path) -> int | None:
    """How many rows (from row 0 up) of an example's map its diagrams show, from its
    `# shown rows: N` line; None for an example without diagrams. (Most examples put a row
    of artifact systems at the top of the map, far from the action, so that the game does not
    end with two artifacts or fewer on the board; the diagrams leave it out.)"""
    for line in path.read_text().splitlines():
        if line.startswith("# shown rows:"):
            return int(line.split(":", 1)[1])
    return None


def _position(data: dict, board: Board, rows: int) -> list[str]:
    initials = {p["name"]: p["name"][0].lower() for p in data["players"]}
    cells = {
        xy: ("." if t == "." else "~" if t == "M" else "A") for xy, t in zip(board.coords, board.terrain)
    }
    for colony in data["colonies"]:
        x, y = colony["at"]
        cells[(x, y)] = "A" if colony["artifact"] else KIND_LETTER[colony["kind"]]
    for x, y in data["destroyed"]:
        cells[(x, y)] = "X"
    for leader in data["leaders"]:
        x, y = leader["at"]
        cells[(x, y)] = KIND_LETTER[leader["kind"]].upper() + initials[leader["owner"]]
    # Regions numbered among the shown rows, by their lowest (y, x) there.
    shown = [
        sorted((m for m in members if m[1] < rows), key=lambda m: (m[1], m[0])) for members in data["regions"]
    ]
    shown = sorted((members for members in shown if members), key=lambda m: (m[0][1], m[0][0]))
    regions = {}
    for number, members in enumerate(shown, start=1):
        for x, y in members:
            regions[(x, y)] = str(number)
    width = max(len(board.rows[y]) for y in range(rows))
    header = "    " + "".join(f"{x:<3}" for x in range(width))
    lines = [f"{header}    {header}".rstrip()]
    for y in reversed(range(rows)):
        left = "".join(f"{cells.get((x, y), ' '):<3}" for x in range(width))
        right = "".join(f"{regions.get((x, y), '.'):<3}" for x in range(width))
        lines.append(f"{y:>2}  {left}    {y:>2}  {right}".rstrip())
    return lines


def example_diagrams(path: Path) -> dict[str, str]:
    """ "before" and "after": the example's position before its turns and after them (nothing
    for an example without a `# shown rows:` line)."""
    rows = shown_rows(path)
    if rows is None:
        return {}
    text = path.read_text()
    before = load(text)
    board = before.state.board
    start = text.index("[[turns]]") if "[[turns]]" in text else len(text)
    setup = load(text[:start])
    out = {"before": "\n".join(_position(result(setup), board, rows))}
    play(before)
    out["after"] = "\n".join(_position(result(before), board, rows))
    return out


def main() -> None:
    BOARD_SVG.parent.mkdir(parents=True, exist_ok=True)
    BOARD_SVG.write_text(board_svg())
    for path in sorted(EXAMPLES.glob("*.toml")):
        for moment, diagram in example_diagrams(path).items():
            print(f"== {path.name} {moment}\n{diagram}\n", file=sys.stdout)


if __name__ == "__main__":
    main()
