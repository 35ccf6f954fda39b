"""The Twisted side: one `TPConnection` per TCP connection, frames in, replies out, in order.

Bytes go through `protocol.Deframer` (which fixes the connection's version from its first
bytes); each frame is decoded and handed to the connection's `Session`. Requests are answered
strictly in arrival order, one at a time, because clients pipeline requests and match replies by
sequence number (§6.1); a reply made of several frames goes out in one write. Nothing a peer
sends can raise into the reactor: protocol errors become the answers tpserver-cpp gives, and a
handler that fails answers Fail and leaves every other connection alone.
"""

from __future__ import annotations

from collections import deque

from twisted.internet import defer
from twisted.internet import protocol as twisted_protocol
from twisted.logger import Logger

import protocol as tp
from protocol import Answer, Deframer, ProtocolError

from . import catalogue
from .directory import GameDirectory
from .session import Session
from .tp_errors import internal_error
from .views.frame_cache import FrameCache

log = Logger()

# A client that sends more than this many requests ahead of our replies is paused until we
# catch up, so a flood cannot make the server buffer without bound.
MAX_PENDING = 256


class TPConnection(twisted_protocol.Protocol):
    def __init__(self, directory: GameDirectory, frames=None):
        self.directory = directory
        self.frames = frames
        self.deframer = Deframer()
        self.session: Session | None = None
        self.pending: deque[tp.Frame | ProtocolError] = deque()
        self.busy = False
        self.paused = False
        self.closing = False  # the connection is going away: write nothing more
        self.stop_reading = False  # an error ended the byte stream: read nothing more

    # -- Twisted -------------------------------------------------------------------------

    def dataReceived(self, data: bytes) -> None:
        if self.closing or self.stop_reading:
            return
        self.deframer.feed(data)
        while not self.stop_reading:
            try:
                frame = self.deframer.next_frame()
            except ProtocolError as error:
                # Answered in turn, after the replies to the frames before it.
                self.pending.append(error)
                if error.answer in (Answer.FAIL, Answer.FAIL_AND_REDETECT):
                    self.deframer.recover()
                else:
                    self.stop_reading = True
                continue
            if frame is None:
                break
            self.pending.append(frame)
        if len(self.pending) > MAX_PENDING and not self.paused:
            self.paused = True
            self.transport.pauseProducing()
        self._process()

    def connectionLost(self, reason=None) -> None:
        self.closing = True
        self.pending.clear()
        if self.session is not None:
            self.session.connection_lost()

    # -- frames --------------------------------------------------------------------------

    def _protocol_error(self, error: ProtocolError) -> None:
        log.debug("protocol error from {peer}: {error}", peer=self._peer(), error=error.message)
        self.transport.write(tp.encode_error(error, self.deframer.version))
        if error.answer not in (Answer.FAIL, Answer.FAIL_AND_REDETECT):
            self.closing = True
            self.pending.clear()
            self.transport.loseConnection()

    def _process(self) -> None:
        while not self.busy and self.pending and not self.closing:
            frame = self.pending.popleft()
            if isinstance(frame, ProtocolError):
                self._protocol_error(frame)
                continue
            if self.session is None:
                host = self.transport.getHost()
                self.session = Session(
                    self.directory,
                    frame.version,
                    self._push,
                    getattr(host, "host", ""),
                    getattr(host, "port", 0),
                    close=self._close,
                    frames=self.frames,
                )
            try:
                message = tp.decode(frame, order_descs=catalogue.ORDER_DESCS)
            except ProtocolError as error:
                self.transport.write(tp.encode_error(error, frame.version, frame.sequence))
                continue
            try:
                result = self.session.handle(message, frame.sequence)
            except Exception:
                log.failure("handler failed for {message}", message=type(message).__name__)
                result = self._internal_error(frame)
            if isinstance(result, defer.Deferred):
                self.busy = True
                result.addErrback(self._handler_failed, frame)
                result.addCallback(self._answered)
                return
            self.transport.write(result)
        if self.paused and len(self.pending) < MAX_PENDING // 2 and not self.closing:
            self.paused = False
            self.transport.resumeProducing()

    def _answered(self, data: bytes) -> None:
        self.busy = False
        if not self.closing:
            self.transport.write(data)
            self._process()

    def _handler_failed(self, failure, frame: tp.Frame) -> bytes:
        log.failure("handler failed for frame type {type}", failure, type=frame.type)
        return self._internal_error(frame)

    def _internal_error(self, frame: tp.Frame) -> bytes:
        return tp.encode(internal_error(), frame.version, frame.sequence)

    def _close(self) -> None:
        self.closing = True
        self.pending.clear()
        self.transport.loseConnection()

    def _push(self, data: bytes) -> None:
        if not self.closing:
            self.transport.write(data)

    def _peer(self) -> str:
        peer = self.transport.getPeer() if self.transport else None
        return f"{getattr(peer, 'host', '?')}:{getattr(peer, 'port', '?')}"


class TPFactory(twisted_protocol.Factory):
    """Serves TP on one or more listeners; keeps the encoded frames of each game for all its
    connections (the read side's cache, `server.views.frame_cache`)."""

    noisy = False

    def __init__(self, directory: GameDirectory):
        self.directory = directory
        self._frame_caches: dict[int, FrameCache] = {}

    def frames(self, game_id: int) -> FrameCache:
        cache = self._frame_caches.get(game_id)
        if cache is None:
            cache = self._frame_caches[game_id] = FrameCache()
        return cache

    def buildProtocol(self, addr) -> TPConnection:
        connection = TPConnection(self.directory, self.frames)
        connection.factory = self
        return connection
