"""Hand-written ``struct`` readers and writers for the hot paths (Object frames).

construct's compiled parsers build a context ``Container`` for every struct and list item they
parse, which costs more than the parsing itself for the small records of an Object frame. The
functions here do the same reads with ``struct.unpack_from`` on the body and an offset. They are
only used behind the ``decode``/``encode`` API, for layouts that are also declared with construct
in the same package; the tests check the two agree byte for byte.

Every reader checks its bounds (a count is compared with the bytes left before anything is
allocated) and raises ``TruncatedBody``; ``struct.error`` can also escape from ``unpack_from``.
Both become ProtocolError code 1 in ``codec``.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from typing import Any

from .schema import TruncatedBody

U32 = struct.Struct(">I")
U64 = struct.Struct(">Q")
TWO_U32 = struct.Struct(">II")


def read_string(body: bytes, offset: int) -> tuple[str, int]:
    """A ``str`` at ``offset``: its text and the offset after it."""
    (length,) = U32.unpack_from(body, offset)
    start = offset + 4
    end = start + length
    if end > len(body):
        raise TruncatedBody(f"string of {length} bytes at offset {offset} runs past the body")
    return body[start:end].decode("utf-8", "replace"), end


def read_u32_list(body: bytes, offset: int) -> tuple[tuple[int, ...], int]:
    """A ``list<u32>`` at ``offset``."""
    (count,) = U32.unpack_from(body, offset)
    start = offset + 4
    end = start + 4 * count
    if end > len(body):
        raise TruncatedBody(f"list of {count} u32 at offset {offset} runs past the body")
    if count == 0:
        return (), end
    if count == 1:
        return U32.unpack_from(body, start), end
    return struct.unpack_from(f">{count}I", body, start), end


def read_records(body: bytes, offset: int, record: struct.Struct) -> tuple[list[tuple[Any, ...]], int]:
    """A list of fixed-size records at ``offset``, as tuples of ``record``'s fields."""
    (count,) = U32.unpack_from(body, offset)
    start = offset + 4
    end = start + record.size * count
    if end > len(body):
        raise TruncatedBody(f"list of {count} records at offset {offset} runs past the body")
    return list(record.iter_unpack(memoryview(body)[start:end])), end


def pack_string(text: str) -> bytes:
    data = text.encode("utf-8")
    return U32.pack(len(data)) + data


def pack_u32_list(values: tuple[int, ...]) -> bytes:
    count = len(values)
    return struct.pack(f">I{count}I", count, *values)


def pack_records(items: Sequence[Iterable[Any]], record: struct.Struct) -> bytes:
    pack = record.pack
    return U32.pack(len(items)) + b"".join([pack(*item) for item in items])


def pack_j32(value: int) -> bytes:
    return U32.pack(0xFFFFFFFF if value == -1 else value)


def unpack_j32(value: int) -> int:
    return -1 if value == 0xFFFFFFFF else value
