"""The sans-IO client side of a Thousand Parsec connection: requests in, bytes out, bytes in,
answers out. No sockets, no clock, no threads: the blocking and the Twisted transports (and the
tests) drive the same ``ClientSession``::

    session = ClientSession(Version.TP04)
    request = session.send(Connect("my-client/1.0"))     # allocates a sequence number
    sock.sendall(session.data_to_send())
    while not request.done:
        for event in session.receive_data(sock.recv(65536)):
            ...                                          # ReplyReceived, AsyncReceived, …
        sock.sendall(session.data_to_send())             # the session may ask for descriptions
    okay = request.result()                              # the reply, or raises ClientError

What it does (spec/protocol.md §5, §6):

* **Sequence numbers.** One per request, from ``first_sequence`` upward, never 0 (the server's
  pushed frames use 0) and never one that is still waiting for its answer.
* **Matching.** Replies are matched by sequence number, so answers to pipelined requests may
  arrive interleaved. A request is answered by one frame, or by Sequence(N) and N frames
  (``protocol.replies`` knows which to expect); a lone Fail answers the whole request
  (``RequestFailed``). Items of a list reply may be Fails, or ``Undecodable`` when their body
  is broken (tpserver-cpp's TP03 Player frame is 8 bytes too long, Appendix A.1).
* **Asynchronous frames.** Frames with sequence 0 (the pushed TimeRemaining, §5.6) become
  ``AsyncReceived`` events; a sequence nobody asked for becomes ``UnsolicitedFrame``.
* **Descriptions.** TP04 Object frames need their type's ObjectDesc and Order frames need the
  OrderDesc. Every ObjectDesc/OrderDesc that passes through the session (whoever asked for it)
  is kept in ``object_descs``/``order_descs``. A frame whose description is missing is held
  while the session itself sends GetObjectDesc/GetOrderDesc for that type (as PY4's
  ``_description_error`` does, but with a fresh sequence number), then decoded again; the
  request completes once every frame is decoded. So after ``receive_data`` always send
  ``data_to_send()``.
* **Broken streams.** A header the deframer cannot read, a plain-text refusal, or frames in
  another protocol version (the server refused ours, §1.2) end the session: every waiting
  request fails with ``StreamBroken``/``VersionRejected`` and ``ConnectionFailed`` is emitted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from protocol import (
    Connect,
    Deframer,
    Fail,
    Frame,
    FrameType,
    GetObjectDesc,
    GetOrderDesc,
    Message,
    MissingDescriptionError,
    ObjectDesc,
    OrderDesc,
    ProtocolError,
    Version,
    decode,
    encode,
)
from protocol import Sequence as SequenceFrame
from protocol.replies import ReplyForm, ReplySpec, reply_spec

from .errors import (
    ClientError,
    ConnectionClosed,
    DescriptionUnavailable,
    MalformedReply,
    RequestFailed,
    StreamBroken,
    UnexpectedReply,
    VersionRejected,
)

__all__ = [
    "AsyncReceived",
    "ClientSession",
    "ConnectionFailed",
    "Event",
    "ReplyReceived",
    "Request",
    "UnsolicitedFrame",
    "Undecodable",
]

_MAX_SEQUENCE = 0xFFFFFFFF


@dataclass(frozen=True, slots=True)
class Undecodable:
    """An item of a list reply whose frame could not be decoded: ``error`` says why (a
    ``ProtocolError`` from ``protocol.decode`` or a ``DescriptionUnavailable``)."""

    frame: Frame
    error: Exception


@dataclass(slots=True)
class _Waiting:
    """A frame held until the description of its type arrives."""

    frame: Frame
    kind: str  # "object" or "order"
    type_id: int


@dataclass(eq=False, slots=True)
class Request:
    """One request on the wire and, once ``done``, its answer.

    ``result()`` returns the reply (a message for single-frame answers, a tuple of items for
    Sequence answers) or raises the ``ClientError`` that ended the request.
    """

    sequence: int
    message: Message
    spec: ReplySpec
    internal: bool = False
    done: bool = False
    reply: object = None
    error: ClientError | None = None
    expected: int | None = None  # N of the Sequence(N) frame, once seen
    items: list = field(default_factory=list)

    @property
    def started(self) -> bool:
        return self.expected is not None or bool(self.items)

    @property
    def frames_complete(self) -> bool:
        if self.expected is not None:
            return len(self.items) >= self.expected
        return bool(self.items)

    def result(self):
        """The reply; raises the request's error if it failed, RuntimeError if not done."""
        if not self.done:
            raise RuntimeError(f"request {self.sequence} has no answer yet")
        if self.error is not None:
            raise self.error
        return self.reply

    def __repr__(self) -> str:
        state = "done" if self.done else "waiting"
        return f"<Request {self.sequence} {type(self.message).__name__} {state}>"


@dataclass(frozen=True, slots=True)
class ReplyReceived:
    """A request is finished: ``request.result()`` gives its reply or raises its error."""

    request: Request


@dataclass(frozen=True, slots=True)
class AsyncReceived:
    """A frame the server pushed with sequence 0 (TimeRemaining at the end of a turn)."""

    message: Message


@dataclass(frozen=True, slots=True)
class UnsolicitedFrame:
    """A frame whose sequence number matches no waiting request (``message`` is None when it
    did not decode). Harmless, but a sign of a confused server."""

    frame: Frame
    message: Message | None


@dataclass(frozen=True, slots=True)
class ConnectionFailed:
    """The stream from the server is unusable; the session is closed."""

    error: ClientError


Event = ReplyReceived | AsyncReceived | UnsolicitedFrame | ConnectionFailed


class ClientSession:
    """The client half of one connection, without I/O (see the module docstring).

    ``object_descs``/``order_descs`` may be pre-filled (from an on-disk cache, or a test).
    ``lazy_descriptions=False`` turns off the automatic GetObjectDesc/GetOrderDesc: frames that
    need a missing description then come out as ``Undecodable`` (or ``MalformedReply``).
    """

    def __init__(
        self,
        version: Version,
        *,
        first_sequence: int = 1,
        object_descs: dict[int, ObjectDesc] | None = None,
        order_descs: dict[int, OrderDesc] | None = None,
        lazy_descriptions: bool = True,
    ) -> None:
        self.version = Version(version)
        self.object_descs: dict[int, ObjectDesc] = dict(object_descs or {})
        self.order_descs: dict[int, OrderDesc] = dict(order_descs or {})
        self.lazy_descriptions = lazy_descriptions
        self.pending: dict[int, Request] = {}
        self.closed = False
        self.error: ClientError | None = None
        self._next_sequence = max(1, first_sequence)
        self._outgoing: list[bytes] = []
        self._deframer = Deframer()
        self._prefix = b""  # the first bytes received, to quote a plain-text refusal
        self._fetching: dict[tuple[str, int], Request] = {}
        self._unavailable: dict[tuple[str, int], str] = {}

    # ----------------------------------------------------------------------------------------
    # Sending
    # ----------------------------------------------------------------------------------------

    def send(self, message: Message, *, sequence: int | None = None) -> Request:
        """Queue ``message`` and return its ``Request``. The bytes are in ``data_to_send()``.

        ``sequence`` forces a number (tests replaying a capture); by default the next free one
        is used. Raises ``ConnectionClosed`` once the session is closed, ``ValueError`` for a
        message that is not a request or cannot be encoded for this version.
        """
        if self.closed:
            raise ConnectionClosed(f"the connection is closed ({self.error or 'closed'})")
        spec = reply_spec(message, self.version)
        if sequence is None:
            sequence = self._allocate_sequence()
        elif sequence in self.pending or not 0 < sequence <= _MAX_SEQUENCE:
            raise ValueError(f"sequence number {sequence} is in use or out of range")
        data = encode(message, self.version, sequence)  # EncodingError is a ValueError
        request = Request(sequence, message, spec)
        self.pending[sequence] = request
        self._outgoing.append(data)
        return request

    def _allocate_sequence(self) -> int:
        for _ in range(len(self.pending) + 2):
            sequence = self._next_sequence
            self._next_sequence = sequence + 1 if sequence < _MAX_SEQUENCE else 1
            if sequence not in self.pending:
                return sequence
        raise RuntimeError("no free sequence number")  # pragma: no cover

    def data_to_send(self) -> bytes:
        """Every byte queued since the last call (requests, and description fetches)."""
        data = b"".join(self._outgoing)
        self._outgoing.clear()
        return data

    # ----------------------------------------------------------------------------------------
    # Receiving
    # ----------------------------------------------------------------------------------------

    def receive_data(self, data: bytes) -> list[Event]:
        """Feed bytes from the server (any chunking); return what happened, in order."""
        if self.closed or not data:
            return []
        if self._deframer.version is None and len(self._prefix) < 256:
            self._prefix += data[: 256 - len(self._prefix)]
        self._deframer.feed(data)
        events: list[Event] = []
        while True:
            try:
                frame = self._deframer.next_frame()
            except ProtocolError as error:
                events.extend(self._break(self._stream_error(error)))
                return events
            if frame is None:
                return events
            events.extend(self._handle_frame(frame))
            if self.closed:
                return events

    def connection_lost(self, reason: str = "connection closed") -> list[Event]:
        """The transport closed: every waiting request fails with ``ConnectionClosed``."""
        if self.closed:
            return []
        return self._break(ConnectionClosed(reason))

    def _stream_error(self, error: ProtocolError) -> StreamBroken:
        if self._deframer.version is None:
            text = self._prefix.decode("utf-8", "replace")
            return StreamBroken(f"the server does not speak TP: {text.strip()!r}", error, text)
        return StreamBroken(f"unreadable data from the server: {error.message}", error)

    def _break(self, error: ClientError) -> list[Event]:
        self.closed = True
        self.error = error
        events: list[Event] = [ConnectionFailed(error)]
        pending, self.pending = self.pending, {}
        self._fetching.clear()
        for request in pending.values():
            request.done = True
            request.error = error
            if not request.internal:
                events.append(ReplyReceived(request))
        return events

    def _handle_frame(self, frame: Frame) -> list[Event]:
        if frame.version != self.version:
            # tpserver-cpp answers a version it does not speak with a Fail in another version.
            try:
                message = decode(frame)
                text = getattr(message, "message", "")
            except ProtocolError:
                text = ""
            error = VersionRejected(
                f"the server refused protocol {self.version.name}: {text}".rstrip(": "),
                text=text,
            )
            return self._break(error)
        request = self.pending.get(frame.sequence)
        if request is None and frame.sequence == 0:
            request = self._connect_waiting_for(frame)
            if request is None:
                return [self._async_event(frame)]
        if request is None:
            unsolicited: Message | None
            try:
                unsolicited = self._decode(frame)
            except ProtocolError:
                unsolicited = None
            return [UnsolicitedFrame(frame, unsolicited)]
        return self._add_frame(request, frame)

    def _connect_waiting_for(self, frame: Frame) -> Request | None:
        """PY's ``_connect`` accepts a sequence-0 answer to Connect (§5.6); so do we."""
        if frame.type not in (FrameType.OKAY, FrameType.FAIL, FrameType.REDIRECT):
            return None
        for request in self.pending.values():
            if isinstance(request.message, Connect) and not request.started:
                return request
        return None

    def _async_event(self, frame: Frame) -> Event:
        try:
            return AsyncReceived(self._decode(frame))
        except ProtocolError:
            return UnsolicitedFrame(frame, None)

    def _decode(self, frame: Frame) -> Message:
        message = decode(frame, object_descs=self.object_descs, order_descs=self.order_descs)
        self._learn(message)
        return message

    def _learn(self, message: Message) -> None:
        if isinstance(message, ObjectDesc):
            self.object_descs[message.id] = message
            self._unavailable.pop(("object", message.id), None)
        elif isinstance(message, OrderDesc):
            self.order_descs[message.id] = message
            self._unavailable.pop(("order", message.id), None)

    def _add_frame(self, request: Request, frame: Frame) -> list[Event]:
        if frame.type == FrameType.SEQUENCE and not request.started:
            try:
                announced = decode(frame)
                assert isinstance(announced, SequenceFrame)  # the frame type says so
                count = announced.number
            except ProtocolError as error:
                return self._finish(request, MalformedReply(str(error), error))
            request.expected = count
            if count == 0:
                return self._complete(request)
            return []
        if request.frames_complete:
            # More frames than the Sequence announced: not ours to keep.
            return [UnsolicitedFrame(frame, None)]
        request.items.append(self._decode_item(frame))
        if request.frames_complete:
            return self._complete(request)
        return []

    def _decode_item(self, frame: Frame):
        try:
            return self._decode(frame)
        except MissingDescriptionError as error:
            key = (error.kind, error.type_id)
            if not self.lazy_descriptions:
                return Undecodable(frame, error)
            if key in self._unavailable:
                return Undecodable(
                    frame, DescriptionUnavailable(error.kind, error.type_id, self._unavailable[key])
                )
            self._fetch_description(*key)
            return _Waiting(frame, *key)
        except ProtocolError as error:
            return Undecodable(frame, error)

    def _fetch_description(self, kind: str, type_id: int) -> None:
        key = (kind, type_id)
        if key in self._fetching:
            return
        message = GetObjectDesc((type_id,)) if kind == "object" else GetOrderDesc((type_id,))
        request = self.send(message)
        request.internal = True
        self._fetching[key] = request

    # ----------------------------------------------------------------------------------------
    # Completing requests
    # ----------------------------------------------------------------------------------------

    def _complete(self, request: Request) -> list[Event]:
        if any(isinstance(item, _Waiting) for item in request.items):
            return []  # finished later, when the descriptions are in (_descriptions_arrived)
        if request.internal:
            return self._description_reply(request)
        error, reply = self._evaluate(request)
        return self._finish(request, error, reply)

    def _finish(self, request: Request, error: ClientError | None, reply=None) -> list[Event]:
        request.done = True
        request.error = error
        request.reply = reply if error is None else None
        self.pending.pop(request.sequence, None)
        return [] if request.internal else [ReplyReceived(request)]

    def _evaluate(self, request: Request) -> tuple[ClientError | None, object]:
        spec, items, message = request.spec, request.items, request.message
        accepts = spec.accepts
        name = type(message).__name__
        if request.expected is None or (spec.form is ReplyForm.SINGLE and request.expected == 1):
            (item,) = items
            if isinstance(item, Fail):
                return RequestFailed(item, message), None
            if isinstance(item, Undecodable):
                cause = item.error if isinstance(item.error, ProtocolError) else None
                return MalformedReply(f"answer to {name}: {item.error}", cause), None
            if not isinstance(item, accepts):
                return UnexpectedReply(f"{name} answered with {type(item).__name__}", item), None
            return None, (item if spec.form is ReplyForm.SINGLE else (item,))
        if spec.form is ReplyForm.SINGLE:
            return UnexpectedReply(f"{name} answered with a Sequence of {request.expected}"), None
        for item in items:
            if not isinstance(item, (Fail, Undecodable, *accepts)):
                return UnexpectedReply(f"{name} answered with {type(item).__name__}", item), None
        return None, tuple(items)

    def _description_reply(self, request: Request) -> list[Event]:
        kind = "object" if isinstance(request.message, GetObjectDesc) else "order"
        descs = self.object_descs if kind == "object" else self.order_descs
        error, _ = self._evaluate(request)
        self._finish(request, error)
        asked = request.message
        assert isinstance(asked, (GetObjectDesc, GetOrderDesc))
        for type_id in asked.ids:
            self._fetching.pop((kind, type_id), None)
            if type_id not in descs:
                reason = str(error) if error is not None else "the server sent none"
                self._unavailable[(kind, type_id)] = reason
        return self._descriptions_arrived()

    def _descriptions_arrived(self) -> list[Event]:
        events: list[Event] = []
        for request in list(self.pending.values()):
            changed = False
            for index, item in enumerate(request.items):
                if not isinstance(item, _Waiting):
                    continue
                key = (item.kind, item.type_id)
                if key in self._fetching:
                    continue
                request.items[index] = self._decode_item(item.frame)
                changed = True
            if changed and request.frames_complete and request.sequence in self.pending:
                events.extend(self._complete(request))
        return events
