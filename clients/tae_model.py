"""The TaE vocabulary a client reads off the wire: object types, resources, order type names, the
colony and fleet kinds, and the values a game is shown as (board squares, fleets, scores).

Plain values only; ``clients.game_api.TaeGame`` builds them from a cache (spec/ruleset.md
§2–§4, §12).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from protocol import Order

__all__ = [
    "ATTACK",
    "COLONIZE",
    "COLONIZE_MINING",
    "MOVE",
    "REINFORCE",
    "ColonyKind",
    "FleetKind",
    "FleetView",
    "Scores",
    "SystemView",
    "compute_regions",
    "parse_system_name",
    "square_letter",
]

# Object types (spec/ruleset.md §3.1) and planet resources (§3.2).
UNIVERSE, GALAXY, STAR_SYSTEM, PLANET, FLEET = 0, 1, 2, 3, 4
RES_UNINHABITABLE, RES_DESTROYED, RES_ARTIFACT = 1, 2, 3

# Order type names (§4.1); their ids come from the server's OrderDescs.
COLONIZE_MINING, COLONIZE, MOVE, ATTACK, REINFORCE = (
    "ColonizeMining",
    "Colonize",
    "Move",
    "Attack",
    "Reinforce",
)


class ColonyKind(str, enum.Enum):
    """The four colonist (and leader, and colony) types, with their score letter."""

    MERCHANT = "merchant"
    SCIENTIST = "scientist"
    SETTLER = "settler"
    MINING = "mining"

    @property
    def resource_id(self) -> int:
        return _RESOURCE_OF[self]


class FleetKind(str, enum.Enum):
    LEADER = "leader"
    COLONIST = "colonist"
    BOMBER = "bomber"
    OTHER = "other"


COLONY_RESOURCES = {
    4: ColonyKind.MERCHANT,
    5: ColonyKind.SCIENTIST,
    6: ColonyKind.SETTLER,
    7: ColonyKind.MINING,
}
_RESOURCE_OF = {kind: resource for resource, kind in COLONY_RESOURCES.items()}
LEADER_NAMES = {f"{kind.value.capitalize()} Leader": kind for kind in ColonyKind}
DESIGN_NAMES = {f"{kind.value.capitalize()}Ship": kind for kind in ColonyKind}
_SYSTEM_NAME = re.compile(r"^\s*(-?\d+)\s*,\s*(-?\d+)\s*$")
NO_OWNER = (0, -1, 0xFFFFFFFF)


def parse_system_name(name: str) -> tuple[int, int] | None:
    """(x, y) of a board system named ``"x, y"``; None for any other name."""
    match = _SYSTEM_NAME.match(name)
    return (int(match.group(1)), int(match.group(2))) if match else None


@dataclass(frozen=True, slots=True)
class Scores:
    """A player's scores as reported in a "Turn complete" message (R27: only there), or, once the
    game is over, as its final ranking gives them (`distributed`)."""

    money: int
    technology: int
    people: int
    raw_materials: int
    artifacts: int
    turn: int = 0
    # True for the final standing of a game that is over: the artifacts are already counted in
    # the categories (R25 distributes them), so `final` is the lowest category.
    distributed: bool = False

    @property
    def by_kind(self) -> dict[ColonyKind, int]:
        return {
            ColonyKind.MERCHANT: self.money,
            ColonyKind.SCIENTIST: self.technology,
            ColonyKind.SETTLER: self.people,
            ColonyKind.MINING: self.raw_materials,
        }

    @property
    def final(self) -> int:
        """The end-of-game score (R25): artifacts fill the lowest categories, then the minimum."""
        values = sorted(self.by_kind.values())
        if self.distributed:
            return values[0]
        for _ in range(self.artifacts):
            values[0] += 1
            values.sort()
        return values[0]


@dataclass(frozen=True, slots=True)
class SystemView:
    """One board square."""

    id: int
    x: int
    y: int
    name: str
    planet_id: int | None
    habitable: bool  # False for terrain 'M' (only mining colonists)
    destroyed: bool
    colony: ColonyKind | None
    artifact: bool
    region: int  # 0: in no region
    leaders: tuple[int, ...] = ()  # fleet ids of the leaders on this square

    @property
    def position(self) -> tuple[int, int]:
        return (self.x, self.y)

    @property
    def terrain(self) -> str:
        """The map letter: 'A' artifact system, 'M' uninhabitable, '.' habitable."""
        if self.artifact:
            return "A"
        return "." if self.habitable else "M"

    @property
    def empty(self) -> bool:
        """No colony, no leader, not destroyed: a square one might colonize or move to."""
        return self.colony is None and not self.leaders and not self.destroyed


@dataclass(frozen=True, slots=True)
class FleetView:
    """One fleet: its kind, type (leader/colonist type), owner, square and orders."""

    id: int
    name: str
    owner: int | None
    kind: FleetKind
    colony_kind: ColonyKind | None  # the leader's or colonist's type; None if hidden/none
    system_id: int | None  # the board system it is on, None when at home
    position: tuple[int, int] | None
    order_holder: int | None  # object id (TP03) or order-queue id (TP04)
    order_types: tuple[int, ...]
    orders: tuple[Order | None, ...]
    designs: tuple[int, ...] = ()


def compute_regions(views: Iterable[SystemView], without: Collection[int] = ()) -> dict[int, int]:
    """Region id per system id, by flood fill over orthogonal neighbours (R4, R5), for TP03,
    which does not send regions. ``without``: system ids known to be in no region (a pending
    unification system, R16). A region's id is its smallest system id."""
    members = {
        view.position: view
        for view in views
        if not view.destroyed and (view.colony is not None or view.leaders) and view.id not in without
    }
    region_of: dict[int, int] = {}
    seen: set[tuple[int, int]] = set()
    for start in sorted(members):
        if start in seen:
            continue
        component, stack = [], [start]
        seen.add(start)
        while stack:
            x, y = stack.pop()
            component.append(members[(x, y)])
            for step in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
                if step in members and step not in seen:
                    seen.add(step)
                    stack.append(step)
        region_id = min(view.id for view in component)
        for view in component:
            region_of[view.id] = region_id
    return region_of


COLONY_LETTERS = {
    ColonyKind.MERCHANT: "m",
    ColonyKind.SCIENTIST: "s",
    ColonyKind.SETTLER: "p",
    ColonyKind.MINING: "r",
}


def square_letter(view: SystemView | None) -> str:
    """The letter of ``TaeGame.render``."""
    if view is None:
        return " "
    if view.destroyed:
        return "#"
    if view.leaders:
        return "L"
    if view.artifact:
        return "A"
    if view.colony is not None:
        return COLONY_LETTERS[view.colony]
    return view.terrain
