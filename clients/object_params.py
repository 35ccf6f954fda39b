"""Reading the TaE facts out of one object, in either protocol version: its owner, a planet's
resources, a fleet's ship designs, and TP04 parameter groups by name.

TP03 objects carry fixed extra data per type (``PlanetExtra``, ``FleetExtra``); TP04 objects
carry parameter groups described by their type's ``ObjectDesc`` (spec/protocol.md §3).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from protocol import (
    AnyObject,
    FleetExtra,
    IntegerParam,
    ObjectDesc,
    PlanetExtra,
    ReferenceParam,
    ReferenceQuantityListParam,
    ReferenceType,
    ResourceAmount,
    ResourceListParam,
    Tp03Object,
    Tp04Object,
)

from .tae_model import NO_OWNER

__all__ = ["designs", "group_values", "named_integers", "owner", "resources"]


def group_values(descs: Mapping[int, ObjectDesc], obj: Tp04Object, name: str) -> tuple[Any, ...] | None:
    """The values of a TP04 object's parameter group ``name`` (None: no such group)."""
    desc = descs.get(obj.type)
    if desc is None:
        return None
    for group_desc, values in zip(desc.groups, obj.groups):
        if group_desc.name == name:
            return values
    return None


def named_integers(descs: Mapping[int, ObjectDesc], obj: AnyObject, group_name: str) -> dict[str, int]:
    """A TP04 object's Integer parameters of one group, by parameter name ({} in TP03)."""
    if not isinstance(obj, Tp04Object):
        return {}
    desc = descs.get(obj.type)
    if desc is None:
        return {}
    found = {}
    for group_desc, values in zip(desc.groups, obj.groups):
        if group_desc.name != group_name:
            continue
        for param_desc, value in zip(group_desc.params, values):
            if isinstance(value, IntegerParam):
                found[param_desc.name] = value.value
    return found


def resources(planet: AnyObject) -> dict[int, int]:
    """Resource id → amount stored on a planet (TP03 extra data, TP04 ResourceList)."""
    entries: tuple[ResourceAmount, ...] = ()
    if isinstance(planet, Tp03Object):
        if isinstance(planet.extra, PlanetExtra):
            entries = planet.extra.resources
    else:
        for group in planet.groups:
            for param in group:
                if isinstance(param, ResourceListParam):
                    entries = param.resources
    amounts: dict[int, int] = {}
    for entry in entries:
        amounts[entry.resource_id] = amounts.get(entry.resource_id, 0) + entry.stored
    return amounts


def owner(obj: AnyObject) -> int | None:
    """The owning player's id, None for nobody (TP03 extra data, TP04 Reference to a Player)."""
    found = -1
    if isinstance(obj, Tp03Object):
        found = getattr(obj.extra, "owner", -1)
    else:
        for group in obj.groups:
            for param in group:
                if isinstance(param, ReferenceParam) and param.type == ReferenceType.PLAYER:
                    found = param.id
                    break
    return None if found in NO_OWNER else found


def designs(obj: AnyObject) -> tuple[int, ...]:
    """The design ids of a fleet's ships (TP03 ships, TP04 ReferenceQuantityList)."""
    if isinstance(obj, Tp03Object):
        if isinstance(obj.extra, FleetExtra):
            return tuple(ship.design for ship in obj.extra.ships if ship.count > 0)
        return ()
    for group in obj.groups:
        for param in group:
            if isinstance(param, ReferenceQuantityListParam):
                return tuple(
                    item.id for item in param.items if item.type == ReferenceType.DESIGN and item.number > 0
                )
    return ()
