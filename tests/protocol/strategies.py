"""Hypothesis strategies for every message, derived from the construct layouts themselves.

A layout field says its wire type, so the strategy draws exactly the values that type can carry
(u32 0..2**32-1, j32 -1..2**32-2, any text, tuples for lists). Objects and orders, whose bodies
depend on descriptions, draw a random description together with a value that fits it.
"""

from __future__ import annotations

from construct import FormatField, Sequence
from hypothesis import strategies as st

from protocol import (
    ObjectDesc,
    ObjectParamDesc,
    ObjectParamGroupDesc,
    ObjectParamType,
    OrderDesc,
    OrderParamDesc,
    Tp03Object,
    Tp04Object,
    Version,
)
from protocol.objects import OBJECT_PARAMS, TP03_EXTRAS, TP03_OBJECT_HEAD, TP04_OBJECT_HEAD
from protocol.orders import ORDER_ARGS, ORDER_CLASSES, ORDER_HEAD
from protocol.schema import Field, SemiSigned, TpList, TpString

_RANGES = {
    "B": (0, 2**8 - 1),
    "L": (0, 2**32 - 1),
    "l": (-(2**31), 2**31 - 1),
    "Q": (0, 2**64 - 1),
    "q": (-(2**63), 2**63 - 1),
}

TEXT = st.text(max_size=12)
U32 = st.integers(0, 2**32 - 1)
U64 = st.integers(0, 2**64 - 1)


def for_construct(con) -> st.SearchStrategy:
    """Values of the Python type construct builds ``con`` from, over its whole range."""
    if isinstance(con, FormatField):
        low, high = _RANGES[con.fmtstr[1]]
        return st.integers(low, high)
    if isinstance(con, SemiSigned):
        return st.integers(-1, (1 << (8 * con.size)) - 2)
    if isinstance(con, TpString):
        return TEXT
    if isinstance(con, TpList):
        return st.lists(for_construct(con.subcon), max_size=4).map(tuple)
    if isinstance(con, Sequence):
        return st.tuples(*(for_construct(sub) for sub in con.subcons))
    raise TypeError(f"no strategy for {con!r}")


def kwargs_for(fields: list[Field] | tuple[Field, ...], skip=()) -> st.SearchStrategy:
    return st.fixed_dictionaries(
        {
            field.name: for_construct(field.con)
            for field in fields
            if not field.name.startswith("_") and field.name not in skip
        }
    )


def instances(cls, fields) -> st.SearchStrategy:
    return kwargs_for(fields).map(lambda kwargs: cls(**kwargs))


OBJECT_PARAM_VALUES = {
    param_type: instances(cls, fields) for param_type, (cls, fields) in OBJECT_PARAMS.items()
}


@st.composite
def tp04_objects(draw, cls=Tp04Object):
    """(object, {"object_descs": {type: desc}}) with a random description it fits."""
    type_id = draw(U32)
    layout = draw(st.lists(st.lists(st.sampled_from(sorted(ObjectParamType)), max_size=4), max_size=4))
    desc = ObjectDesc(
        type_id,
        draw(TEXT),
        draw(TEXT),
        draw(U64),
        tuple(
            ObjectParamGroupDesc(
                index + 1,
                f"group {index}",
                "",
                tuple(ObjectParamDesc(f"param {n}", t, "") for n, t in enumerate(types)),
            )
            for index, types in enumerate(layout)
        ),
    )
    groups = tuple(tuple(draw(OBJECT_PARAM_VALUES[t]) for t in types) for types in layout)
    head = draw(kwargs_for(TP04_OBJECT_HEAD, skip={"type"}))
    return cls(**head, type=type_id, groups=groups), {"object_descs": {type_id: desc}}


@st.composite
def tp03_objects(draw):
    extra_cls, extra_fields = TP03_EXTRAS[draw(st.sampled_from(sorted(TP03_EXTRAS)))]
    extra = draw(instances(extra_cls, extra_fields))
    head = draw(kwargs_for(TP03_OBJECT_HEAD, skip={"type"}))
    return Tp03Object(**head, extra=extra), {}


@st.composite
def orders(draw, cls, version: Version):
    """(order, {"order_descs": {type: desc}}) with arguments of every type the version has."""
    layouts = ORDER_ARGS[version]
    types = draw(st.lists(st.sampled_from(sorted(layouts)), max_size=4))
    args = tuple(draw(instances(*layouts[t])) for t in types)
    type_id = draw(U32)
    desc = OrderDesc(
        type_id,
        draw(TEXT),
        "",
        tuple(OrderParamDesc(f"p{n}", t, "") for n, t in enumerate(types)),
        0,
    )
    head = draw(kwargs_for(ORDER_HEAD, skip={"type"}))
    return cls(**head, type=type_id, args=args), {"order_descs": {type_id: desc}}


def messages_of(cls, version: Version) -> st.SearchStrategy:
    """(message, decode keyword arguments) for any message class in a version it exists in."""
    if cls.LAYOUTS:
        return instances(cls, cls.LAYOUTS[version]).map(lambda message: (message, {}))
    if cls in ORDER_CLASSES:
        return orders(cls, version)
    if cls is Tp03Object:
        return tp03_objects()
    if issubclass(cls, Tp04Object):
        return tp04_objects(cls)
    raise TypeError(cls)
