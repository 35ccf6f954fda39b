"""What the galaxy map shows, computed from what one viewer may see (R27).

`galaxy(board, view)` turns a `ruleset.PlayerView` (the public view is the view of nobody, player
0) into one `SystemView` per board cell and the outline of every region. The SVG map, the JSON
documents and the tooltips all read these values, so nothing they show comes from anywhere but
the view.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from ruleset import Board, Kind, Phase, PlayerView, Role
from ruleset.board import ARTIFACT, UNINHABITABLE
from ruleset.regions import region_of_each_member

TERRAIN_NAMES = {".": "habitable", UNINHABITABLE: "uninhabitable", ARTIFACT: "artifact system"}
LEADER_NAMES = ("Merchant Leader", "Scientist Leader", "Settler Leader", "Mining Leader")
KIND_LETTERS = ("M", "S", "P", "R")  # merchant, scientist, settler (People), mining (Raw)


class LeaderMark(NamedTuple):
    fleet: int
    owner: int
    kind: Kind


class SystemView(NamedTuple):
    """One star system as the viewer sees it; `region` is the region's id (the star-system id of
    its lowest cell) for region members, None otherwise. (A named tuple, not a dataclass: a
    64×64 map makes 4096 of them per snapshot, and tuples are built five times faster.)"""

    cell: int
    object_id: int
    x: int
    y: int
    terrain: str
    colony: Kind | None
    artifact: bool
    destroyed: bool
    leader: LeaderMark | None
    region: int | None
    unification: bool

    @property
    def name(self) -> str:
        return f"{self.x}, {self.y}"


class CombatMark(NamedTuple):
    """The combat of a combat turn: the cells of the attacking and the defending leader, and
    the place they fight over (an external conflict's unification system; None for an
    internal one, fought inside one region)."""

    attacker: int | None
    defender: int | None
    place: int | None


@dataclass(frozen=True, slots=True)
class Galaxy:
    """The board as a viewer sees it: `width`×`height` cells, systems in cell order, and for
    every region its id and the unit edges of its outline as (x1, y1, x2, y2) in cell units;
    in a combat turn, where its fight is (`combat`)."""

    width: int
    height: int
    systems: tuple[SystemView, ...]
    outlines: tuple[tuple[int, tuple[tuple[int, int, int, int], ...]], ...]
    names: dict[int, str]
    combat: CombatMark | None = None


def galaxy(board: Board, view: PlayerView) -> Galaxy:
    leaders = {
        fleet.at: LeaderMark(fleet.id, fleet.owner, fleet.kind)
        for fleet in view.fleets.values()
        if fleet.role is Role.LEADER and fleet.at is not None and fleet.kind is not None
    }
    labels = region_of_each_member(board, view.colonies, leaders, view.unification)
    systems = []
    first_id = board.system_id(0)
    terrain, colonies, artifacts = board.terrain, view.colonies, view.artifacts
    destroyed, unification = view.destroyed, view.unification
    for cell, (x, y) in enumerate(board.coords):
        label = labels.get(cell)
        systems.append(
            SystemView(
                cell,
                first_id + 2 * cell,
                x,
                y,
                terrain[cell],
                colonies.get(cell),
                cell in artifacts,
                cell in destroyed,
                leaders.get(cell),
                None if label is None else first_id + 2 * label,
                cell in unification,
            )
        )
    width = max((len(row) for row in board.rows), default=0)
    return Galaxy(
        width, len(board.rows), tuple(systems), _outlines(board, labels), dict(view.players), _combat(view)
    )


def _combat(view: PlayerView) -> CombatMark | None:
    """The running conflict of a combat turn (the first queued one), as cells."""
    if view.phase is not Phase.COMBAT or not view.conflicts:
        return None
    conflict = view.conflicts[0]
    attacker, defender = view.fleets.get(conflict.attacker), view.fleets.get(conflict.defender)
    return CombatMark(
        attacker.at if attacker is not None else None,
        defender.at if defender is not None else None,
        conflict.unification,
    )


def _outlines(board: Board, labels: dict[int, int]) -> tuple:
    """For each region, the cell edges between a member and anything outside its region."""
    edges: dict[int, list[tuple[int, int, int, int]]] = {}
    for cell, label in labels.items():
        x, y = board.coords[cell]
        own = edges.setdefault(label, [])
        for dx, dy, edge in (
            (0, 1, (x, y + 1, x + 1, y + 1)),
            (0, -1, (x, y, x + 1, y)),
            (-1, 0, (x, y, x, y + 1)),
            (1, 0, (x + 1, y, x + 1, y + 1)),
        ):
            other = board.cell_at(x + dx, y + dy)
            if other is None or labels.get(other) != label:
                own.append(edge)
    return tuple((board.system_id(label), tuple(edges[label])) for label in sorted(edges))


def describe(system: SystemView, names: dict[int, str]) -> str:
    """The tooltip of a system: everything the map shows about it, in words."""
    parts = [f"System {system.name}", TERRAIN_NAMES.get(system.terrain, system.terrain)]
    if system.destroyed:
        parts.append("destroyed")
    if system.colony is not None:
        parts.append(f"{system.colony.label} colony")
    if system.artifact:
        parts.append("alien artifact")
    if system.leader is not None:
        owner = names.get(system.leader.owner, f"player {system.leader.owner}")
        parts.append(f"{owner}'s {LEADER_NAMES[system.leader.kind]}")
    if system.unification:
        parts.append("pending unification")
    if system.region is not None:
        parts.append(f"region {system.region}")
    return " · ".join(parts)
