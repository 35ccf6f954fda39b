"""``decode`` a Frame into a typed message; ``encode`` a message into frame bytes.

This module owns the table of which class is which frame type in which version, and the one
place where every low-level failure (construct, struct, a short or long body) becomes a
``ProtocolError`` with code 1, so nothing but ``ProtocolError`` ever leaves ``decode``.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from construct import ConstructError

from . import messages, objects, orders
from .deframer import MAX_BODY_LENGTH
from .enums import FailCode, Version, is_defined
from .errors import Answer, EncodingError, ProtocolError
from .header import Frame, encode_header
from .messages import Fail, Message, Sequence, reference
from .objects import ObjectDesc
from .orders import OrderCodec, OrderDesc
from .schema import LeftoverBytes, StructCodec, TruncatedBody

ObjectDescs = Mapping[int, ObjectDesc]
OrderDescs = Mapping[int, OrderDesc]
Decoder = Callable[[bytes, "ObjectDescs | None", "OrderDescs | None"], Message]

_DECODERS: dict[tuple[Version, int], Decoder] = {}
_ENCODERS: dict[tuple[type, Version], Callable[[Message], bytes]] = {}
_CLASSES: dict[tuple[Version, int], type[Message]] = {}


def _register(
    cls: type[Message], version: Version, decoder: Decoder, encoder: Callable[[Any], bytes]
) -> None:
    key = (version, int(cls.TYPE))
    if key in _DECODERS:
        raise RuntimeError(f"{cls.__name__} and {_CLASSES[key].__name__} both claim {key}")
    _DECODERS[key] = decoder
    _ENCODERS[(cls, version)] = encoder
    _CLASSES[key] = cls


def _concrete_messages() -> list[type[Message]]:
    """Every class with its own frame type and a declared layout, once each."""
    found: dict[type, None] = {}
    for module in (messages, objects, orders):
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, Message)
                and "TYPE" in vars(value)
                and value.LAYOUTS
            ):
                found[value] = None
    return list(found)


def _struct_decoder(codec: StructCodec) -> Decoder:
    def decode(body: bytes, _objects: ObjectDescs | None, _orders: OrderDescs | None) -> Message:
        message: Message = codec.decode(body)
        return message

    return decode


def _order_decoder(codec: OrderCodec) -> Decoder:
    def decode(body: bytes, _objects: ObjectDescs | None, descs: OrderDescs | None) -> Message:
        return codec.decode(body, descs)

    return decode


def _tp03_object_decoder(body: bytes, _objects: ObjectDescs | None, _orders: OrderDescs | None) -> Message:
    return objects.decode_tp03_object(body)


def _tp04_object_decoder(cls: type[objects.Tp04Object]) -> Decoder:
    def decode(body: bytes, descs: ObjectDescs | None, _orders: OrderDescs | None) -> Message:
        return objects.decode_tp04_object(body, descs, cls)

    return decode


def _build_tables() -> None:
    for cls in _concrete_messages():
        for version, fields in cls.LAYOUTS.items():
            codec = StructCodec(cls, fields)
            _register(cls, version, _struct_decoder(codec), codec.encode)
    for order_cls in orders.ORDER_CLASSES:
        for version in Version:
            order_codec = OrderCodec(order_cls, version)
            _register(order_cls, version, _order_decoder(order_codec), order_codec.encode)
    _register(objects.Tp03Object, Version.TP03, _tp03_object_decoder, objects.encode_tp03_object)
    for object_cls in (objects.Tp04Object, objects.ModifyObject):
        _register(object_cls, Version.TP04, _tp04_object_decoder(object_cls), objects.encode_tp04_object)
    for version, frame_type in _DECODERS:
        assert is_defined(frame_type, version), (version, frame_type)


_build_tables()


def message_class(frame_type: int, version: Version) -> type[Message] | None:
    """The class ``decode`` returns for this frame type in this version, if there is one."""
    return _CLASSES.get((version, frame_type))


def decode(
    frame: Frame,
    *,
    object_descs: ObjectDescs | None = None,
    order_descs: OrderDescs | None = None,
) -> Message:
    """The typed message in ``frame``, in either direction.

    ``object_descs`` (object type id → ObjectDesc) is needed for TP04 Object/ModifyObject frames,
    ``order_descs`` (order type id → OrderDesc) for Order, InsertOrder and ProbeOrder; any mapping
    works. Raises ``ProtocolError``: code 0 for a frame type the version does not define, code 1
    for a body that is short, long or malformed, ``MissingDescriptionError`` (code 4) when a
    needed description is missing. The error's ``sequence`` is the frame's.
    """
    decoder = _DECODERS.get((frame.version, frame.type))
    if decoder is None:
        raise ProtocolError(
            FailCode.PROTOCOL,
            "Protocol Error, frame type not known",
            sequence=frame.sequence,
        )
    try:
        return decoder(frame.body, object_descs, order_descs)
    except ProtocolError as error:
        if error.sequence is None:
            error.sequence = frame.sequence
        raise
    except LeftoverBytes as error:
        problem = f"{error.count} bytes left over"
    except (ConstructError, struct.error, TruncatedBody, UnicodeError, OverflowError) as error:
        problem = f"malformed body ({error})" if str(error) else "malformed body"
    name = _CLASSES[(frame.version, frame.type)].__name__
    raise ProtocolError(
        FailCode.FRAME, f"Unable to unpack Frame: {name}: {problem}", sequence=frame.sequence
    ) from None


def encode_body(message: Message, version: Version) -> bytes:
    """The body bytes of ``message`` for a ``version`` connection, without a header.

    Useful for caching: an object view's body depends only on the object and the version, while
    the header carries the sequence number of each request.
    """
    encoder = _ENCODERS.get((message.__class__, version))
    if encoder is None:
        raise EncodingError(
            f"{type(message).__name__} cannot be sent on a {Version(version).name} connection",
            FailCode.UNAVAILABLE_PERMANENTLY,
        )
    try:
        body = encoder(message)
    except EncodingError:
        raise
    except (
        ConstructError,
        struct.error,
        TypeError,
        ValueError,
        AttributeError,
        KeyError,
        OverflowError,
    ) as error:
        raise EncodingError(
            f"cannot encode {type(message).__name__} for {version.name}: {error!r}"
        ) from error
    if len(body) >= MAX_BODY_LENGTH:
        raise EncodingError(
            f"{type(message).__name__} body of {len(body)} bytes is over the frame limit",
            FailCode.REQUEST_TOO_BIG,
        )
    return body


def frame_bytes(version: Version, sequence: int, frame_type: int, body: bytes) -> bytes:
    """A header for ``body`` followed by the body (for bodies cached by ``encode_body``)."""
    try:
        return encode_header(version, sequence, frame_type, len(body)) + body
    except struct.error as error:
        raise EncodingError(f"bad header field: {error}") from error


def encode(message: Message, version: Version, sequence: int) -> bytes:
    """The complete frame (header and body) of ``message``."""
    return frame_bytes(version, sequence, message.TYPE, encode_body(message, version))


def encode_reply(items: Iterable[Message], version: Version, sequence: int) -> bytes:
    """Sequence(N) followed by the N messages, all with ``sequence``, as one byte string:
    the answer to a GetWithID-style request (§6.2), ready for a single transport write."""
    items = list(items)
    parts = [encode(Sequence(len(items)), version, sequence)]
    parts.extend(encode(item, version, sequence) for item in items)
    return b"".join(parts)


def encode_error(error: ProtocolError, version: Version | None, sequence: int | None = None) -> bytes:
    """The bytes to write in answer to ``error``, as tpserver-cpp would (see ``Answer``).

    ``version`` is the connection's version (``Deframer.version``; None if it is not known yet),
    ``sequence`` overrides the sequence number (default: the error's, else 0). Fail codes above
    5 do not exist in TP03 and are sent there as code 1.
    """
    if error.answer == Answer.TEXT_AND_CLOSE:
        return (error.text or "").encode("utf-8")
    reply_version = error.reply_version or version or Version.TP03
    if error.answer == Answer.FAIL_AND_REDETECT:
        sequence = 0
    elif sequence is None:
        sequence = error.sequence or 0
    references = tuple(reference(reftype, refid) for reftype, refid in error.references)
    return encode(
        fit_fail(Fail(error.code, error.message, references), reply_version), reply_version, sequence
    )


def fit_fail(fail: Fail, version: Version) -> Fail:
    """``fail`` as ``version`` can carry it: TP03 has Fail codes 0-5 only (others are sent as
    code 1, Frame) and no references; TP04 takes any 32-bit code."""
    highest = FailCode.PERMISSION_DENIED if version == Version.TP03 else 0xFFFFFFFF
    code = fail.code if 0 <= fail.code <= highest else FailCode.FRAME
    references = () if version == Version.TP03 else fail.references
    if code == fail.code and references == fail.references:
        return fail
    return Fail(code, fail.message, references)
