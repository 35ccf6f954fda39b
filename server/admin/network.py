"""The admin listener: one `AdminConnection` per TCP (or TLS) connection, and its factory.

Bytes go through `protocol.Deframer`; each frame goes to the connection's `AdminSession` and
the answers are written strictly in arrival order, one request at a time (tpadmin-cpp pipelines
its 22 description requests, and a command may wait for the store). LogMessages are written as
the log produces them, between answers. The connection registers itself as the transport's
producer: while the transport's buffer is full (an admin that does not read), log lines are
dropped and counted instead of piling up, and the admin is told how many when it catches up.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from twisted.internet import defer
from twisted.internet import protocol as twisted_protocol
from twisted.internet.interfaces import IPushProducer
from twisted.logger import Logger, globalLogPublisher
from zope.interface import implementer

from protocol.admin import AdminLogLevel, LogMessage, encode_admin
from protocol.codec import encode, encode_error
from protocol.deframer import Deframer
from protocol.enums import FailCode, Version
from protocol.errors import Answer, ProtocolError
from protocol.header import Frame
from protocol.messages import Fail
from server.admin.backend import OperatorBackend
from server.admin.commands import descriptions
from server.admin.log_stream import AdminLogStream
from server.admin.session import AdminSession
from server.config.admin import AdminSettings
from server.game.passwords import PasswordHasher

log = Logger()

#: Requests queued ahead of our answers before the connection stops reading.
MAX_PENDING = 64
TP03_REFUSAL = "This is a Thousand Parsec admin port: the admin protocol uses TP04 frames"


@implementer(IPushProducer)
class AdminConnection(twisted_protocol.Protocol):
    transport: Any  # an ITransport that is also an IProducer and an IConsumer

    def __init__(self, factory: AdminFactory):
        self.factory = factory
        self.deframer = Deframer()
        self.session: AdminSession | None = None
        self.pending: deque[Frame | ProtocolError] = deque()
        self.busy = False
        self.closing = False
        self.stop_reading = False
        self.reading_paused = False
        self.log_paused = False
        self.dropped = 0
        self._unregistered = False

    # -- Twisted ----------------------------------------------------------------------------

    def connectionMade(self) -> None:
        peer = self.transport.getPeer()
        self.peer = f"{getattr(peer, 'host', '?')}:{getattr(peer, 'port', '?')}"
        self.session = AdminSession(
            self.factory.settings.users,
            self.factory.descriptions,
            self.factory.backend,
            self.factory.hasher,
            server_version=self.factory.server_version,
            peer=self.peer,
            logged_in=self._logged_in,
            close=self._close_after_answer,
        )
        self.factory.connections.add(self)
        self.transport.registerProducer(self, True)

    def dataReceived(self, data: bytes) -> None:
        if self.closing or self.stop_reading:
            return
        self.deframer.feed(data)
        for item in self.deframer.frames_and_errors():
            self.pending.append(item)
            if isinstance(item, ProtocolError):
                if item.closes_stream:
                    self.stop_reading = True
            elif item.version != Version.TP04:
                self.stop_reading = True  # answered, then closed: admin speaks TP04 only
                break
        if len(self.pending) > MAX_PENDING and not self.reading_paused:
            self.reading_paused = True
            self.transport.pauseProducing()
        self._process()

    def connectionLost(self, reason=None) -> None:
        self.closing = True
        self.pending.clear()
        self.factory.stream.unsubscribe(self._log)
        self.factory.connections.discard(self)
        if self.session is not None and self.session.user is not None:
            log.info("admin {name} ({peer}) disconnected", name=self.session.user, peer=self.peer)

    # -- IPushProducer: the transport says when its buffer is full ------------------------

    def pauseProducing(self) -> None:
        self.log_paused = True

    def resumeProducing(self) -> None:
        self.log_paused = False
        if self.dropped and not self.closing:
            count, self.dropped = self.dropped, 0
            self._write_log(
                LogMessage(
                    int(self.factory.reactor.seconds()),
                    AdminLogLevel.WARNING,
                    f"{count} log messages were not sent: this admin connection was not reading",
                )
            )

    def stopProducing(self) -> None:
        self.closing = True

    # -- frames -----------------------------------------------------------------------------

    def _process(self) -> None:
        while not self.busy and self.pending and not self.closing:
            item = self.pending.popleft()
            if isinstance(item, ProtocolError):
                self._protocol_error(item)
                continue
            if item.version != Version.TP04:
                self.transport.write(
                    encode(Fail(FailCode.PROTOCOL, TP03_REFUSAL), item.version, item.sequence)
                )
                self._close()
                return
            assert self.session is not None
            try:
                answer = self.session.handle(item)
            except Exception:
                log.failure("admin: handling frame type {type} failed", type=item.type)
                answer = encode_admin(Fail(FailCode.FRAME, "Internal server error"), item.sequence)
            if isinstance(answer, defer.Deferred):
                self.busy = True
                answer.addErrback(self._handler_failed, item)
                answer.addCallback(self._answered)
                return
            self._write(answer)
        if self.reading_paused and len(self.pending) < MAX_PENDING // 2 and not self.closing:
            self.reading_paused = False
            self.transport.resumeProducing()

    def _handler_failed(self, failure, frame) -> bytes:
        log.failure("admin: handling frame type {type} failed", failure, type=frame.type)
        return encode_admin(Fail(FailCode.FRAME, "Internal server error"), frame.sequence)

    def _answered(self, data: bytes) -> None:
        self.busy = False
        self._write(data)
        self._process()

    def _write(self, data: bytes) -> None:
        if not self.closing:
            self.transport.write(data)

    def _protocol_error(self, error: ProtocolError) -> None:
        self.transport.write(encode_error(error, self.deframer.version or Version.TP04))
        if error.answer not in (Answer.FAIL, Answer.FAIL_AND_REDETECT):
            self._close()

    def _close(self) -> None:
        if self.closing and self._unregistered:
            return
        self.closing = True
        self.pending.clear()
        if not self._unregistered:
            # A transport with a registered producer waits for it before closing.
            self._unregistered = True
            self.transport.unregisterProducer()
        self.transport.loseConnection()

    def _close_after_answer(self) -> None:
        """Hang up once the answer being made is written (too many bad logins)."""
        self.stop_reading = True
        self.pending.clear()
        self.factory.reactor.callLater(0, self._close)

    # -- the log ----------------------------------------------------------------------------

    def _logged_in(self, name: str) -> None:
        self.factory.stream.subscribe(self._log)

    def _log(self, message: LogMessage) -> None:
        if self.closing:
            return
        if self.log_paused:
            self.dropped += 1
            return
        self._write_log(message)

    def _write_log(self, message: LogMessage) -> None:
        self.transport.write(encode_admin(message, 0))


class AdminFactory(twisted_protocol.Factory):
    """Admin connections for one server. The log stream is observed while the factory listens
    (`startFactory`/`stopFactory`); when the last port stops, open admin connections close.
    `hasher` checks admin passwords (the server's `ThreadPoolHasher`); the reactor's clock
    stamps the command table."""

    noisy = False

    def __init__(
        self,
        settings: AdminSettings,
        backend: OperatorBackend,
        reactor,
        hasher: PasswordHasher,
        *,
        server_version: str | None = None,
        log_publisher=None,
    ):
        from server.views.tp.games import SERVER_VERSION

        self.settings = settings
        self.backend = backend
        self.reactor = reactor
        self.hasher = hasher
        self.server_version = server_version or SERVER_VERSION
        self.publisher = log_publisher if log_publisher is not None else globalLogPublisher
        self.stream = AdminLogStream(reactor, settings.minimum_level)
        self._observer: Any = self.stream  # an ILogObserver (a callable taking an event)
        # One modtime for the whole command table: when this server made it.
        self.descriptions = descriptions(int(reactor.seconds()))
        self.connections: set[AdminConnection] = set()

    def startFactory(self) -> None:
        self.publisher.addObserver(self._observer)

    def stopFactory(self) -> None:
        self.publisher.removeObserver(self._observer)
        for connection in list(self.connections):
            connection._close()

    def buildProtocol(self, addr) -> AdminConnection:
        return AdminConnection(self)
