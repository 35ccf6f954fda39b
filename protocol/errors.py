"""The one exception of this package, and what a server should answer when it is raised.

The architecture asks that ``protocol/`` raise a single ``ProtocolError`` carrying the TP Fail
code, so the server can turn every problem with the bytes a peer sent into a Fail frame (or, for
the version check, the plain-text answer tpserver-cpp gives) without knowing how it was found.
``Answer`` says which of SRV's four reactions applies (spec/protocol.md §1.1, §1.2).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

from .enums import FailCode, Version, coerce


class Answer(enum.Enum):
    """What the reference server does about an error, so our server can do the same.

    ``codec.encode_error`` turns an error into the bytes to write for each case.
    """

    #: Reply Fail(code, message) with the request's sequence number; the connection goes on.
    #: Used for bodies that do not decode and for a frame of the wrong version mid-stream
    #: (the deframer has consumed that frame; ``Deframer.recover()`` resumes reading).
    FAIL = "fail"
    #: Reply Fail(code, message), then close: the byte stream cannot be resynchronised
    #: (unreadable header, frame longer than the limit).
    FAIL_AND_CLOSE = "fail-and-close"
    #: Reply Fail(0) with sequence 0 in ``error.reply_version`` (TP03 for "TP0x"-style headers,
    #: TP04 for a binary version byte above 4, as SRV does), discard what was buffered and keep
    #: the connection open, waiting for a new first frame: the client may retry with a version
    #: we speak. ``Deframer.recover()`` does the discarding.
    FAIL_AND_REDETECT = "fail-and-redetect"
    #: Write ``error.text`` as plain bytes (no frame) and close: a pre-TP03 client or not TP at all.
    TEXT_AND_CLOSE = "text-and-close"


class ProtocolError(Exception):
    """Bytes from a peer that break the protocol, with the Fail code that says how.

    ``code`` is a ``FailCode`` (or the int, if a caller used a code we do not know); ``message``
    is the human-readable string for the Fail frame; ``references`` are (reftype, refid) pairs for
    a TP04 Fail; ``sequence`` is the sequence number of the offending frame, when known, so the
    Fail can echo it; ``answer``, ``text`` and ``reply_version`` say how to reply (see
    ``Answer``); ``reply_version`` is None when the reply uses the connection's own version.
    """

    def __init__(
        self,
        code: int,
        message: str,
        *,
        answer: Answer = Answer.FAIL,
        sequence: int | None = None,
        references: Sequence[tuple[int, int]] = (),
        text: str | None = None,
        reply_version: Version | None = None,
    ) -> None:
        super().__init__(code, message)
        self.code: FailCode | int = coerce(FailCode, code)
        self.message = message
        self.answer = answer
        self.sequence = sequence
        self.references = tuple(references)
        self.text = text
        self.reply_version = reply_version

    @property
    def closes_stream(self) -> bool:
        """Whether the connection ends after the answer (it cannot be read on after this)."""
        return self.answer not in (Answer.FAIL, Answer.FAIL_AND_REDETECT)

    def __str__(self) -> str:
        name = self.code.name if isinstance(self.code, FailCode) else str(self.code)
        return f"{name}: {self.message}"

    def __repr__(self) -> str:
        name = type(self).__name__
        return f"{name}({int(self.code)}, {self.message!r}, answer={self.answer.name})"


class MissingDescriptionError(ProtocolError):
    """A TP04 Object or an Order could not be decoded because its description is not known.

    A client reacts by fetching the description (GetObjectDesc / GetOrderDesc) and decoding the
    frame again, as PY4's ``_description_error`` does (§3.2). A server answers Fail(4) "No such
    order type" for an InsertOrder/ProbeOrder of an unknown type (§4.4).
    """

    def __init__(self, kind: str, type_id: int, message: str, **kwargs: Any) -> None:
        super().__init__(FailCode.NO_SUCH_THING, message, **kwargs)
        #: "object" or "order"
        self.kind = kind
        #: the object type or order type that has no description
        self.type_id = type_id


class EncodingError(ProtocolError, ValueError):
    """A message cannot be encoded: its frame type does not exist in the requested version, or a
    value does not fit its field (a u32 of -5, a string that is not text, an object parameter of
    an unknown class). This is a bug in the caller, never something a peer did; it is a
    ``ValueError`` as well so callers that treat it as one keep working."""

    def __init__(self, message: str, code: int = FailCode.FRAME) -> None:
        super().__init__(code, message)
