"""Orders: OrderDesc (9), Order (11) and the Order bodies of InsertOrder (12) and ProbeOrder (34).

An Order body is a fixed head (id, slot, type, turns, resources) followed by one argument per
parameter of the order type's description, with no type tags on the wire (§4.2). So decoding
needs the descriptions: ``decode(frame, order_descs={type_id: OrderDesc, …})``; an unknown
type raises ``MissingDescriptionError`` (the server answers Fail 4 "No such order type").

Arguments are typed values (``ObjectArg``, ``ListArg``, …), one class per parameter type of
§4.3, holding the read-only fields as well: clients echo them back (often empty), the server
must parse them and may ignore them, and the server fills them in the orders it sends. The same
classes serve both versions; only the layouts differ:

* TP03's Object argument (type 2) is just ``u32 objectid``: ``ObjectArg.valid_types`` is not
  written for TP03 and decodes as () there (Appendix A.2: SRV gets this wrong);
* types 10 and 11 do not exist in TP03 (neither encodable nor decodable there).

The layouts are construct declarations run through compiled parsers: orders are few and small,
and construct is fast enough for them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from io import BytesIO
from typing import ClassVar, NamedTuple

from .enums import FailCode, FrameType, OrderParamType, ReferenceType, Version, coerce
from .errors import EncodingError, MissingDescriptionError, ProtocolError
from .messages import Message, reference
from .records import IdCount, Reference
from .schema import (
    J32,
    S32,
    S64,
    STRING,
    TIME,
    U32,
    Field,
    LeftoverBytes,
    List,
    StructCodec,
    Tuple,
    tuple_of,
    wire,
)

# --------------------------------------------------------------------------------------------
# Order descriptions
# --------------------------------------------------------------------------------------------


class OrderParamDesc(NamedTuple):
    """One parameter of an order type: the client makes an attribute of ``name``."""

    name: str
    type: OrderParamType | int
    description: str


def _param_desc(name: str, param_type: int, description: str) -> OrderParamDesc:
    return OrderParamDesc(name, coerce(OrderParamType, param_type), description)


@wire(
    both=[
        Field("id", U32),
        Field("name", STRING),
        Field("description", STRING),
        Field("params", List(Tuple(STRING, U32, STRING)), tuple_of(_param_desc)),
        Field("modtime", TIME),
    ]
)
@dataclass(frozen=True, slots=True)
class OrderDesc(Message):
    """9 OrderDesc: an order type and its parameters, the same in TP03 and TP04 (§4.1)."""

    TYPE: ClassVar[FrameType] = FrameType.ORDER_DESC
    id: int
    name: str
    description: str
    params: tuple[OrderParamDesc, ...]
    modtime: int

    def param_types(self) -> tuple[OrderParamType | int, ...]:
        """The argument types an Order of this type carries, in order."""
        return tuple(param.type for param in self.params)


# --------------------------------------------------------------------------------------------
# Order arguments
# --------------------------------------------------------------------------------------------


class OrderArg:
    """Base of the order argument values; ``PARAM_TYPE`` is the ``OrderParamType``."""

    __slots__ = ()
    PARAM_TYPE: ClassVar[OrderParamType]


class ListOption(NamedTuple):
    """A choice of a List argument (read-only): id, name, and how many may be selected."""

    id: int
    name: str
    max_count: int


class WeightMaximum(NamedTuple):
    """Read-only part of a GenericReferenceQuantityList: a maximum over some references."""

    max: int
    references: tuple[Reference, ...]


class QuantityOption(NamedTuple):
    """A choice of a GenericReferenceQuantityList (read-only); ``max`` -1 means no limit."""

    id: int
    name: str
    max: int
    references: tuple[Reference, ...]
    weights: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class AbsSpaceCoordsArg(OrderArg):
    """0 AbsSpaceCoords: a point in space."""

    PARAM_TYPE: ClassVar[OrderParamType] = OrderParamType.ABS_SPACE_COORDS
    x: int
    y: int
    z: int


@dataclass(frozen=True, slots=True)
class TimeArg(OrderArg):
    """1 Time: ``turns``; ``max_turns`` is read-only."""

    PARAM_TYPE: ClassVar[OrderParamType] = OrderParamType.TIME
    turns: int
    max_turns: int = 0


@dataclass(frozen=True, slots=True)
class ObjectArg(OrderArg):
    """2 Object: ``object_id``; ``valid_types`` is read-only and TP04 only (empty: any type)."""

    PARAM_TYPE: ClassVar[OrderParamType] = OrderParamType.OBJECT
    object_id: int
    valid_types: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class PlayerArg(OrderArg):
    """3 Player: ``player_id``; ``mask`` (read-only) has the bits of players *not* allowed."""

    PARAM_TYPE: ClassVar[OrderParamType] = OrderParamType.PLAYER
    player_id: int
    mask: int = 0


@dataclass(frozen=True, slots=True)
class RelSpaceCoordsArg(OrderArg):
    """4 RelSpaceCoords: a point relative to an object."""

    PARAM_TYPE: ClassVar[OrderParamType] = OrderParamType.REL_SPACE_COORDS
    object_id: int
    x: int
    y: int
    z: int


@dataclass(frozen=True, slots=True)
class RangeArg(OrderArg):
    """5 Range: ``value``; the bounds and increment are read-only."""

    PARAM_TYPE: ClassVar[OrderParamType] = OrderParamType.RANGE
    value: int
    min_value: int = 0
    max_value: int = 0
    increment: int = 0


@dataclass(frozen=True, slots=True)
class ListArg(OrderArg):
    """6 List: ``selection`` of (id, count); ``options`` are read-only."""

    PARAM_TYPE: ClassVar[OrderParamType] = OrderParamType.LIST
    selection: tuple[IdCount, ...] = ()
    options: tuple[ListOption, ...] = ()


@dataclass(frozen=True, slots=True)
class StringArg(OrderArg):
    """7 String: ``text``; ``max_length`` is read-only (SRV uses 1024)."""

    PARAM_TYPE: ClassVar[OrderParamType] = OrderParamType.STRING
    text: str
    max_length: int = 0


@dataclass(frozen=True, slots=True)
class ReferenceArg(OrderArg):
    """8 Reference: ``reference`` (a u32, §4.3); ``allowed_types`` is read-only.
    PY3 cannot decode it, so do not offer it to TP03 clients."""

    PARAM_TYPE: ClassVar[OrderParamType] = OrderParamType.REFERENCE
    reference: int
    allowed_types: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class ReferenceListArg(OrderArg):
    """9 ReferenceList; ``allowed_types`` is read-only."""

    PARAM_TYPE: ClassVar[OrderParamType] = OrderParamType.REFERENCE_LIST
    references: tuple[int, ...] = ()
    allowed_types: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class ResourceListArg(OrderArg):
    """10 ResourceList (TP04): ``selected`` (resource, quantity); the rest is read-only."""

    PARAM_TYPE: ClassVar[OrderParamType] = OrderParamType.RESOURCE_LIST
    selected: tuple[IdCount, ...] = ()
    allowed: tuple[IdCount, ...] = ()
    max_mass: int = 0
    max_volume: int = 0


@dataclass(frozen=True, slots=True)
class GenericReferenceQuantityListArg(OrderArg):
    """11 GenericReferenceQuantityList (TP04): ``selection`` of (option id, count); the weight
    maximums and options are read-only."""

    PARAM_TYPE: ClassVar[OrderParamType] = OrderParamType.GENERIC_REFERENCE_QUANTITY_LIST
    selection: tuple[IdCount, ...] = ()
    weight_maximums: tuple[WeightMaximum, ...] = ()
    options: tuple[QuantityOption, ...] = ()


_REFS = List(Tuple(S32, U32))


def _refs(items: Iterable[tuple[int, int]]) -> tuple[Reference, ...]:
    return tuple([reference(t, i) for t, i in items])


def _weight_maximum(maximum: int, refs: Iterable[tuple[int, int]]) -> WeightMaximum:
    return WeightMaximum(maximum, _refs(refs))


def _quantity_option(
    option_id: int, name: str, maximum: int, refs: Iterable[tuple[int, int]], weights: Iterable[int]
) -> QuantityOption:
    return QuantityOption(option_id, name, maximum, _refs(refs), tuple(weights))


_ID_COUNTS = List(Tuple(U32, U32))

#: The layout of every argument type in TP04, in wire order, read-only fields included.
TP04_ARGS: dict[OrderParamType, tuple[type[OrderArg], list[Field]]] = {
    OrderParamType.ABS_SPACE_COORDS: (
        AbsSpaceCoordsArg,
        [Field("x", S64), Field("y", S64), Field("z", S64)],
    ),
    OrderParamType.TIME: (TimeArg, [Field("turns", S32), Field("max_turns", S32)]),
    OrderParamType.OBJECT: (
        ObjectArg,
        [Field("object_id", U32), Field("valid_types", List(U32), tuple)],
    ),
    OrderParamType.PLAYER: (PlayerArg, [Field("player_id", U32), Field("mask", U32)]),
    OrderParamType.REL_SPACE_COORDS: (
        RelSpaceCoordsArg,
        [Field("object_id", U32), Field("x", S64), Field("y", S64), Field("z", S64)],
    ),
    OrderParamType.RANGE: (
        RangeArg,
        [
            Field("value", S32),
            Field("min_value", S32),
            Field("max_value", S32),
            Field("increment", S32),
        ],
    ),
    OrderParamType.LIST: (
        ListArg,
        [
            Field("options", List(Tuple(U32, STRING, U32)), tuple_of(ListOption)),
            Field("selection", _ID_COUNTS, tuple_of(IdCount)),
        ],
    ),
    OrderParamType.STRING: (StringArg, [Field("max_length", U32), Field("text", STRING)]),
    OrderParamType.REFERENCE: (
        ReferenceArg,
        [Field("reference", U32), Field("allowed_types", List(U32), tuple)],
    ),
    OrderParamType.REFERENCE_LIST: (
        ReferenceListArg,
        [Field("references", List(U32), tuple), Field("allowed_types", List(U32), tuple)],
    ),
    OrderParamType.RESOURCE_LIST: (
        ResourceListArg,
        [
            Field("allowed", _ID_COUNTS, tuple_of(IdCount)),
            Field("max_mass", U32),
            Field("max_volume", U32),
            Field("selected", _ID_COUNTS, tuple_of(IdCount)),
        ],
    ),
    OrderParamType.GENERIC_REFERENCE_QUANTITY_LIST: (
        GenericReferenceQuantityListArg,
        [
            Field("weight_maximums", List(Tuple(U32, _REFS)), tuple_of(_weight_maximum)),
            Field(
                "options",
                List(Tuple(U32, STRING, J32, _REFS, List(U32))),
                tuple_of(_quantity_option),
            ),
            Field("selection", _ID_COUNTS, tuple_of(IdCount)),
        ],
    ),
}

#: TP03: the same as TP04 except Object (no valid-types list) and no types 10 and 11.
TP03_ARGS: dict[OrderParamType, tuple[type[OrderArg], list[Field]]] = {
    **{
        param_type: layout
        for param_type, layout in TP04_ARGS.items()
        if param_type not in (OrderParamType.RESOURCE_LIST, OrderParamType.GENERIC_REFERENCE_QUANTITY_LIST)
    },
    OrderParamType.OBJECT: (ObjectArg, [Field("object_id", U32)]),
}

ORDER_ARGS = {Version.TP03: TP03_ARGS, Version.TP04: TP04_ARGS}


# --------------------------------------------------------------------------------------------
# Orders
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Order(Message):
    """11 Order. ``id`` is the object id in TP03 and the order-queue id in TP04 (§4.2); ``slot``
    -1 in an insert means "append". ``turns`` and ``resources`` are read-only: clients send 0
    and () and the server fills them. ``args`` follow the order type's parameters in order."""

    TYPE: ClassVar[FrameType] = FrameType.ORDER
    id: int
    slot: int
    type: int
    args: tuple[OrderArg, ...] = ()
    turns: int = 0
    resources: tuple[IdCount, ...] = ()


@dataclass(frozen=True, slots=True)
class InsertOrder(Order):
    """12 InsertOrder: an Order body. Reply: TP03 Okay, TP04 the Order frame (§4.4)."""

    TYPE: ClassVar[FrameType] = FrameType.INSERT_ORDER


@dataclass(frozen=True, slots=True)
class ProbeOrder(Order):
    """34 ProbeOrder: an Order body; the reply is an Order with the read-only fields filled."""

    TYPE: ClassVar[FrameType] = FrameType.PROBE_ORDER


ORDER_HEAD: list[Field] = [
    Field("id", U32),
    Field("slot", J32),
    Field("type", U32),
    Field("turns", J32),
    Field("resources", _ID_COUNTS, tuple_of(IdCount)),
]


def find_order_desc(
    order_descs: Mapping[int, OrderDesc] | None, type_id: int, order_id: int, version: Version
) -> OrderDesc:
    """The description of an order type, or ``MissingDescriptionError`` carrying the references
    SRV puts in its Fail(4) "No such order type" (the queue, or object in TP03, and the type)."""
    try:
        if order_descs is not None:
            return order_descs[type_id]
    except (KeyError, IndexError):
        pass
    holder = ReferenceType.ORDER_QUEUE if version == Version.TP04 else ReferenceType.OBJECT
    raise MissingDescriptionError(
        "order",
        type_id,
        "No such order type",
        references=((holder, order_id), (ReferenceType.ORDER_TYPE, type_id)),
    )


class OrderCodec:
    """Decodes and encodes one Order class (Order, InsertOrder, ProbeOrder) in one version."""

    def __init__(self, cls: type[Order], version: Version) -> None:
        self.cls = cls
        self.version = version
        self._head = StructCodec(cls, tuple(ORDER_HEAD))
        self._args: dict[OrderParamType | int, StructCodec] = {
            param_type: StructCodec(arg_cls, tuple(fields))
            for param_type, (arg_cls, fields) in ORDER_ARGS[version].items()
        }
        self._args_by_class = {codec.cls: codec for codec in self._args.values()}

    def decode(self, body: bytes, order_descs: Mapping[int, OrderDesc] | None) -> Order:
        stream = BytesIO(body)
        head = self._head.read(stream)
        desc = find_order_desc(order_descs, head["type"], head["id"], self.version)
        args = []
        for param in desc.params:
            codec = self._args.get(param.type)
            if codec is None:
                raise ProtocolError(
                    FailCode.FRAME,
                    f"order type {desc.id} parameter {param.name!r} has type {param.type}, "
                    f"which {self.version.name} cannot carry",
                )
            args.append(codec.cls(**codec.read(stream)))
        if stream.tell() != len(body):
            raise LeftoverBytes(len(body) - stream.tell())
        return self.cls(**head, args=tuple(args))

    def encode(self, order: Order) -> bytes:
        parts = [self._head.encode(order)]
        for arg in order.args:
            codec = self._args_by_class.get(arg.__class__)
            if codec is None:
                raise EncodingError(
                    f"{type(arg).__name__} cannot be sent on a {self.version.name} connection"
                )
            parts.append(codec.encode(arg))
        return b"".join(parts)


ORDER_CLASSES = (Order, InsertOrder, ProbeOrder)
