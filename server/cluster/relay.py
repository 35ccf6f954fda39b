"""A TP connection from this node to another: how a session is relayed to its game's owner.

`Upstream` is the client end of one TP connection to another node's listener (its advertised
address). `exchange(frame)` sends one request frame and fires with every frame of its answer:
one frame, or Sequence(N) and the N frames after it (the server answers requests strictly in
order, §6.1, so answers are matched by order and sequence number). The relay numbers its own
requests: the client's sequence numbers are put back on the answer by the caller. Frames the
owner pushes (sequence 0: TimeRemaining) go to `on_push` as they come. When the connection
ends, every exchange still waiting fails with `UpstreamLost` and `on_lost` runs.

An owner that stops answering (frozen, or cut off from its peers by the network) would keep a
relayed session waiting for as long as it is silent, although its game moves to another node
after `failover_timeout`. So an answer has a deadline (`answer_timeout`): when the oldest
request has waited that long the connection is given up, its exchanges fail with
`UpstreamLost`, and the session looks for the game's owner again (`server.cluster.routing`).

The first request on an upstream is a Connect whose client string starts with `RELAY_CLIENT`,
so the owner knows the session is relayed (a node that lets the game go closes such sessions
instead of relaying them once more).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import cast

from twisted.internet import defer
from twisted.internet import protocol as twisted_protocol
from twisted.internet.endpoints import HostnameEndpoint
from twisted.internet.interfaces import IDelayedCall, IReactorTime, ITCPTransport
from twisted.logger import Logger

import protocol as tp
from protocol import Deframer, Frame, FrameType, ProtocolError, Version
from server.config.cluster import parse_address

log = Logger()

RELAY_CLIENT = "tpserver-tae-relay"
CONNECT_TIMEOUT_S = 5


class UpstreamLost(Exception):
    """The connection to the owner ended before the answer came."""


@dataclass
class _Exchange:
    sequence: int
    done: defer.Deferred
    frames: list[Frame] = field(default_factory=list)
    expected: int = 1

    def add(self, frame: Frame) -> bool:
        """Take one frame of the answer; True once the answer is complete."""
        if not self.frames and frame.type == FrameType.SEQUENCE:
            try:
                count = tp.decode(frame).number  # type: ignore[attr-defined]
            except ProtocolError:
                count = 0
            self.expected = 1 + max(0, int(count))
        self.frames.append(frame)
        return len(self.frames) >= self.expected


class Upstream(twisted_protocol.Protocol):
    def __init__(
        self,
        version: Version,
        on_push: Callable[[Frame], None],
        on_lost: Callable[[], None],
        *,
        clock: IReactorTime | None = None,
        answer_timeout: float | None = None,
    ):
        self.version = version
        self.on_push = on_push
        self.on_lost = on_lost
        self.deframer = Deframer()
        self.exchanges: deque[_Exchange] = deque()
        self.sequence = 0
        self.lost = False
        self.clock = clock
        self.answer_timeout = answer_timeout
        self._deadline: IDelayedCall | None = None

    # -- requests --------------------------------------------------------------------------

    def exchange(self, frame: Frame) -> defer.Deferred:
        """Send `frame` (its sequence number replaced by ours); fires with the answer's frames."""
        return self.exchange_many([frame])[0]

    def exchange_many(self, frames: list[Frame]) -> list[defer.Deferred]:
        """Send several request frames in one write (answered in order)."""
        if self.lost or self.transport is None:
            return [defer.fail(UpstreamLost("the connection to the owner is closed")) for _ in frames]
        waits, data = [], []
        for frame in frames:
            self.sequence = self.sequence % 0x7FFFFFFF + 1
            exchange = _Exchange(self.sequence, defer.Deferred())
            self.exchanges.append(exchange)
            waits.append(exchange.done)
            data.append(replace(frame, sequence=self.sequence).to_bytes())
        self.transport.write(b"".join(data))
        self._watch()
        return waits

    def request(self, message: tp.Message) -> defer.Deferred:
        """Send a message of our own; fires with the answer's frames."""
        body = tp.encode_body(message, self.version)
        return self.exchange(Frame(self.version, 0, 1, message.TYPE, body))

    def close(self) -> None:
        if self.transport is not None and not self.lost:
            self.transport.loseConnection()

    # -- the answer's deadline --------------------------------------------------------------

    def _watch(self, restart: bool = False) -> None:
        """Keep a deadline on the oldest request waiting (a new one when it changed)."""
        if self.clock is None or not self.answer_timeout:
            return
        if restart:
            self._unwatch()
        if self.exchanges and self._deadline is None and not self.lost:
            self._deadline = self.clock.callLater(self.answer_timeout, self._overdue)

    def _unwatch(self) -> None:
        if self._deadline is not None and self._deadline.active():
            self._deadline.cancel()
        self._deadline = None

    def _overdue(self) -> None:
        self._deadline = None
        if self.lost or not self.exchanges:
            return
        log.warn(
            "relay: the owner has not answered for {seconds:.0f} s; giving the connection up",
            seconds=self.answer_timeout,
        )
        self.give_up()

    def give_up(self) -> None:
        """Drop the connection at once (no waiting for a silent peer): every exchange waiting
        fails with UpstreamLost and `on_lost` runs."""
        if self.transport is not None and not self.lost:
            cast(ITCPTransport, self.transport).abortConnection()

    # -- Twisted ---------------------------------------------------------------------------

    def dataReceived(self, data: bytes) -> None:
        self.deframer.feed(data)
        while not self.lost:
            try:
                frame = self.deframer.next_frame()
            except ProtocolError as error:
                log.warn("relay: the owner sent a broken frame ({error}); closing", error=error.message)
                self.close()
                return
            if frame is None:
                return
            if frame.sequence == 0:
                self.on_push(frame)
                continue
            if not self.exchanges or self.exchanges[0].sequence != frame.sequence:
                log.warn("relay: an answer to no request (sequence {seq}); closing", seq=frame.sequence)
                self.close()
                return
            if self.exchanges[0].add(frame):
                exchange = self.exchanges.popleft()
                self._watch(restart=True)
                exchange.done.callback(exchange.frames)

    def connectionLost(self, reason=None) -> None:
        self.lost = True
        self._unwatch()
        waiting, self.exchanges = self.exchanges, deque()
        for exchange in waiting:
            exchange.done.errback(UpstreamLost("the connection to the owner ended"))
        self.on_lost()


class _OneUpstream(twisted_protocol.ClientFactory):
    noisy = False

    def __init__(self, upstream: Upstream):
        self.upstream = upstream

    def buildProtocol(self, addr) -> Upstream:
        return self.upstream


def connect_upstream(
    reactor,
    advertise: str,
    version: Version,
    on_push: Callable[[Frame], None],
    on_lost: Callable[[], None],
    answer_timeout: float | None = None,
) -> defer.Deferred:
    """An `Upstream` connected to `advertise` (HOST:PORT), whose answers must come within
    `answer_timeout` seconds (None: no deadline); fails with UpstreamLost."""
    try:
        host, port = parse_address(advertise)
    except ValueError as error:
        return defer.fail(UpstreamLost(str(error)))
    endpoint = HostnameEndpoint(reactor, host, port, timeout=CONNECT_TIMEOUT_S)
    upstream = Upstream(version, on_push, on_lost, clock=reactor, answer_timeout=answer_timeout)
    d = endpoint.connect(_OneUpstream(upstream))

    def failed(failure):
        raise UpstreamLost(f"cannot reach {advertise}: {failure.getErrorMessage()}")

    return d.addErrback(failed)


def decode_answer(frames: list[Frame]) -> tp.Message | None:
    """The first frame of an answer decoded (Okay, Fail, TimeRemaining…), None if it does not."""
    try:
        return tp.decode(frames[0]) if frames else None
    except ProtocolError:
        return None


def answer_bytes(frames: list[Frame], sequence: int) -> bytes:
    """The answer's frames with the client's sequence number, in one write."""
    return b"".join(replace(frame, sequence=sequence).to_bytes() for frame in frames)
