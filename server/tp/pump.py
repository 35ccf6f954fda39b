"""The request pump of a TP or admin connection: frames in, answers out, one at a time, in order.

The pieces are those of Twisted's AMP: framing (`protocol.Deframer`, whose loop
`frames_and_errors` is modelled on `IntNStringReceiver`), dispatch (this pump) and the handlers
(the TP `Session`, the `AdminSession`), with the connection (`server.tp.network.TPConnection`,
`server.admin.network.AdminConnection`) as the glue that knows what is its own: limits, the
login guard and the log stream.

Clients pipeline requests and match the replies by sequence number (§6.1), so each request is
answered strictly in arrival order and only after the one before it: a Deferred answer holds
the requests behind it. An answer is written in one `write`, however many frames it has. An
error in the byte stream is answered in its turn, after the answers to the frames before it;
an error after which the stream cannot be read on ends the reading. A handler that raises or
whose Deferred fails is logged and answered with the connection's internal-error frame; nothing
a peer sends raises into the reactor. While more than `max_pending` requests wait, the pump
stops reading from the transport, and reads again once fewer than half of that wait.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Protocol

from twisted.internet import defer
from twisted.internet.interfaces import IPushProducer
from twisted.logger import Logger
from twisted.python.failure import Failure

from protocol.codec import encode_error
from protocol.deframer import Deframer
from protocol.enums import Version
from protocol.errors import ProtocolError
from protocol.header import Frame

log = Logger()


class Answering(Protocol):
    """What a connection gives its pump: the answers, and when it may make the next one."""

    def answer(self, frame: Frame) -> bytes | defer.Deferred[bytes]:
        """The answer to one request: its bytes, or a Deferred firing with them."""

    def internal_error(self, frame: Frame) -> bytes:
        """The answer to a request whose handler failed."""

    def may_answer(self) -> bool:
        """Whether the next request may be answered now; when not, the connection calls
        `RequestPump.answer_waiting` once it may (a rate limit)."""

    def answered(self) -> None:
        """An answer was written (a request's, or a protocol error's) and the connection goes on."""


class RequestPump:
    """Answers the requests of one connection over `transport` in arrival order (see the module
    docstring)."""

    def __init__(
        self,
        transport: Any,  # an ITransport that is also an IProducer (pause/resume reading)
        answering: Answering,
        *,
        max_pending: int,
    ):
        self.transport = transport
        self.answering = answering
        self.max_pending = max_pending
        self.deframer = Deframer()
        self.pending: deque[Frame | ProtocolError] = deque()
        self.busy = False  # a Deferred answer is being made
        self.closing = False  # the connection is going away: write and answer nothing more
        self.reading_ended = False  # the byte stream ended (an error, a hang-up to come)
        self.reading_paused = False  # too many requests wait: the transport does not read
        self._in_answer = False  # inside `answering.answer`
        self._in_loop = False  # inside `answer_waiting`
        self._close_after_answer = False
        self._producer: IPushProducer | None = None
        self._hung_up = False

    @property
    def version(self) -> Version | None:
        """The connection's protocol version, fixed by its first bytes (None before them)."""
        return self.deframer.version

    # -- bytes in ------------------------------------------------------------------------

    def feed(self, data: bytes) -> None:
        """Take bytes the peer sent; answer what can be answered now."""
        if self.closing or self.reading_ended:
            return
        self.deframer.feed(data)
        for item in self.deframer.frames_and_errors():
            self.pending.append(item)
            if isinstance(item, ProtocolError) and item.closes_stream:
                self.reading_ended = True
        if len(self.pending) > self.max_pending and not self.reading_paused:
            self.reading_paused = True
            self.transport.pauseProducing()
        self.answer_waiting()

    def answer_waiting(self) -> None:
        """Answer the waiting requests in order, until one is answered later (a Deferred), the
        connection may not answer now, or none waits."""
        if self._in_loop:  # an answer that came at once, from inside the loop: it goes on
            return
        self._in_loop = True
        try:
            while not self.busy and self.pending and not self.closing:
                if not self.answering.may_answer():
                    break
                item = self.pending.popleft()
                if isinstance(item, ProtocolError):
                    self._answer_error(item)
                    continue
                answer = self._answer(item)
                if isinstance(answer, defer.Deferred):
                    self.busy = True
                    answer.addErrback(self._handler_failed, item)
                    answer.addCallback(self._answered)
                    # an answer not there yet holds the rest; one already there (a Deferred
                    # that had fired) was written by `_answered`, and the loop goes on here
                    # rather than one call deeper for each such answer
                else:
                    self._deliver(answer)
        finally:
            self._in_loop = False
        if self.reading_paused and len(self.pending) < self.max_pending // 2 and not self.closing:
            self.reading_paused = False
            self.transport.resumeProducing()

    def _answer(self, frame: Frame) -> bytes | defer.Deferred[bytes]:
        self._in_answer = True
        try:
            return self.answering.answer(frame)
        except Exception:
            log.failure("answering frame type {type} from {peer} failed", type=frame.type, peer=self.peer())
            return self.answering.internal_error(frame)
        finally:
            self._in_answer = False

    def _handler_failed(self, failure: Failure, frame: Frame) -> bytes:
        log.failure(
            "answering frame type {type} from {peer} failed", failure, type=frame.type, peer=self.peer()
        )
        return self.answering.internal_error(frame)

    def _answered(self, data: bytes) -> None:
        self.busy = False
        self._deliver(data)
        self.answer_waiting()

    def _answer_error(self, error: ProtocolError) -> None:
        log.debug("protocol error from {peer}: {error}", peer=self.peer(), error=error.message)
        self.write(encode_error(error, self.deframer.version))
        if error.closes_stream:
            self.close()
        else:
            self.answering.answered()

    def _deliver(self, data: bytes) -> None:
        self.write(data)
        if self._close_after_answer:
            self.close()
        elif not self.closing:
            self.answering.answered()

    # -- bytes out -----------------------------------------------------------------------

    def write(self, data: bytes) -> None:
        """Write `data` unless the connection is going away."""
        if data and not self.closing:
            self.transport.write(data)

    def register_producer(self, producer: IPushProducer) -> None:
        """Make `producer` (the connection) the transport's producer: the transport pauses it
        while its buffer is full. Unregistered when the connection closes."""
        self.transport.registerProducer(producer, True)
        self._producer = producer

    # -- the end -------------------------------------------------------------------------

    def close_after_answer(self) -> None:
        """Hang up once the answer being made is written (at once when none is): nothing
        more is read or answered."""
        self.reading_ended = True
        self.pending.clear()
        if self.busy or self._in_answer:
            self._close_after_answer = True
        else:
            self.close()

    def close(self) -> None:
        """Hang up after the bytes written so far."""
        self._stop()
        if not self._hung_up:
            self._hung_up = True
            self.transport.loseConnection()

    def abort(self) -> None:
        """Hang up now, dropping the bytes not yet sent."""
        self._stop()
        if not self._hung_up:
            self._hung_up = True
            self.transport.abortConnection()

    def stop(self) -> None:
        """Answer nothing more: the transport stopped (`stopProducing`)."""
        self.closing = True
        self.pending.clear()

    def connection_lost(self) -> None:
        self._hung_up = True
        self.stop()

    def _stop(self) -> None:
        self.stop()
        if self._producer is not None:
            # a transport with a registered producer waits for it before it closes
            self._producer = None
            self.transport.unregisterProducer()

    def peer(self) -> str:
        peer = self.transport.getPeer() if self.transport is not None else None
        return f"{getattr(peer, 'host', '?')}:{getattr(peer, 'port', '?')}"
