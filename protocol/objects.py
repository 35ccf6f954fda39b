"""Object frames (7, and TP04's ModifyObject 71) and object descriptions (68).

TP03 and TP04 Object frames differ so much (§3.1 vs §3.2, §9.1) that they are two classes:

* ``Tp03Object``: fixed fields (size, position, velocity, order types, order count) and, for the
  six TP03 object types, fixed extra data: a ``Tp03Extra`` record whose class *is* the object
  type (``UniverseExtra`` → 0 … ``WormholeExtra`` → 5), so an object cannot claim one type and
  carry another's data.
* ``Tp04Object``: name, description, parent, contains, then parameter values grouped as the
  object type's ``ObjectDesc`` says: ``groups`` holds one tuple per group, in description order,
  of ``ObjectParam`` values (``PositionParam``, ``ReferenceParam``, …). There are no group
  headers on the wire, so decoding needs the description (``decode(frame, object_descs=…)``);
  encoding does not, since every value knows its own layout.

``AnyObject`` is the union; ``decode`` returns whichever the frame's version calls for.

The wire layouts are declared with construct below (``TP03_OBJECT_HEAD``, ``TP03_EXTRAS``,
``TP04_OBJECT_HEAD``, ``OBJECT_PARAMS``). Because servers encode and clients decode hundreds of
objects per turn, ``decode``/``encode`` use the hand-written ``struct`` code of this module instead
(several times faster, see tests/benchmarks/bench_protocol.py); ``*_with_construct`` run the
declarations themselves, and the tests hold the two to the same bytes.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from io import BytesIO
from typing import Any, ClassVar, NamedTuple

from .enums import FailCode, FrameType, ObjectParamType, ReferenceType, Version, coerce
from .errors import MissingDescriptionError, ProtocolError
from .messages import Message
from .packing import (
    TWO_U32,
    U32,
    U64,
    pack_records,
    pack_string,
    pack_u32_list,
    read_records,
    read_string,
    read_u32_list,
)
from .records import ReferenceQuantity, ResourceAmount, ShipCount, Vec3
from .schema import (
    J32,
    S32,
    S64,
    STRING,
    TIME,
    Field,
    LeftoverBytes,
    List,
    Pad,
    StructCodec,
    TruncatedBody,
    Tuple,
    tuple_of,
    wire,
)
from .schema import (
    U32 as U32_FIELD,
)
from .schema import (
    U64 as U64_FIELD,
)

# --------------------------------------------------------------------------------------------
# Object descriptions (TP04)
# --------------------------------------------------------------------------------------------


class ObjectParamDesc(NamedTuple):
    """One parameter of an object type: its client-visible ``name`` and ``ObjectParamType``."""

    name: str
    type: ObjectParamType | int
    description: str


class ObjectParamGroupDesc(NamedTuple):
    """A parameter group (e.g. 1 "Positional"). Clients address groups by name (§3.3)."""

    id: int
    name: str
    description: str
    params: tuple[ObjectParamDesc, ...]


def _group_desc(
    group_id: int, name: str, description: str, params: Iterable[tuple[str, int, str]]
) -> ObjectParamGroupDesc:
    return ObjectParamGroupDesc(
        group_id,
        name,
        description,
        tuple([ObjectParamDesc(n, coerce(ObjectParamType, t), d) for n, t, d in params]),
    )


@wire(
    tp04=[
        Field("id", U32_FIELD),
        Field("name", STRING),
        Field("description", STRING),
        Field("modtime", TIME),
        Field(
            "groups",
            List(Tuple(U32_FIELD, STRING, STRING, List(Tuple(STRING, U32_FIELD, STRING)))),
            tuple_of(_group_desc),
        ),
    ]
)
@dataclass(frozen=True, slots=True)
class ObjectDesc(Message):
    """68 ObjectDesc (TP04): the parameter groups of an object type, in wire order.

    The final DOC4 defines no per-parameter extra data, so a parameter is just (name, type,
    description) (§3.2, Appendix A.6). Bump ``modtime`` when a type changes: clients cache these.
    """

    TYPE: ClassVar[FrameType] = FrameType.OBJECT_DESC
    id: int
    name: str
    description: str
    modtime: int
    groups: tuple[ObjectParamGroupDesc, ...]

    def param_types(self) -> tuple[tuple[ObjectParamType | int, ...], ...]:
        """The parameter types, group by group: the shape ``Tp04Object.groups`` must have."""
        return tuple(tuple(param.type for param in group.params) for group in self.groups)

    def check(self, obj: Tp04Object) -> None:
        """Raise ValueError unless ``obj`` has this description's type and parameter layout.

        Encoding does not look at descriptions, so a server can call this where it builds its
        object views to catch a view that a client would mis-parse.
        """
        if obj.type != self.id:
            raise ValueError(f"object {obj.id} has type {obj.type}, description is for {self.id}")
        actual = tuple(tuple(param.PARAM_TYPE for param in group) for group in obj.groups)
        if actual != self.param_types():
            raise ValueError(f"object {obj.id}: parameter types {actual} do not match {self.param_types()}")


# --------------------------------------------------------------------------------------------
# TP04 object parameter values
# --------------------------------------------------------------------------------------------


class ObjectParam:
    """Base of the TP04 object parameter values; ``PARAM_TYPE`` is the ``ObjectParamType``."""

    __slots__ = ()
    PARAM_TYPE: ClassVar[ObjectParamType]


@dataclass(frozen=True, slots=True)
class PositionParam(ObjectParam):
    """0 Position3d: ``relative`` is the object id the vector is relative to (0: absolute)."""

    PARAM_TYPE: ClassVar[ObjectParamType] = ObjectParamType.POSITION_3D
    x: int
    y: int
    z: int
    relative: int = 0


@dataclass(frozen=True, slots=True)
class VelocityParam(ObjectParam):
    """1 Velocity3d."""

    PARAM_TYPE: ClassVar[ObjectParamType] = ObjectParamType.VELOCITY_3D
    x: int
    y: int
    z: int
    relative: int = 0


@dataclass(frozen=True, slots=True)
class AccelerationParam(ObjectParam):
    """2 Acceleration3d."""

    PARAM_TYPE: ClassVar[ObjectParamType] = ObjectParamType.ACCELERATION_3D
    x: int
    y: int
    z: int
    relative: int = 0


@dataclass(frozen=True, slots=True)
class BoundPositionParam(ObjectParam):
    """3 BoundPosition: the slot in the parent object."""

    PARAM_TYPE: ClassVar[ObjectParamType] = ObjectParamType.BOUND_POSITION
    slot: int


@dataclass(frozen=True, slots=True)
class OrderQueueParam(ObjectParam):
    """4 OrderQueue: the queue id (0 when the viewer does not own the queue, §4.5)."""

    PARAM_TYPE: ClassVar[ObjectParamType] = ObjectParamType.ORDER_QUEUE
    queue_id: int


@dataclass(frozen=True, slots=True)
class ResourceListParam(ObjectParam):
    """5 ResourceList."""

    PARAM_TYPE: ClassVar[ObjectParamType] = ObjectParamType.RESOURCE_LIST
    resources: tuple[ResourceAmount, ...] = ()


@dataclass(frozen=True, slots=True)
class ReferenceParam(ObjectParam):
    """6 Reference: an owner is (``ReferenceType.PLAYER``, player id)."""

    PARAM_TYPE: ClassVar[ObjectParamType] = ObjectParamType.REFERENCE
    type: ReferenceType | int
    id: int


@dataclass(frozen=True, slots=True)
class ReferenceQuantityListParam(ObjectParam):
    """7 ReferenceQuantityList: a fleet's ships are (``ReferenceType.DESIGN``, design, count)."""

    PARAM_TYPE: ClassVar[ObjectParamType] = ObjectParamType.REFERENCE_QUANTITY_LIST
    items: tuple[ReferenceQuantity, ...] = ()


@dataclass(frozen=True, slots=True)
class IntegerParam(ObjectParam):
    """8 Integer (u32)."""

    PARAM_TYPE: ClassVar[ObjectParamType] = ObjectParamType.INTEGER
    value: int


@dataclass(frozen=True, slots=True)
class SizeParam(ObjectParam):
    """9 Size: the diameter (u64)."""

    PARAM_TYPE: ClassVar[ObjectParamType] = ObjectParamType.SIZE
    size: int


@dataclass(frozen=True, slots=True)
class MediaParam(ObjectParam):
    """10 Media: a URL, absolute or relative to Game.media_base."""

    PARAM_TYPE: ClassVar[ObjectParamType] = ObjectParamType.MEDIA
    url: str


@dataclass(frozen=True, slots=True)
class InfluenceParam(ObjectParam):
    """11 Influence: a diameter (u64). Only PY4 knows it (§3.2)."""

    PARAM_TYPE: ClassVar[ObjectParamType] = ObjectParamType.INFLUENCE
    diameter: int


def _reference_quantity(reftype: int, refid: int, number: int) -> ReferenceQuantity:
    return ReferenceQuantity(coerce(ReferenceType, reftype), refid, number)


#: The construct declaration of every object parameter type: (value class, fields).
OBJECT_PARAMS: dict[ObjectParamType, tuple[type[ObjectParam], list[Field]]] = {
    ObjectParamType.POSITION_3D: (
        PositionParam,
        [Field("x", S64), Field("y", S64), Field("z", S64), Field("relative", U32_FIELD)],
    ),
    ObjectParamType.VELOCITY_3D: (
        VelocityParam,
        [Field("x", S64), Field("y", S64), Field("z", S64), Field("relative", U32_FIELD)],
    ),
    ObjectParamType.ACCELERATION_3D: (
        AccelerationParam,
        [Field("x", S64), Field("y", S64), Field("z", S64), Field("relative", U32_FIELD)],
    ),
    ObjectParamType.BOUND_POSITION: (BoundPositionParam, [Field("slot", S32)]),
    ObjectParamType.ORDER_QUEUE: (OrderQueueParam, [Field("queue_id", U32_FIELD)]),
    ObjectParamType.RESOURCE_LIST: (
        ResourceListParam,
        [
            Field(
                "resources",
                List(Tuple(U32_FIELD, U32_FIELD, U32_FIELD, U32_FIELD)),
                tuple_of(ResourceAmount),
            )
        ],
    ),
    ObjectParamType.REFERENCE: (
        ReferenceParam,
        [Field("type", S32, lambda value: coerce(ReferenceType, value)), Field("id", U32_FIELD)],
    ),
    ObjectParamType.REFERENCE_QUANTITY_LIST: (
        ReferenceQuantityListParam,
        [
            Field(
                "items",
                List(Tuple(S32, U32_FIELD, U32_FIELD)),
                tuple_of(_reference_quantity),
            )
        ],
    ),
    ObjectParamType.INTEGER: (IntegerParam, [Field("value", U32_FIELD)]),
    ObjectParamType.SIZE: (SizeParam, [Field("size", U64_FIELD)]),
    ObjectParamType.MEDIA: (MediaParam, [Field("url", STRING)]),
    ObjectParamType.INFLUENCE: (InfluenceParam, [Field("diameter", U64_FIELD)]),
}


# --------------------------------------------------------------------------------------------
# TP04 Object
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Tp04Object(Message):
    """7 Object, TP04 form (§3.2).

    ``type`` indexes the ObjectDesc; ``parent`` is the container (0 for the universe);
    ``contains`` lists only objects visible to this player; ``groups`` holds the parameter
    values, one tuple per group of the description, in order.
    """

    TYPE: ClassVar[FrameType] = FrameType.OBJECT
    id: int
    type: int
    name: str
    description: str
    parent: int
    contains: tuple[int, ...]
    modtime: int
    groups: tuple[tuple[ObjectParam, ...], ...] = ()


@dataclass(frozen=True, slots=True)
class ModifyObject(Tp04Object):
    """71 ModifyObject (TP04): an Object body sent by a client. SRV does not implement it."""

    TYPE: ClassVar[FrameType] = FrameType.MODIFY_OBJECT


#: Construct declaration of the TP04 Object frame up to its parameter data.
TP04_OBJECT_HEAD: list[Field] = [
    Field("id", U32_FIELD),
    Field("type", U32_FIELD),
    Field("name", STRING),
    Field("description", STRING),
    Field("parent", U32_FIELD),
    Field("contains", List(U32_FIELD), tuple),
    Field("modtime", TIME),
    Field("_padding", Pad(16)),
]

_XYZR = struct.Struct(">qqqI")
_S32 = struct.Struct(">i")
_S32_U32 = struct.Struct(">iI")
_RESOURCE = struct.Struct(">IIII")
_REF_QUANTITY = struct.Struct(">iII")
_PAD16 = bytes(16)
_TP04_HEAD_TAIL = struct.Struct(">Q16x")
_REFERENCE_TYPES = ReferenceType._value2member_map_


ParamReader = Callable[[bytes, int], tuple[ObjectParam, int]]


def _read_vector(cls: type[PositionParam | VelocityParam | AccelerationParam]) -> ParamReader:
    def read(body: bytes, offset: int) -> tuple[ObjectParam, int]:
        x, y, z, relative = _XYZR.unpack_from(body, offset)
        return cls(x, y, z, relative), offset + 28

    return read


def _read_bound_position(body: bytes, offset: int) -> tuple[ObjectParam, int]:
    return BoundPositionParam(_S32.unpack_from(body, offset)[0]), offset + 4


def _read_order_queue(body: bytes, offset: int) -> tuple[ObjectParam, int]:
    return OrderQueueParam(U32.unpack_from(body, offset)[0]), offset + 4


def _read_resource_list(body: bytes, offset: int) -> tuple[ObjectParam, int]:
    records, offset = read_records(body, offset, _RESOURCE)
    return ResourceListParam(tuple([ResourceAmount(*record) for record in records])), offset


def _read_reference(body: bytes, offset: int) -> tuple[ObjectParam, int]:
    reftype, refid = _S32_U32.unpack_from(body, offset)
    return ReferenceParam(_REFERENCE_TYPES.get(reftype, reftype), refid), offset + 8


def _read_reference_quantities(body: bytes, offset: int) -> tuple[ObjectParam, int]:
    records, offset = read_records(body, offset, _REF_QUANTITY)
    types = _REFERENCE_TYPES
    items = tuple([ReferenceQuantity(types.get(t, t), i, n) for t, i, n in records])
    return ReferenceQuantityListParam(items), offset


def _read_integer(body: bytes, offset: int) -> tuple[ObjectParam, int]:
    return IntegerParam(U32.unpack_from(body, offset)[0]), offset + 4


def _read_size(body: bytes, offset: int) -> tuple[ObjectParam, int]:
    return SizeParam(U64.unpack_from(body, offset)[0]), offset + 8


def _read_media(body: bytes, offset: int) -> tuple[ObjectParam, int]:
    url, offset = read_string(body, offset)
    return MediaParam(url), offset


def _read_influence(body: bytes, offset: int) -> tuple[ObjectParam, int]:
    return InfluenceParam(U64.unpack_from(body, offset)[0]), offset + 8


_PARAM_READERS: dict[ObjectParamType | int, ParamReader] = {
    ObjectParamType.POSITION_3D: _read_vector(PositionParam),
    ObjectParamType.VELOCITY_3D: _read_vector(VelocityParam),
    ObjectParamType.ACCELERATION_3D: _read_vector(AccelerationParam),
    ObjectParamType.BOUND_POSITION: _read_bound_position,
    ObjectParamType.ORDER_QUEUE: _read_order_queue,
    ObjectParamType.RESOURCE_LIST: _read_resource_list,
    ObjectParamType.REFERENCE: _read_reference,
    ObjectParamType.REFERENCE_QUANTITY_LIST: _read_reference_quantities,
    ObjectParamType.INTEGER: _read_integer,
    ObjectParamType.SIZE: _read_size,
    ObjectParamType.MEDIA: _read_media,
    ObjectParamType.INFLUENCE: _read_influence,
}


def _write_vector(param: Any) -> bytes:
    return _XYZR.pack(param.x, param.y, param.z, param.relative)


_PARAM_WRITERS: dict[type[ObjectParam], Callable[[Any], bytes]] = {
    PositionParam: _write_vector,
    VelocityParam: _write_vector,
    AccelerationParam: _write_vector,
    BoundPositionParam: lambda param: _S32.pack(param.slot),
    OrderQueueParam: lambda param: U32.pack(param.queue_id),
    ResourceListParam: lambda param: pack_records(param.resources, _RESOURCE),
    ReferenceParam: lambda param: _S32_U32.pack(param.type, param.id),
    ReferenceQuantityListParam: lambda param: pack_records(param.items, _REF_QUANTITY),
    IntegerParam: lambda param: U32.pack(param.value),
    SizeParam: lambda param: U64.pack(param.size),
    MediaParam: lambda param: pack_string(param.url),
    InfluenceParam: lambda param: U64.pack(param.diameter),
}


def find_object_desc(object_descs: Mapping[int, ObjectDesc] | None, type_id: int) -> ObjectDesc:
    """The description of an object type, or ``MissingDescriptionError``."""
    try:
        if object_descs is not None:
            return object_descs[type_id]
    except (KeyError, IndexError):
        pass
    raise MissingDescriptionError(
        "object",
        type_id,
        f"No description of object type {type_id}",
        references=((ReferenceType.OBJECT_TYPE, type_id),),
    )


def _unknown_param_type(desc: ObjectDesc, param: ObjectParamDesc) -> ProtocolError:
    return ProtocolError(
        FailCode.FRAME,
        f"object type {desc.id} parameter {param.name!r} has type {param.type}, which has no known layout",
    )


def decode_tp04_object(
    body: bytes, object_descs: Mapping[int, ObjectDesc] | None, cls: type[Tp04Object] = Tp04Object
) -> Tp04Object:
    """Decode a TP04 Object (or ModifyObject) body, its parameters laid out by the description
    of its type."""
    object_id, type_id = TWO_U32.unpack_from(body, 0)
    name, offset = read_string(body, 8)
    description, offset = read_string(body, offset)
    (parent,) = U32.unpack_from(body, offset)
    contains, offset = read_u32_list(body, offset + 4)
    (modtime,) = _TP04_HEAD_TAIL.unpack_from(body, offset)
    offset += 24
    desc = find_object_desc(object_descs, type_id)
    readers = _PARAM_READERS
    groups = []
    for group in desc.groups:
        values = []
        for param in group.params:
            reader = readers.get(param.type)
            if reader is None:
                raise _unknown_param_type(desc, param)
            value, offset = reader(body, offset)
            values.append(value)
        groups.append(tuple(values))
    if offset != len(body):
        if offset > len(body):
            raise TruncatedBody("object parameters run past the body")
        raise LeftoverBytes(len(body) - offset)
    return cls(object_id, type_id, name, description, parent, contains, modtime, tuple(groups))


def encode_tp04_object(obj: Tp04Object) -> bytes:
    """The body of a TP04 Object: header fields, 16 bytes of padding, then every parameter."""
    parts = [
        TWO_U32.pack(obj.id, obj.type),
        pack_string(obj.name),
        pack_string(obj.description),
        U32.pack(obj.parent),
        pack_u32_list(obj.contains),
        U64.pack(obj.modtime),
        _PAD16,
    ]
    writers = _PARAM_WRITERS
    for group in obj.groups:
        for param in group:
            parts.append(writers[param.__class__](param))
    return b"".join(parts)


# --------------------------------------------------------------------------------------------
# TP03 Object
# --------------------------------------------------------------------------------------------


class Tp03Extra:
    """Base of the TP03 per-type extra data; ``OBJECT_TYPE`` is the object type it belongs to."""

    __slots__ = ()
    OBJECT_TYPE: ClassVar[int]


@dataclass(frozen=True, slots=True)
class UniverseExtra(Tp03Extra):
    """Type 0 Universe: ``age`` is the turn counter."""

    OBJECT_TYPE: ClassVar[int] = 0
    age: int


@dataclass(frozen=True, slots=True)
class GalaxyExtra(Tp03Extra):
    """Type 1 Galaxy: no extra data."""

    OBJECT_TYPE: ClassVar[int] = 1


@dataclass(frozen=True, slots=True)
class StarSystemExtra(Tp03Extra):
    """Type 2 Star System: no extra data."""

    OBJECT_TYPE: ClassVar[int] = 2


@dataclass(frozen=True, slots=True)
class PlanetExtra(Tp03Extra):
    """Type 3 Planet: ``owner`` (-1 none/unknown) and resources."""

    OBJECT_TYPE: ClassVar[int] = 3
    owner: int = -1
    resources: tuple[ResourceAmount, ...] = ()


@dataclass(frozen=True, slots=True)
class FleetExtra(Tp03Extra):
    """Type 4 Fleet: ``owner`` (-1 none/unknown), ships as (design id, count), damage."""

    OBJECT_TYPE: ClassVar[int] = 4
    owner: int = -1
    ships: tuple[ShipCount, ...] = ()
    damage: int = 0


@dataclass(frozen=True, slots=True)
class WormholeExtra(Tp03Extra):
    """Type 5 Wormhole: the other end."""

    OBJECT_TYPE: ClassVar[int] = 5
    end: Vec3


@dataclass(frozen=True, slots=True)
class Tp03Object(Message):
    """7 Object, TP03 form (§3.1). The object type is ``extra.OBJECT_TYPE`` (also ``.type``);
    only types 0–5 exist, because PY3 has hard-wired layouts for exactly those."""

    TYPE: ClassVar[FrameType] = FrameType.OBJECT
    id: int
    name: str
    size: int
    position: Vec3
    velocity: Vec3
    contains: tuple[int, ...]
    order_types: tuple[int, ...]
    orders: int
    modtime: int
    extra: Tp03Extra

    @property
    def type(self) -> int:
        """The object type, taken from the extra data."""
        return self.extra.OBJECT_TYPE


AnyObject = Tp03Object | Tp04Object

_VEC3_FIELD = Tuple(S64, S64, S64)


def _vec3(values: Iterable[int]) -> Vec3:
    return Vec3(*values)


#: Construct declaration of the TP03 Object frame up to its extra data.
TP03_OBJECT_HEAD: list[Field] = [
    Field("id", U32_FIELD),
    Field("type", U32_FIELD),
    Field("name", STRING),
    Field("size", U64_FIELD),
    Field("position", _VEC3_FIELD, _vec3),
    Field("velocity", _VEC3_FIELD, _vec3),
    Field("contains", List(U32_FIELD), tuple),
    Field("order_types", List(U32_FIELD), tuple),
    Field("orders", U32_FIELD),
    Field("modtime", TIME),
    Field("_padding", Pad(8)),
]

#: Construct declaration of the TP03 extra data, by object type: (extra class, fields).
TP03_EXTRAS: dict[int, tuple[type[Tp03Extra], list[Field]]] = {
    0: (UniverseExtra, [Field("age", U32_FIELD)]),
    1: (GalaxyExtra, []),
    2: (StarSystemExtra, []),
    3: (
        PlanetExtra,
        [
            Field("owner", J32),
            Field(
                "resources",
                List(Tuple(U32_FIELD, U32_FIELD, U32_FIELD, U32_FIELD)),
                tuple_of(ResourceAmount),
            ),
        ],
    ),
    4: (
        FleetExtra,
        [
            Field("owner", J32),
            Field("ships", List(Tuple(U32_FIELD, U32_FIELD)), tuple_of(ShipCount)),
            Field("damage", U32_FIELD),
        ],
    ),
    5: (WormholeExtra, [Field("end", _VEC3_FIELD, _vec3)]),
}

_TP03_MIDDLE = struct.Struct(">Qqqqqqq")
_TP03_TAIL = struct.Struct(">IQ8x")
_Q3 = struct.Struct(">qqq")
_SHIP = struct.Struct(">II")
_GALAXY = GalaxyExtra()
_STAR_SYSTEM = StarSystemExtra()


def _unknown_tp03_type(type_id: int) -> ProtocolError:
    return ProtocolError(FailCode.FRAME, f"TP03 has no object type {type_id} (only 0–5 have a layout)")


def _read_tp03_extra(type_id: int, body: bytes, offset: int) -> tuple[Tp03Extra, int]:
    if type_id == 2:
        return _STAR_SYSTEM, offset
    if type_id == 3:
        owner = U32.unpack_from(body, offset)[0]
        records, offset = read_records(body, offset + 4, _RESOURCE)
        resources = tuple([ResourceAmount(*record) for record in records])
        return PlanetExtra(-1 if owner == 0xFFFFFFFF else owner, resources), offset
    if type_id == 4:
        owner = U32.unpack_from(body, offset)[0]
        records, offset = read_records(body, offset + 4, _SHIP)
        (damage,) = U32.unpack_from(body, offset)
        ships = tuple([ShipCount(*record) for record in records])
        return FleetExtra(-1 if owner == 0xFFFFFFFF else owner, ships, damage), offset + 4
    if type_id == 0:
        return UniverseExtra(U32.unpack_from(body, offset)[0]), offset + 4
    if type_id == 1:
        return _GALAXY, offset
    if type_id == 5:
        return WormholeExtra(Vec3(*_Q3.unpack_from(body, offset))), offset + 24
    raise _unknown_tp03_type(type_id)


def decode_tp03_object(body: bytes) -> Tp03Object:
    """Decode a TP03 Object body."""
    object_id, type_id = TWO_U32.unpack_from(body, 0)
    name, offset = read_string(body, 8)
    size, px, py, pz, vx, vy, vz = _TP03_MIDDLE.unpack_from(body, offset)
    contains, offset = read_u32_list(body, offset + 56)
    order_types, offset = read_u32_list(body, offset)
    orders, modtime = _TP03_TAIL.unpack_from(body, offset)
    extra, offset = _read_tp03_extra(type_id, body, offset + 20)
    if offset != len(body):
        if offset > len(body):
            raise TruncatedBody("object extra data runs past the body")
        raise LeftoverBytes(len(body) - offset)
    return Tp03Object(
        object_id,
        name,
        size,
        Vec3(px, py, pz),
        Vec3(vx, vy, vz),
        contains,
        order_types,
        orders,
        modtime,
        extra,
    )


def _write_tp03_extra(extra: Tp03Extra) -> bytes:
    cls = extra.__class__
    if cls is StarSystemExtra or cls is GalaxyExtra:
        return b""
    if isinstance(extra, PlanetExtra):
        return U32.pack(0xFFFFFFFF if extra.owner == -1 else extra.owner) + pack_records(
            extra.resources, _RESOURCE
        )
    if isinstance(extra, FleetExtra):
        return (
            U32.pack(0xFFFFFFFF if extra.owner == -1 else extra.owner)
            + pack_records(extra.ships, _SHIP)
            + U32.pack(extra.damage)
        )
    if isinstance(extra, UniverseExtra):
        return U32.pack(extra.age)
    if isinstance(extra, WormholeExtra):
        return _Q3.pack(*extra.end)
    raise TypeError(f"{cls.__name__} is not TP03 object extra data")


def encode_tp03_object(obj: Tp03Object) -> bytes:
    """The body of a TP03 Object."""
    position, velocity = obj.position, obj.velocity
    return b"".join(
        [
            TWO_U32.pack(obj.id, obj.extra.OBJECT_TYPE),
            pack_string(obj.name),
            _TP03_MIDDLE.pack(obj.size, *position, *velocity),
            pack_u32_list(obj.contains),
            pack_u32_list(obj.order_types),
            _TP03_TAIL.pack(obj.orders, obj.modtime),
            _write_tp03_extra(obj.extra),
        ]
    )


# --------------------------------------------------------------------------------------------
# The construct declarations, executed directly (reference implementation for tests and the
# benchmark; slower than the functions above, same bytes)
# --------------------------------------------------------------------------------------------

_TP04_HEAD_CODEC = StructCodec(Tp04Object, tuple(TP04_OBJECT_HEAD))
_TP03_HEAD_CODEC = StructCodec(Tp03Object, tuple(TP03_OBJECT_HEAD))
_PARAM_CODECS: dict[ObjectParamType | int, StructCodec] = {
    param_type: StructCodec(cls, tuple(fields)) for param_type, (cls, fields) in OBJECT_PARAMS.items()
}
_PARAM_CODECS_BY_CLASS = {codec.cls: codec for codec in _PARAM_CODECS.values()}
_EXTRA_CODECS = {type_id: StructCodec(cls, tuple(fields)) for type_id, (cls, fields) in TP03_EXTRAS.items()}
_EXTRA_CODECS_BY_CLASS = {codec.cls: codec for codec in _EXTRA_CODECS.values()}


def _check_end(stream: BytesIO, body: bytes) -> None:
    if stream.tell() != len(body):
        raise LeftoverBytes(len(body) - stream.tell())


def decode_tp04_object_with_construct(
    body: bytes, object_descs: Mapping[int, ObjectDesc] | None, cls: type[Tp04Object] = Tp04Object
) -> Tp04Object:
    """``decode_tp04_object`` done by the construct declarations."""
    stream = BytesIO(body)
    head = _TP04_HEAD_CODEC.read(stream)
    desc = find_object_desc(object_descs, head["type"])
    groups = []
    for group in desc.groups:
        values = []
        for param in group.params:
            codec = _PARAM_CODECS.get(param.type)
            if codec is None:
                raise _unknown_param_type(desc, param)
            values.append(codec.cls(**codec.read(stream)))
        groups.append(tuple(values))
    _check_end(stream, body)
    return cls(**head, groups=tuple(groups))


def encode_tp04_object_with_construct(obj: Tp04Object) -> bytes:
    """``encode_tp04_object`` done by the construct declarations."""
    parts = [_TP04_HEAD_CODEC.encode(obj)]
    for group in obj.groups:
        for param in group:
            parts.append(_PARAM_CODECS_BY_CLASS[param.__class__].encode(param))
    return b"".join(parts)


def decode_tp03_object_with_construct(body: bytes) -> Tp03Object:
    """``decode_tp03_object`` done by the construct declarations."""
    stream = BytesIO(body)
    head = _TP03_HEAD_CODEC.read(stream)
    type_id = head.pop("type")
    codec = _EXTRA_CODECS.get(type_id)
    if codec is None:
        raise _unknown_tp03_type(type_id)
    extra = codec.cls(**codec.read(stream)) if codec.fields else codec.cls()
    _check_end(stream, body)
    return Tp03Object(**head, extra=extra)


def encode_tp03_object_with_construct(obj: Tp03Object) -> bytes:
    """``encode_tp03_object`` done by the construct declarations."""
    # The head codec reads ``obj.type``, the property derived from the extra data.
    codec = _EXTRA_CODECS_BY_CLASS[obj.extra.__class__]
    return _TP03_HEAD_CODEC.encode(obj) + codec.encode(obj.extra)


#: Used by codec to register the two Object classes.
OBJECT_CLASSES = {Version.TP03: Tp03Object, Version.TP04: Tp04Object}
