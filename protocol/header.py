"""The 16-byte frame headers of TP03 and TP04, and ``Frame``, a header with its body (§1.1).

TP03: ``"TP03"``, u32 sequence, u32 type, u32 length.
TP04: ``"TP"``, u8 protocol version (binary 4), u8 frame version, u32 sequence, u32 type,
u32 length. Both are 16 bytes and both count ``length`` in body bytes, without the header.

The construct declarations are the schema; ``encode_header`` is the same layout written with
``struct`` because it runs once per frame sent (tests check that the two agree).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from construct import Bytes, Const, Int8ub, Int32ub, Struct

from .enums import FrameType, Version

HEADER_SIZE = 16

#: TP03 header: DOC3 ``char[4] version, u32 sequence, u32 type, u32 length``.
TP03_HEADER = Struct(
    "magic" / Const(b"TP03"),
    "sequence" / Int32ub,
    "type" / Int32ub,
    "length" / Int32ub,
)

#: TP04 header: DOC4 ``char[2] magic, u8 protocolversion, u8 frameversion, u32 sequence,
#: u32 type, u32 length``.
TP04_HEADER = Struct(
    "magic" / Const(b"TP"),
    "protocol_version" / Const(4, Int8ub),
    "frame_version" / Int8ub,
    "sequence" / Int32ub,
    "type" / Int32ub,
    "length" / Int32ub,
)

#: The first four bytes after the magic are identical in both versions.
HEADER_TAIL = Struct("sequence" / Int32ub, "type" / Int32ub, "length" / Int32ub)

#: Used to document that both headers are the same size; checked at import.
_ANY_HEADER = Struct("prefix" / Bytes(4), "tail" / HEADER_TAIL)
assert TP03_HEADER.sizeof() == TP04_HEADER.sizeof() == _ANY_HEADER.sizeof() == HEADER_SIZE

_TP03_PACK = struct.Struct(">4sIII").pack
_TP04_PACK = struct.Struct(">2sBBIII").pack


def encode_header(
    version: Version, sequence: int, frame_type: int, length: int, frame_version: int = 0
) -> bytes:
    """The 16 header bytes for a body of ``length`` bytes.

    ``frame_version`` is written only by TP04; SRV always replies with 0 and every client sends 0.
    Raises ``struct.error`` for values that do not fit (callers in this package wrap it).
    """
    if version == Version.TP04:
        return _TP04_PACK(b"TP", 4, frame_version, sequence, frame_type, length)
    if version == Version.TP03:
        return _TP03_PACK(b"TP03", sequence, frame_type, length)
    raise ValueError(f"unknown protocol version {version!r}")


@dataclass(frozen=True, slots=True)
class Frame:
    """One frame as the deframer cuts it: header fields plus the undecoded body.

    ``type`` is a ``FrameType`` when the number is one we know, otherwise the int; decoding
    decides whether the type exists in ``version``. ``frame_version`` is TP04's per-frame
    version byte (always 0 for TP03).
    """

    version: Version
    frame_version: int
    sequence: int
    type: FrameType | int
    body: bytes

    def to_bytes(self) -> bytes:
        """Header and body, as they were (or would be) on the wire."""
        return (
            encode_header(self.version, self.sequence, self.type, len(self.body), self.frame_version)
            + self.body
        )
