"""Construct primitives of the TP wire format, and the binding of message classes to layouts.

The TP types of spec/protocol.md §0 map onto construct like this:

=========  ==============================================================================
``u32``    ``U32`` (``Int32ub``); ``s32`` ``S32``; ``u64``/``time64`` ``U64``; ``s64`` ``S64``
``j32``    ``J32``: "semi-signed", a u32 whose all-ones value means -1 (PY3 xstruct ``j``)
``j64``    ``J64``: the 64-bit form (TP04's GetIDSequence ``from``)
``str``    ``STRING``: u32 byte length + UTF-8, no terminator
``list``   ``List(item)``: u32 count + items
``pad[n]`` ``Pad(n)``: n bytes, written as zeros, ignored when read
=========  ==============================================================================

Why custom constructs instead of construct's own ``PascalString``/``PrefixedArray``/``Padding``:
construct's *compiled* parsers read ``io.read(n)`` without checking that n bytes came back, so a
truncated string or padding would pass silently, and a list count of 0xFFFFFFFF would be trusted.
The classes below emit compiled code that checks every read, refuses list counts the remaining
bytes cannot hold (fail fast, no allocation), and decodes text with ``errors="replace"`` so a
peer's bad UTF-8 is never an exception (the Python clients use ``errors="ignore"``, §1.4).

A message class declares its body per version with ``@wire(...)``: an ordered list of
``Field(name, construct, decode)``, where ``name`` is the dataclass field, and ``decode`` turns
construct's parsed value into the typed value (a tuple of records, an enum). ``StructCodec``
compiles that list once and does the decoding and encoding.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from io import BytesIO
from typing import Any, NamedTuple

from construct import (
    Construct,
    FormatField,
    Int8ub,
    Int32sb,
    Int32ub,
    Int64sb,
    Int64ub,
    ListContainer,
    Renamed,
    Sequence,
    SizeofError,
    StreamError,
    Struct,
    stream_read,
    stream_write,
)

from .enums import Version

U8 = Int8ub
U32 = Int32ub
S32 = Int32sb
U64 = Int64ub
S64 = Int64sb
TIME = Int64ub

# Helpers shared by the compiled code of the constructs below. ``code.append`` de-duplicates
# identical blocks, so each construct can ask for this block without defining it twice.
_COMPILED_HELPERS = """
    _tp_u32 = struct.Struct('>L')
    _tp_u64 = struct.Struct('>Q')
    def _tp_read(io, n):
        data = io.read(n)
        if len(data) != n:
            raise StreamError('needed %d bytes, found %d' % (n, len(data)))
        return data
    def _tp_parse_string(io):
        n = _tp_u32.unpack(io.read(4))[0]
        if n > 4096:
            here = io.tell()
            if n > io.seek(0, 2) - here:
                raise StreamError('string of %d bytes cannot fit in the bytes left' % n)
            io.seek(here)
        data = io.read(n)
        if len(data) != n:
            raise StreamError('string of %d bytes cut short at %d' % (n, len(data)))
        return data.decode('utf-8', 'replace')
    def _tp_build_string(obj, io):
        data = obj.encode('utf-8')
        io.write(_tp_u32.pack(len(data)))
        io.write(data)
        return obj
    def _tp_parse_j32(io):
        value = _tp_u32.unpack(io.read(4))[0]
        return -1 if value == 0xFFFFFFFF else value
    def _tp_build_j32(obj, io):
        io.write(_tp_u32.pack(0xFFFFFFFF if obj == -1 else obj))
        return obj
    def _tp_parse_j64(io):
        value = _tp_u64.unpack(io.read(8))[0]
        return -1 if value == 0xFFFFFFFFFFFFFFFF else value
    def _tp_build_j64(obj, io):
        io.write(_tp_u64.pack(0xFFFFFFFFFFFFFFFF if obj == -1 else obj))
        return obj
    def _tp_list_count(io, item_size):
        count = _tp_u32.unpack(io.read(4))[0]
        if count:
            here = io.tell()
            if count * item_size > io.seek(0, 2) - here:
                raise StreamError('list of %d items cannot fit in the bytes left' % count)
            io.seek(here)
        return count
"""


class SemiSigned(Construct):  # type: ignore[misc]  # construct is untyped
    """``j32``/``j64``: unsigned on the wire, with the all-ones value standing for -1."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size
        self._all_ones = (1 << (8 * size)) - 1

    def _parse(self, stream: Any, context: Any, path: str) -> Any:
        value = int.from_bytes(stream_read(stream, self.size, path), "big")
        return -1 if value == self._all_ones else value

    def _build(self, obj: Any, stream: Any, context: Any, path: str) -> Any:
        value = self._all_ones if obj == -1 else obj
        if not isinstance(value, int) or not 0 <= value <= self._all_ones:
            raise StreamError(f"{obj!r} does not fit a semi-signed {8 * self.size}-bit field")
        stream_write(stream, value.to_bytes(self.size, "big"), self.size, path)
        return obj

    def _sizeof(self, context: Any, path: str) -> int:
        return self.size

    def _emitparse(self, code: Any) -> str:
        code.append(_COMPILED_HELPERS)
        return f"_tp_parse_j{8 * self.size}(io)"

    def _emitbuild(self, code: Any) -> str:
        code.append(_COMPILED_HELPERS)
        return f"_tp_build_j{8 * self.size}(obj, io)"


class TpString(Construct):  # type: ignore[misc]  # construct is untyped
    """``str``: u32 byte length, then UTF-8 bytes, no NUL and no padding (§0, §1.4).

    Decoding replaces invalid UTF-8 rather than failing; a trailing NUL (which clients strip) is
    kept, so the bytes a client sent re-encode unchanged.
    """

    def _parse(self, stream: Any, context: Any, path: str) -> Any:
        length = int.from_bytes(stream_read(stream, 4, path), "big")
        remaining = _remaining(stream)
        if remaining is not None and length > remaining:
            raise StreamError(f"string of {length} bytes cannot fit in {remaining}", path=path)
        return stream_read(stream, length, path).decode("utf-8", "replace")

    def _build(self, obj: Any, stream: Any, context: Any, path: str) -> Any:
        data = obj.encode("utf-8")
        stream_write(stream, len(data).to_bytes(4, "big"), 4, path)
        stream_write(stream, data, len(data), path)
        return obj

    def _sizeof(self, context: Any, path: str) -> int:
        raise SizeofError("a string has no fixed size", path=path)

    def _emitparse(self, code: Any) -> str:
        code.append(_COMPILED_HELPERS)
        return "_tp_parse_string(io)"

    def _emitbuild(self, code: Any) -> str:
        code.append(_COMPILED_HELPERS)
        return "_tp_build_string(obj, io)"


class TpList(Construct):  # type: ignore[misc]  # construct is untyped
    """``list<T>``: u32 count, then that many items (§1.5).

    Before reading items, the count is checked against the bytes left in the stream (each item
    takes at least ``min_size(item)`` bytes), so a count of 0xFFFFFFFF in a short body fails at
    once instead of looping or allocating. Lists of fixed-size numbers (ids, (id, modtime)
    pairs, references) compile to a single ``struct`` call instead of one parser call per item:
    ID lists can hold tens of thousands of entries.
    """

    def __init__(self, subcon: Construct) -> None:
        super().__init__()
        self.subcon = subcon
        self.item_size = max(1, min_size(subcon))
        self.item_format = _fixed_format(subcon)

    def _parse(self, stream: Any, context: Any, path: str) -> Any:
        count = int.from_bytes(stream_read(stream, 4, path), "big")
        remaining = _remaining(stream)
        if remaining is not None and count * self.item_size > remaining:
            raise StreamError(f"list of {count} items cannot fit in {remaining} bytes", path=path)
        return ListContainer(self.subcon._parsereport(stream, context, path) for _ in range(count))

    def _build(self, obj: Any, stream: Any, context: Any, path: str) -> Any:
        stream_write(stream, len(obj).to_bytes(4, "big"), 4, path)
        return ListContainer(self.subcon._build(item, stream, context, path) for item in obj)

    def _sizeof(self, context: Any, path: str) -> int:
        raise SizeofError("a list has no fixed size", path=path)

    def _emitparse(self, code: Any) -> str:
        code.append(_COMPILED_HELPERS)
        name = f"_tp_parse_list_{code.allocateId()}"
        fmt = self.item_format
        if fmt is None:
            code.append(f"""
                def {name}(io, this):
                    count = _tp_list_count(io, {self.item_size})
                    return ListContainer({self.subcon._compileparse(code)} for i in range(count))
            """)
        elif isinstance(self.subcon, SemiSigned):
            code.append(f"""
                def {name}(io, this):
                    count = _tp_list_count(io, {self.item_size})
                    data = _tp_read(io, {self.item_size} * count)
                    values = struct.unpack('>%d{fmt}' % count, data)
                    ones = {self.subcon._all_ones}
                    return ListContainer([-1 if v == ones else v for v in values])
            """)
        elif len(fmt) == 1:
            code.append(f"""
                def {name}(io, this):
                    count = _tp_list_count(io, {self.item_size})
                    data = _tp_read(io, {self.item_size} * count)
                    return ListContainer(struct.unpack('>%d{fmt}' % count, data))
            """)
        else:
            code.append(f"""
                {name}_item = struct.Struct('>{fmt}')
                def {name}(io, this):
                    count = _tp_list_count(io, {self.item_size})
                    data = _tp_read(io, {self.item_size} * count)
                    return ListContainer({name}_item.iter_unpack(data))
            """)
        return f"{name}(io, this)"

    def _emitbuild(self, code: Any) -> str:
        code.append(_COMPILED_HELPERS)
        name = f"_tp_build_list_{code.allocateId()}"
        fmt = self.item_format
        if fmt is None:
            code.append(f"""
                def {name}(items, io, this):
                    io.write(_tp_u32.pack(len(items)))
                    for obj in items:
                        {self.subcon._compilebuild(code)}
                    return items
            """)
        elif isinstance(self.subcon, SemiSigned):
            code.append(f"""
                def {name}(items, io, this):
                    values = [{self.subcon._all_ones} if v == -1 else v for v in items]
                    io.write(struct.pack('>L%d{fmt}' % len(values), len(values), *values))
                    return items
            """)
        elif len(fmt) == 1:
            code.append(f"""
                def {name}(items, io, this):
                    io.write(struct.pack('>L%d{fmt}' % len(items), len(items), *items))
                    return items
            """)
        else:
            code.append(f"""
                {name}_item = struct.Struct('>{fmt}')
                def {name}(items, io, this):
                    pack = {name}_item.pack
                    io.write(_tp_u32.pack(len(items)))
                    io.write(b"".join([pack(*item) for item in items]))
                    return items
            """)
        return f"{name}(obj, io, this)"


def _fixed_format(con: Construct) -> str | None:
    """The ``struct`` format letters of a fixed-size numeric item (a big-endian FormatField, a
    j32, or a tuple of FormatFields), or None when items must be parsed one by one."""
    if isinstance(con, FormatField) and con.fmtstr[0] == ">":
        return str(con.fmtstr[1:])
    if isinstance(con, SemiSigned):
        return "L" if con.size == 4 else "Q"
    if isinstance(con, Sequence) and con.subcons:
        letters = [
            str(sub.fmtstr[1:])
            for sub in con.subcons
            if isinstance(sub, FormatField) and sub.fmtstr[0] == ">"
        ]
        if len(letters) == len(con.subcons):
            return "".join(letters)
    return None


class Pad(Construct):  # type: ignore[misc]  # construct is untyped
    """``pad[n]``: n bytes, written as zeros and skipped (not checked) when read, as PY's ``8x``."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size
        self.flagbuildnone = True

    def _parse(self, stream: Any, context: Any, path: str) -> Any:
        stream_read(stream, self.size, path)
        return None

    def _build(self, obj: Any, stream: Any, context: Any, path: str) -> Any:
        stream_write(stream, bytes(self.size), self.size, path)
        return None

    def _sizeof(self, context: Any, path: str) -> int:
        return self.size

    def _emitparse(self, code: Any) -> str:
        code.append(_COMPILED_HELPERS)
        return f"(_tp_read(io, {self.size}), None)[1]"

    def _emitbuild(self, code: Any) -> str:
        return f"(io.write(bytes({self.size})), None)[1]"


J32 = SemiSigned(4)
J64 = SemiSigned(8)
STRING = TpString()


def List(item: Construct) -> TpList:
    """``list<item>``."""
    return TpList(item)


def Tuple(*items: Construct) -> Sequence:
    """An unnamed record inside a list, parsed to a list and built from any iterable."""
    return Sequence(*items)


def min_size(con: Construct) -> int:
    """The fewest bytes ``con`` can occupy: used to bound list counts by the bytes left."""
    if isinstance(con, (TpString, TpList)):
        return 4
    if isinstance(con, Renamed):
        return min_size(con.subcon)
    if isinstance(con, (Sequence, Struct)):
        return sum(min_size(sub) for sub in con.subcons)
    try:
        return int(con.sizeof())
    except SizeofError:
        return 0


def _remaining(stream: Any) -> int | None:
    """Bytes left in a seekable stream. (Not ``BytesIO.getbuffer()``: exporting the buffer makes
    BytesIO copy a body it was sharing.)"""
    try:
        here = stream.tell()
        end = stream.seek(0, 2)
        stream.seek(here)
    except (AttributeError, OSError, ValueError):
        return None
    return int(end - here)


# --------------------------------------------------------------------------------------------
# Binding message classes to layouts
# --------------------------------------------------------------------------------------------


class Field(NamedTuple):
    """One field of a body: the dataclass attribute ``name``, its construct, and how the parsed
    value becomes the typed one (None: use it as parsed)."""

    name: str
    con: Construct
    decode: Callable[[Any], Any] | None = None


def tuple_of(factory: Callable[..., Any] | None = None) -> Callable[[Iterable[Any]], tuple[Any, ...]]:
    """A decoder for a list field: a tuple of ``factory(*item)`` (or of the items themselves)."""
    if factory is None:
        return tuple
    return lambda items: tuple([factory(*item) for item in items])


def wire(
    *,
    both: list[Field] | None = None,
    tp03: list[Field] | None = None,
    tp04: list[Field] | None = None,
) -> Callable[[type], type]:
    """Class decorator: declare a message's body for each version it exists in.

    ``both`` is shorthand for the same layout in TP03 and TP04. A class without a TP03 layout
    cannot be sent to, or received from, a TP03 peer.
    """
    layouts: dict[Version, tuple[Field, ...]] = {}
    if both is not None:
        layouts[Version.TP03] = layouts[Version.TP04] = tuple(both)
    if tp03 is not None:
        layouts[Version.TP03] = tuple(tp03)
    if tp04 is not None:
        layouts[Version.TP04] = tuple(tp04)

    def decorate(cls: type) -> type:
        cls.LAYOUTS = layouts  # type: ignore[attr-defined]
        return cls

    return decorate


_COMPILED_STRUCTS: dict[tuple[Field, ...], tuple[Struct, Construct]] = {}


def compile_fields(fields: tuple[Field, ...]) -> tuple[Struct, Construct]:
    """The construct ``Struct`` for a field list and its compiled form, shared by every class
    that uses the same list (compiling is slow, the result is not)."""
    found = _COMPILED_STRUCTS.get(fields)
    if found is None:
        schema = Struct(*(field.name / field.con for field in fields))
        found = _COMPILED_STRUCTS[fields] = (schema, schema.compile())
    return found


class StructCodec:
    """Decodes and encodes one message class in one version through its compiled Struct."""

    def __init__(self, cls: type, fields: tuple[Field, ...]) -> None:
        self.cls = cls
        self.fields = fields
        self.schema, self._compiled = compile_fields(fields)
        # Fields named "_…" (padding) are on the wire but not on the message.
        self._names = tuple(field.name for field in fields if not field.name.startswith("_"))
        self._decoders = tuple((field.name, field.decode) for field in fields if field.decode)
        self._empty = not fields

    def read(self, stream: BytesIO) -> dict[str, Any]:
        """Parse the fields from ``stream`` into constructor keyword arguments."""
        parsed = self._compiled.parse_stream(stream)
        values = {name: parsed[name] for name in self._names}
        for name, decode in self._decoders:
            values[name] = decode(values[name])
        return values

    def decode(self, body: bytes) -> Any:
        """The message in ``body``; raises construct/struct errors, or ``LeftoverBytes``."""
        if self._empty:
            if body:
                raise LeftoverBytes(len(body))
            return self.cls()
        stream = BytesIO(body)
        values = self.read(stream)
        if stream.tell() != len(body):
            raise LeftoverBytes(len(body) - stream.tell())
        return self.cls(**values)

    def encode(self, message: Any) -> bytes:
        """The body bytes of ``message`` (its fields absent from this version are not written)."""
        if self._empty:
            return b""
        data: bytes = self._compiled.build({name: getattr(message, name) for name in self._names})
        return data


class TruncatedBody(Exception):
    """Raised by the hand-written decoders when a body ends before its layout does."""


class LeftoverBytes(Exception):
    """Raised inside decoders when a body is longer than its layout; ``codec`` turns it into
    ProtocolError code 1, the same as a body that is too short."""

    def __init__(self, count: int) -> None:
        super().__init__(f"{count} bytes left over")
        self.count = count
