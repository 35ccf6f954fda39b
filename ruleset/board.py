"""The board: star systems on a grid of rows, parsed from map text (R1, R4).

Cells are numbered in creation order: row 0 first, then by column. Row 0 is the *last* line of
the map text, as REF pops lines off a stack. A cell's star system has object id ``2 + 2*i`` and
its planet ``3 + 2*i`` (objects 0 and 1 are the Universe and the Galaxy), which reproduces
tpserver-cpp's ids on the default map.
"""

from __future__ import annotations

from dataclasses import dataclass, field

HABITABLE = "."
UNINHABITABLE = "M"
ARTIFACT = "A"
TERRAINS = (HABITABLE, UNINHABITABLE, ARTIFACT)

FIRST_SYSTEM_ID = 2

# The built-in map as REF lists it: the first line is row 10, the last line is row 0.
DEFAULT_MAP_TEXT = """\
....MMMMM.A.M...
.A..M.......M..A
...MMA......MM..
MMMM.........MMM
.............AMM
..............M.
MMMM....A...MMM.
.A.MMMM.....M...
......MMMMMMM.A.
.....A..........
..........A.....
"""


class MapError(ValueError):
    """Map text that is not a board; the message names the line and column."""


@dataclass(frozen=True, slots=True, eq=False)
class Board:
    """An immutable board. Two boards are equal when their rows are equal."""

    rows: tuple[str, ...]
    coords: tuple[tuple[int, int], ...] = field(repr=False)
    terrain: str = field(repr=False)
    neighbours: tuple[tuple[int, ...], ...] = field(repr=False)
    names: tuple[str, ...] = field(repr=False)  # system names "x, y", by cell
    _index: dict[tuple[int, int], int] = field(repr=False)
    # Values derived from the board by other modules, built once per board (ruleset.messages
    # keeps each system's name-and-reference there).
    memo: dict[int, object] = field(repr=False, default_factory=dict)

    @classmethod
    def from_rows(cls, rows: tuple[str, ...]) -> Board:
        coords: list[tuple[int, int]] = []
        terrain: list[str] = []
        for y, row in enumerate(rows):
            for x, char in enumerate(row):
                coords.append((x, y))
                terrain.append(char)
        index = {xy: i for i, xy in enumerate(coords)}
        neighbours: list[tuple[int, ...]] = []
        for x, y in coords:
            around = [index.get(xy) for xy in ((x, y - 1), (x - 1, y), (x + 1, y), (x, y + 1))]
            neighbours.append(tuple(i for i in around if i is not None))
        names = tuple(f"{x}, {y}" for x, y in coords)
        return cls(tuple(rows), tuple(coords), "".join(terrain), tuple(neighbours), names, index)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Board) and self.rows == other.rows

    # Defining __eq__ leaves Board unhashable (__hash__ is None): boards hold dicts; compare them,
    # do not key by them.

    @property
    def size(self) -> int:
        return len(self.coords)

    def cell_at(self, x: int, y: int) -> int | None:
        """The cell at column x, row y, or None when the board has no system there."""
        return self._index.get((x, y))

    def system_id(self, cell: int) -> int:
        return FIRST_SYSTEM_ID + 2 * cell

    def planet_id(self, cell: int) -> int:
        return FIRST_SYSTEM_ID + 2 * cell + 1

    @property
    def first_free_id(self) -> int:
        """The first object id after the board's systems and planets."""
        return FIRST_SYSTEM_ID + 2 * len(self.coords)

    def cell_of_object(self, object_id: int) -> int | None:
        """The cell of a board star system or board planet (R8: a planet means its system)."""
        if FIRST_SYSTEM_ID <= object_id < FIRST_SYSTEM_ID + 2 * len(self.coords):
            return (object_id - FIRST_SYSTEM_ID) // 2
        return None

    def system_name(self, cell: int) -> str:
        return self.names[cell]

    def planet_name(self, cell: int) -> str:
        x, y = self.coords[cell]
        return f"Planet {x}, {y}"

    def artifact_cells(self) -> tuple[int, ...]:
        return tuple(i for i, t in enumerate(self.terrain) if t == ARTIFACT)

    def to_text(self) -> str:
        """Map text that parses back to this board (the first line is the highest row)."""
        return "".join(row + "\n" for row in reversed(self.rows))


def parse_map(text: str) -> Board:
    """Parse map text: one line per row, the last line is row 0; '.', 'M' and 'A' only.

    Trailing empty lines are dropped (REF drops one; an editor may leave more). An empty line
    inside the map is an empty row, which keeps the row numbering of the lines after it.
    """
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    while lines and lines[-1] == "":
        lines.pop()
    if not lines:
        raise MapError("the map is empty")
    for number, line in enumerate(lines, start=1):
        for column, char in enumerate(line):
            if char not in TERRAINS:
                raise MapError(f"map line {number}, column {column + 1}: {char!r} is not '.', 'M' or 'A'")
    return Board.from_rows(tuple(reversed(lines)))


DEFAULT_BOARD = parse_map(DEFAULT_MAP_TEXT)


def grid_map_text(width: int, height: int, artifacts_every: int = 7) -> str:
    """A plain rectangular map for benchmarks and tests: artifacts on a sparse lattice."""
    rows = []
    for y in range(height):
        row = []
        for x in range(width):
            if x % artifacts_every == artifacts_every // 2 and y % artifacts_every == artifacts_every // 2:
                row.append(ARTIFACT)
            elif (x * 7 + y * 3) % 11 == 0:
                row.append(UNINHABITABLE)
            else:
                row.append(HABITABLE)
        rows.append("".join(row))
    return "\n".join(reversed(rows)) + "\n"
