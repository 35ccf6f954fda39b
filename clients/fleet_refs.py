"""Naming fleets and targets the way a player types them.

Fleets
------
A fleet is named by its object id (``356``) or by what it is:

====================================  ===========================================
``merchant-leader`` … ``mining-leader``  one of my four leaders (also ``leader:merchant``)
``bomber``                             one of my bombers
``colonist:merchant``                  one of my colonists of that type (also
                                       ``merchant-colonist``); types: merchant,
                                       scientist, settler, mining
``colonist``                           any of my colonists
====================================  ===========================================

A name that fits several fleets (two bombers, three scientist colonists) picks the lowest id
that has no order yet, and, when one turn file names the same kind twice, a different fleet
each time (``FleetPicker``). My colonists' types come from their designs, which only their
owner can see; opponents' colonists are ``colonist:?``.

Targets
-------
A target is a board system: ``x,y`` (``"3,2"``, ``"(3, 2)"``, a list ``[3, 2]`` in a file) or
an object id (``"#22"``, ``"22"``, ``22``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .game_api import TaeGame
from .tae_model import ColonyKind, FleetKind, FleetView

__all__ = [
    "FleetPicker",
    "FleetSelector",
    "Target",
    "fleet_ref",
    "parse_fleet_selector",
    "parse_target",
    "resolve_target",
]

_KINDS = {kind.value: kind for kind in ColonyKind}
_KINDS.update({"miner": ColonyKind.MINING, "mine": ColonyKind.MINING})
_TARGET_XY = re.compile(r"^\s*\(?\s*(-?\d+)\s*[, ]\s*(-?\d+)\s*\)?\s*$")
_TARGET_ID = re.compile(r"^\s*#?\s*(\d+)\s*$")


@dataclass(frozen=True, slots=True)
class FleetSelector:
    """A parsed fleet name: an ``id``, or a ``kind`` (and for leaders/colonists a ``type``)."""

    text: str
    id: int | None = None
    kind: FleetKind | None = None
    type: ColonyKind | None = None

    def matches(self, fleet: FleetView) -> bool:
        if self.id is not None:
            return fleet.id == self.id
        if fleet.kind is not self.kind:
            return False
        return self.type is None or fleet.colony_kind is self.type

    @property
    def by_id(self) -> bool:
        return self.id is not None


def fleet_ref(fleet: FleetView) -> str:
    """The canonical name of a fleet's kind: ``scientist-leader``, ``bomber``,
    ``colonist:merchant`` (``colonist:?`` when the type is hidden)."""
    if fleet.kind is FleetKind.LEADER and fleet.colony_kind is not None:
        return f"{fleet.colony_kind.value}-leader"
    if fleet.kind is FleetKind.BOMBER:
        return "bomber"
    if fleet.kind is FleetKind.COLONIST:
        return f"colonist:{fleet.colony_kind.value if fleet.colony_kind else '?'}"
    return fleet.name.lower().replace(" ", "-")


def parse_fleet_selector(value: object) -> FleetSelector:
    """Parse a fleet name (see the module docstring); ValueError with a message for the user."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a fleet (an id or a name like scientist-leader)")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"{value} is not a fleet id")
        return FleetSelector(str(value), id=value)
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not a fleet (an id or a name like scientist-leader)")
    text = value.strip().lower()
    match = _TARGET_ID.match(text)
    if match:
        return FleetSelector(value, id=int(match.group(1)))
    words = [w for w in re.split(r"[\s:_\-/]+", text) if w]
    if words in (["bomber"], ["bombers"]):
        return FleetSelector(value, kind=FleetKind.BOMBER)
    if words in (["colonist"], ["colonists"]):
        return FleetSelector(value, kind=FleetKind.COLONIST)
    if len(words) == 2:
        for role, fleet_kind in (("leader", FleetKind.LEADER), ("colonist", FleetKind.COLONIST)):
            if role in words:
                other = words[1] if words[0] == role else words[0]
                if other in _KINDS:
                    return FleetSelector(value, kind=fleet_kind, type=_KINDS[other])
    raise ValueError(
        f"{value!r} is not a fleet: use an id, merchant-leader, scientist-leader, "
        "settler-leader, mining-leader, bomber or colonist:TYPE "
        "(TYPE merchant, scientist, settler or mining)"
    )


class FleetPicker:
    """Chooses my fleets for selectors, never the same fleet twice (one turn file, one order
    per fleet). Fleets without queued orders are preferred, then the lowest id."""

    def __init__(self, game: TaeGame, *, ignore_queued: bool = False) -> None:
        self.game = game
        self.ignore_queued = ignore_queued  # True when the queued orders are to be replaced
        self.taken: set[int] = set()

    def _busy(self, fleet: FleetView) -> bool:
        return bool(fleet.orders) and not self.ignore_queued

    def candidates(self, selector: FleetSelector) -> list[FleetView]:
        mine = [f for f in self.game.my_fleets() if selector.matches(f)]
        return sorted(mine, key=lambda f: (self._busy(f), f.id))

    def pick(self, selector: FleetSelector) -> FleetView:
        """My fleet for ``selector``; LookupError (with a message) when there is none."""
        if selector.id is not None:
            fleet = self.game.fleet(selector.id)
            if fleet is None:
                raise LookupError(f"there is no fleet {selector.id}")
            if fleet.owner != self.game.player_id:
                raise LookupError(f"fleet {selector.id} ({fleet_ref(fleet)}) is not yours")
            self.taken.add(fleet.id)
            return fleet
        free = [f for f in self.candidates(selector) if f.id not in self.taken]
        if not free:
            what = selector.text.strip()
            if self.candidates(selector):
                raise LookupError(f"no other fleet of yours is a {what}")
            raise LookupError(f"you have no {what}")
        self.taken.add(free[0].id)
        return free[0]

    def pick_many(self, selector: FleetSelector | None, count: int, accepts: int) -> list[FleetView]:
        """``count`` of my fleets (matching ``selector`` if given) that accept order type
        ``accepts`` now and have no order queued: for "Reinforce with N"."""
        fleets = self.game.my_fleets() if selector is None else self.candidates(selector)
        free = [
            f
            for f in sorted(fleets, key=lambda f: f.id)
            if f.id not in self.taken
            and accepts in f.order_types
            and not self._busy(f)
            and (selector is None or selector.matches(f))
        ]
        if len(free) < count:
            what = f" ({selector.text.strip()})" if selector is not None else ""
            raise LookupError(f"only {len(free)} of your fleets{what} can take this order now, {count} asked")
        chosen = free[:count]
        self.taken.update(f.id for f in chosen)
        return chosen


@dataclass(frozen=True, slots=True)
class Target:
    """A target as typed: a position ``xy`` or an object ``id``."""

    xy: tuple[int, int] | None = None
    id: int | None = None

    def __str__(self) -> str:
        return f"{self.xy[0]},{self.xy[1]}" if self.xy is not None else f"#{self.id}"


def parse_target(value: object) -> Target:
    """``"x,y"``, ``[x, y]``, ``"#id"``, ``"id"`` or an int id → ``Target``; ValueError."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a target")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"{value} is not an object id")
        return Target(id=value)
    if isinstance(value, (list, tuple)):
        if len(value) == 2 and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            return Target(xy=(value[0], value[1]))
        raise ValueError(f"{value!r} is not a target: a position is two whole numbers [x, y]")
    if isinstance(value, str):
        match = _TARGET_XY.match(value)
        if match:
            return Target(xy=(int(match.group(1)), int(match.group(2))))
        match = _TARGET_ID.match(value)
        if match:
            return Target(id=int(match.group(1)))
    raise ValueError(f"{value!r} is not a target: use x,y or a star system's object id")


def resolve_target(game: TaeGame, target: Target) -> int:
    """The object id a target names; LookupError for a position that is not on the board.
    Ids are passed on as given: the server judges them."""
    if target.id is not None:
        return target.id
    assert target.xy is not None  # a Target is an id or a position
    system_id = game.system_id_at(*target.xy)
    if system_id is None:
        width, height = game.board_size()
        raise LookupError(
            f"there is no board system at {target} (the board is x 0..{width - 1}, y 0..{height - 1})"
        )
    return system_id
