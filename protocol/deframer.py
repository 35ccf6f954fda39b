"""A sans-IO deframer: bytes in, in any chunking; ``Frame`` objects out (§1.1, §1.2).

Modelled on Twisted's ``IntNStringReceiver``: one buffer plus a read offset, a maximum length
checked as soon as a header is complete (so a peer cannot make us buffer a huge body), and the
first error stops everything. It does no I/O, so the server's Twisted protocol, the blocking
client and the tests all drive it the same way::

    def data_received(data: bytes) -> None:
        deframer.feed(data)
        while True:
            try:
                frame = deframer.next_frame()
            except ProtocolError as error:
                transport.write(encode_error(error, deframer.version))
                if error.answer not in (Answer.FAIL, Answer.FAIL_AND_REDETECT):
                    transport.loseConnection()     # the stream cannot be trusted any more
                    return
                deframer.recover()                 # SRV keeps these connections open
                continue
            if frame is None:                      # need more bytes
                return
            handle(frame)

``frames(data)`` is the short form (feed, then iterate) for callers that close on any error.

The version of the connection is taken from the first four bytes, exactly as tpserver-cpp's
``processVersionCheck`` does (§1.2); every later frame must carry the same version.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import NoReturn

from .enums import FailCode, FrameType, Version
from .errors import Answer, ProtocolError
from .header import HEADER_SIZE, Frame

#: SRV refuses bodies of 1 MiB or more (``tcpconnection.cpp`` ``readFrame``).
MAX_BODY_LENGTH = 1 << 20

#: Lengths at or above this are negative as SRV's signed int, which it reports as a bad header.
_NEGATIVE_LENGTH = 1 << 31

_TAIL = struct.Struct(">III")
_FRAME_TYPES = FrameType._value2member_map_

TOO_OLD_TEXT = "You are not running the right version of TP, please upgrade\n"
NOT_TP_TEXT = "You are not running the correct protocol\n"
UNSUPPORTED_VERSION_MESSAGE = "TP Protocol, but I only support versions 3 and 4, sorry."


def detect_version(prefix: bytes) -> Version:
    """The version announced by the first four bytes of a connection, or the error SRV answers.

    ============================  ==========================================================
    first bytes                   result
    ============================  ==========================================================
    ``TP0`` + digit 0–2           TEXT_AND_CLOSE "…please upgrade"
    ``TP03``                      TP03
    ``TP0`` + digit 4–9           FAIL_AND_REDETECT, TP03-format Fail(0)
    ``TP`` + byte 4               TP04
    ``TP`` + byte 5–47            FAIL_AND_REDETECT, TP04-format Fail(0) (as SRV does)
    ``TP`` + anything else        FAIL_AND_REDETECT, TP03-format Fail(0)
    not ``TP``                    TEXT_AND_CLOSE "…not running the correct protocol"
    ============================  ==========================================================
    """
    if len(prefix) < 4:
        raise ValueError("need the first four bytes of the connection")
    if prefix[:2] != b"TP":
        raise ProtocolError(
            FailCode.PROTOCOL,
            "not the Thousand Parsec protocol",
            answer=Answer.TEXT_AND_CLOSE,
            text=NOT_TP_TEXT,
        )
    third, fourth = prefix[2], prefix[3]
    if third == ord("0") and ord("0") <= fourth <= ord("9"):
        if fourth <= ord("2"):
            raise ProtocolError(
                FailCode.PROTOCOL,
                f"protocol version {prefix[:4]!r} is too old",
                answer=Answer.TEXT_AND_CLOSE,
                text=TOO_OLD_TEXT,
            )
        if fourth == ord("3"):
            return Version.TP03
        raise ProtocolError(
            FailCode.PROTOCOL,
            UNSUPPORTED_VERSION_MESSAGE,
            answer=Answer.FAIL_AND_REDETECT,
            sequence=0,
            reply_version=Version.TP03,
        )
    if third == 4:
        return Version.TP04
    if 4 < third < ord("0"):
        raise ProtocolError(
            FailCode.PROTOCOL,
            UNSUPPORTED_VERSION_MESSAGE,
            answer=Answer.FAIL_AND_REDETECT,
            sequence=0,
            reply_version=Version.TP04,
        )
    raise ProtocolError(
        FailCode.PROTOCOL,
        UNSUPPORTED_VERSION_MESSAGE,
        answer=Answer.FAIL_AND_REDETECT,
        sequence=0,
        reply_version=Version.TP03,
    )


class Deframer:
    """Cuts a byte stream into ``Frame`` objects; see the module docstring for the loop.

    ``max_length`` bounds the body of one frame (default 1 MiB, exclusive, like SRV). Memory
    held is what was fed and not yet taken out as frames; after an error, fed bytes are dropped.
    """

    def __init__(self, *, max_length: int = MAX_BODY_LENGTH) -> None:
        self._buffer = bytearray()
        self._offset = 0
        self._version: Version | None = None
        self._error: ProtocolError | None = None
        self.max_length = max_length

    @property
    def version(self) -> Version | None:
        """The connection's version, once the first four bytes have arrived."""
        return self._version

    @property
    def error(self) -> ProtocolError | None:
        """The error that stopped the deframer, until ``recover()``."""
        return self._error

    @property
    def buffered(self) -> int:
        """Bytes received and not yet returned as frames."""
        return len(self._buffer) - self._offset

    def feed(self, data: bytes) -> None:
        """Add received bytes. Never raises; problems surface from ``next_frame``."""
        if self._error is not None or not data:
            return
        if self._offset:
            # Compact only when new data arrives: the frames of one chunk are cut by moving the
            # offset, so a chunk of N frames costs one copy, not N.
            del self._buffer[: self._offset]
            self._offset = 0
        self._buffer += data

    def frames(self, data: bytes = b"") -> Iterator[Frame]:
        """Feed ``data`` now, then iterate over every complete frame.

        The feeding happens at call time, not on first iteration, so ``deframer.frames(chunk)``
        never loses bytes. The iterator raises ``ProtocolError`` where the stream breaks, after
        yielding every frame before that point.
        """
        self.feed(data)
        return self._drain()

    def _drain(self) -> Iterator[Frame]:
        while (frame := self.next_frame()) is not None:
            yield frame

    def frames_and_errors(self) -> Iterator[Frame | ProtocolError]:
        """Every complete frame and error, in stream order, recovering (``recover``) from the
        errors SRV answers and keeps the connection open after; after any other error nothing
        more comes (``error.closes_stream``): the stream cannot be trusted. The loop a server
        connection runs: each item is answered in turn."""
        while True:
            try:
                frame = self.next_frame()
            except ProtocolError as error:
                yield error
                if error.closes_stream:
                    return
                self.recover()
                continue
            if frame is None:
                return
            yield frame

    def next_frame(self) -> Frame | None:
        """The next complete frame, None if more bytes are needed, or raise ``ProtocolError``.

        Once an error is raised, every call raises it again until ``recover()``.
        """
        if self._error is not None:
            raise self._error
        buffer = self._buffer
        offset = self._offset
        available = len(buffer) - offset
        version = self._version
        if version is None:
            if available < 4:
                return None
            try:
                version = self._version = detect_version(bytes(buffer[offset : offset + 4]))
            except ProtocolError as error:
                self._error = error
                raise
        if available < HEADER_SIZE:
            return None
        sequence, frame_type, length = _TAIL.unpack_from(buffer, offset + 4)
        if buffer[offset] != 0x54 or buffer[offset + 1] != 0x50:  # not "TP"
            return self._fail("Protocol Error, could not decode header", Answer.FAIL_AND_CLOSE, None)
        if version == Version.TP04:
            right_version = buffer[offset + 2] == 4
            frame_version = buffer[offset + 3]
        else:
            right_version = buffer[offset + 2] == 0x30 and buffer[offset + 3] == 0x33
            frame_version = 0
        if length >= _NEGATIVE_LENGTH:
            return self._fail("Protocol Error, could not decode header", Answer.FAIL_AND_CLOSE, sequence)
        if length >= self.max_length:
            return self._fail("Protocol Error, frame length too large", Answer.FAIL_AND_CLOSE, sequence)
        end = offset + HEADER_SIZE + length
        if len(buffer) < end:
            return None
        with memoryview(buffer) as view:  # one copy, and the view is released before resizing
            body = bytes(view[offset + HEADER_SIZE : end])
        if end == len(buffer):
            buffer.clear()
            self._offset = 0
        else:
            self._offset = end
        if not right_version:
            # SRV reads the whole frame, answers Fail and carries on with the next one.
            return self._fail("Protocol Error, wrong version number", Answer.FAIL, sequence)
        known_type = _FRAME_TYPES.get(frame_type, frame_type)
        return Frame(version, frame_version, sequence, known_type, body)

    def _fail(self, message: str, answer: Answer, sequence: int | None) -> NoReturn:
        self._error = ProtocolError(FailCode.PROTOCOL, message, answer=answer, sequence=sequence)
        raise self._error

    def recover(self) -> None:
        """Carry on after an error whose answer keeps the connection open, as SRV does.

        After ``FAIL`` (a frame of the wrong version, already consumed) reading resumes with the
        next frame. After ``FAIL_AND_REDETECT`` the buffered bytes are discarded (SRV drains its
        socket) and the next bytes are a new first frame. Other answers close the connection, so
        recovering from them is a ValueError.
        """
        error = self._error
        if error is None:
            return
        if error.answer == Answer.FAIL:
            self._error = None
        elif error.answer == Answer.FAIL_AND_REDETECT:
            self._error = None
            self._version = None
            self._buffer.clear()
            self._offset = 0
        else:
            raise ValueError(f"cannot recover from {error!r}: close the connection")
