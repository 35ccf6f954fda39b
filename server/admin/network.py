"""The admin listener: one `AdminConnection` per TCP (or TLS) connection, and its factory.

The connection's `RequestPump` (`server.tp.pump`, shared with the TP listener) deframes the
bytes, hands each frame to the connection's `AdminSession` and writes the answers strictly in
arrival order, one request at a time (tpadmin-cpp pipelines its 22 description requests, and a
command may wait for the store). The admin protocol uses TP04 frames only: a TP03 client is told
so and disconnected. LogMessages are written as the log produces them, between answers. The
connection registers itself as the transport's producer: while the transport's buffer is full
(an admin that does not read), log lines are dropped and counted instead of piling up, and the
admin is told how many when it catches up.
"""

from __future__ import annotations

from typing import Any

from twisted.internet import defer
from twisted.internet import protocol as twisted_protocol
from twisted.internet.interfaces import IPushProducer
from twisted.logger import Logger, globalLogPublisher
from zope.interface import implementer

from protocol.admin import AdminLogLevel, LogMessage, encode_admin
from protocol.codec import encode
from protocol.enums import FailCode, Version
from protocol.header import Frame
from protocol.messages import Fail
from server.admin.backend import OperatorBackend
from server.admin.commands import descriptions
from server.admin.log_stream import AdminLogStream
from server.admin.session import AdminSession
from server.config.admin import AdminSettings
from server.game.passwords import PasswordHasher
from server.tp.pump import RequestPump

log = Logger()

#: Requests queued ahead of our answers before the connection stops reading.
MAX_PENDING = 64
TP03_REFUSAL = "This is a Thousand Parsec admin port: the admin protocol uses TP04 frames"


@implementer(IPushProducer)
class AdminConnection(twisted_protocol.Protocol):
    transport: Any  # an ITransport that is also an IProducer and an IConsumer

    def __init__(self, factory: AdminFactory):
        self.factory = factory
        self.pump: RequestPump | None = None
        self.session: AdminSession | None = None
        self.log_paused = False
        self.dropped = 0

    @property
    def closing(self) -> bool:
        """Whether the connection is going away (nothing more is written)."""
        return self.pump is not None and self.pump.closing

    # -- Twisted ----------------------------------------------------------------------------

    def connectionMade(self) -> None:
        peer = self.transport.getPeer()
        self.peer = f"{getattr(peer, 'host', '?')}:{getattr(peer, 'port', '?')}"
        self.pump = RequestPump(self.transport, self, max_pending=MAX_PENDING)
        self.session = AdminSession(
            self.factory.settings.users,
            self.factory.descriptions,
            self.factory.backend,
            self.factory.hasher,
            server_version=self.factory.server_version,
            peer=self.peer,
            logged_in=self._logged_in,
            close=self.pump.close_after_answer,  # too many bad logins
        )
        self.factory.connections.add(self)
        self.pump.register_producer(self)

    def dataReceived(self, data: bytes) -> None:
        assert self.pump is not None
        self.pump.feed(data)

    def connectionLost(self, reason=None) -> None:
        if self.pump is not None:
            self.pump.connection_lost()
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
        if self.pump is not None:
            self.pump.stop()

    # -- answers (server.tp.pump.Answering) -------------------------------------------------

    def answer(self, frame: Frame) -> bytes | defer.Deferred:
        assert self.pump is not None and self.session is not None
        if frame.version != Version.TP04:
            self.pump.close_after_answer()
            return encode(Fail(FailCode.PROTOCOL, TP03_REFUSAL), frame.version, frame.sequence)
        return self.session.handle(frame)

    def internal_error(self, frame: Frame) -> bytes:
        return encode_admin(Fail(FailCode.FRAME, "Internal server error"), frame.sequence)

    def may_answer(self) -> bool:
        return True

    def answered(self) -> None:
        pass

    def close(self) -> None:
        """Hang up (the admin listener stops)."""
        if self.pump is not None:
            self.pump.close()

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
        if self.pump is not None:
            self.pump.write(encode_admin(message, 0))


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
            connection.close()

    def buildProtocol(self, addr) -> AdminConnection:
        return AdminConnection(self)
