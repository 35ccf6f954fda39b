"""Small immutable records used inside messages: list items and vectors.

They are ``NamedTuple`` rather than dataclasses because they are list items decoded by the
thousand (an ID list of 87 378 entries is legal, §1.1): tuples are cheap to make, and they compare
equal to plain tuples, so ``Fail(1, "x", ((7, 3),))`` and the decoded
``Fail(1, "x", (Reference(ReferenceType.PLAYER, 3),))`` are the same message.
"""

from __future__ import annotations

from typing import NamedTuple

from .enums import GameParamId, ReferenceType


class Vec3(NamedTuple):
    """A position, velocity or distance in space (s64 each)."""

    x: int
    y: int
    z: int


class Reference(NamedTuple):
    """A (reftype, refid) pair of the reference system (§7.2)."""

    type: ReferenceType | int
    id: int


class IdModtime(NamedTuple):
    """One entry of an IDSequence: an id and the modtime of the thing it names (§5.5)."""

    id: int
    modtime: int


class IdCount(NamedTuple):
    """An (id, count) pair: an order's resources, a design's components, a List selection."""

    id: int
    count: int  # type: ignore[assignment]  # the wire's name; shadows tuple.count on purpose


class ResourceAmount(NamedTuple):
    """A resource on an object: TP03 Planet extra data and the TP04 ResourceList parameter."""

    resource_id: int
    stored: int
    minable: int
    unavailable: int


class ShipCount(NamedTuple):
    """A TP03 fleet's ships: (design id, count)."""

    design: int
    count: int  # type: ignore[assignment]  # the wire's name; shadows tuple.count on purpose


class ReferenceQuantity(NamedTuple):
    """An entry of a TP04 ReferenceQuantityList parameter: fleets use (Design, id, count)."""

    type: ReferenceType | int
    id: int
    number: int


class IdText(NamedTuple):
    """An (id, string) pair: Design properties (id, display) and Component properties
    (id, value function)."""

    id: int
    text: str


class GameConnection(NamedTuple):
    """How to reach a game (TP04 Game frame): service type ("tp", "tps", …), host name, IP, port."""

    type: str
    dns: str
    ip: str
    port: int


class GameParam(NamedTuple):
    """A TP04 Game parameter: its id (``GameParamId``), a string value and an integer value."""

    id: GameParamId | int
    text: str
    number: int
