"""The admin listener: one `AdminConnection` per TCP (or TLS) connection, and its factory.

The connection's `RequestPump` (`server.tp.pump`, shared with the TP listener) deframes the
bytes, hands each frame to the connection's `AdminSession` and writes the answers strictly in
arrival order, one request at a time (tpadmin-cpp pipelines its 22 description requests, and a
command may wait for the store). The admin protocol uses TP04 frames only: a TP03 client is told
so and disconnected. LogMessages are written as the log produces them, between answers. The
connection registers itself as the transport's producer: while the transport's buffer is full
(an admin that does not read), log lines are dropped and counted instead of piling up, and the
admin is told how many when it catches up; its requests wait meanwhile (and reading stops once
`MAX_PENDING` wait), so an admin that does not read cannot make the server buffer answers.

A server's admin listener has the limits TP has (`server.config.limits`, the `admin_*` settings
and the login ones), enforced by the same pieces: connections per address (`ConnectionLimiter`,
within the descriptor share the web listeners take from), a deadline for the login that frames
do not extend, an idle timeout once logged in, frames per second with a burst (`FrameThrottle`)
and the server's one `LoginGuard` (per connection, address and account, and globally; an admin
account is an account of its own to it, `admin_account_key`). A refusal is an admin-protocol
Fail with a text. A factory made without limits (tests) has none but its five bad logins per
connection.
"""

from __future__ import annotations

from typing import Any

from twisted.internet import defer
from twisted.internet import protocol as twisted_protocol
from twisted.internet.interfaces import IDelayedCall, IPushProducer
from twisted.logger import Logger, globalLogPublisher
from zope.interface import implementer

from protocol.admin import AdminLogLevel, LogMessage, decode_admin, encode_admin
from protocol.codec import encode
from protocol.enums import FailCode, FrameType, Version
from protocol.errors import ProtocolError
from protocol.header import Frame
from protocol.messages import Fail, Login
from server.admin.backend import OperatorBackend
from server.admin.commands import descriptions
from server.admin.log_stream import AdminLogStream
from server.admin.session import MAX_LOGIN_FAILURES, AdminSession, State
from server.config.admin import AdminSettings
from server.config.limits import Limits
from server.game.passwords import PasswordHasher
from server.guards.connections import ConnectionLimiter, DescriptorShare
from server.guards.login_guard import GuardedClient, LoginGuard, admin_account_key
from server.guards.rates import FrameThrottle, address_key
from server.model.refusals import Refused
from server.tp.pump import RequestPump

log = Logger()

#: Requests queued ahead of our answers before the connection stops reading.
MAX_PENDING = 64
TP03_REFUSAL = "This is a Thousand Parsec admin port: the admin protocol uses TP04 frames"
TOO_MANY_CONNECTIONS = (
    "Too many admin connections from your address (at most {limit}); close one and try again."
)
SERVER_FULL = "The server has no room for another admin connection right now; try again shortly."
NO_LOGIN_IN_TIME = "No login within {seconds:g} s of connecting; the connection is closed."
IDLE = "No request for {seconds:g} s; the connection is closed."


@implementer(IPushProducer)
class AdminConnection(twisted_protocol.Protocol):
    transport: Any  # an ITransport that is also an IProducer and an IConsumer

    def __init__(self, factory: AdminFactory, address: str = "?", refusal: str | None = None):
        self.factory = factory
        self.address = address  # the key the limits count by (IPv6: its /64)
        self.refusal = refusal  # set: refused (too many connections), told so and closed
        self.pump: RequestPump | None = None
        self.session: AdminSession | None = None
        self.login: GuardedClient | None = None
        self.paused = False  # the transport's buffer is full: no log lines, no answers
        self.dropped = 0
        self._throttle: FrameThrottle | None = None
        self._deadline: IDelayedCall | None = None  # the login's, then the idle timeout
        self._login_overdue = False

    @property
    def closing(self) -> bool:
        """Whether the connection is going away (nothing more is written)."""
        return self.pump is not None and self.pump.closing

    # -- Twisted ----------------------------------------------------------------------------

    def connectionMade(self) -> None:
        peer = self.transport.getPeer()
        self.peer = f"{getattr(peer, 'host', '?')}:{getattr(peer, 'port', '?')}"
        self.pump = RequestPump(self.transport, self, max_pending=MAX_PENDING)
        if self.refusal is not None:
            self._hang_up(self.refusal)
            return
        limits, guard = self.factory.limits, self.factory.guard
        if guard is not None:
            self.login = guard.client(self.address, "admin")
        self.session = AdminSession(
            self.factory.settings.users,
            self.factory.descriptions,
            self.factory.backend,
            self.factory.hasher,
            server_version=self.factory.server_version,
            peer=self.peer,
            logged_in=self._logged_in,
            close=self.pump.close_after_answer,  # too many bad logins
            max_login_failures=0 if self.login is not None else MAX_LOGIN_FAILURES,
        )
        self.factory.connections.add(self)
        self.pump.register_producer(self)
        if limits is not None:
            if limits.admin_frames_per_second:
                self._throttle = FrameThrottle(
                    self.factory.reactor,
                    limits.admin_frames_per_second,
                    limits.admin_frame_burst,
                    self.pump.answer_waiting,
                    self._slowed,
                )
            if limits.admin_login_seconds:
                self._deadline = self.factory.reactor.callLater(limits.admin_login_seconds, self._login_late)

    def dataReceived(self, data: bytes) -> None:
        assert self.pump is not None
        self.pump.feed(data)

    def connectionLost(self, reason=None) -> None:
        if self.pump is not None:
            self.pump.connection_lost()
        if self._throttle is not None:
            self._throttle.stop()
        if self._deadline is not None and self._deadline.active():
            self._deadline.cancel()
        if self.login is not None:
            self.login.lost()
        self.factory.connection_closed(self)
        self.factory.stream.unsubscribe(self._log)
        self.factory.connections.discard(self)
        if self.session is not None and self.session.user is not None:
            log.info("admin {name} ({peer}) disconnected", name=self.session.user, peer=self.peer)

    # -- IPushProducer: the transport says when its buffer is full ------------------------

    def pauseProducing(self) -> None:
        self.paused = True

    def resumeProducing(self) -> None:
        self.paused = False
        if self.dropped and not self.closing:
            count, self.dropped = self.dropped, 0
            self._write_log(
                LogMessage(
                    int(self.factory.reactor.seconds()),
                    AdminLogLevel.WARNING,
                    f"{count} log messages were not sent: this admin connection was not reading",
                )
            )
        if self.pump is not None and not self.closing:
            self.pump.answer_waiting()  # the requests that waited while the admin did not read

    def stopProducing(self) -> None:
        if self.pump is not None:
            self.pump.stop()

    # -- answers (server.tp.pump.Answering) -------------------------------------------------

    def answer(self, frame: Frame) -> bytes | defer.Deferred:
        assert self.pump is not None and self.session is not None
        if frame.version != Version.TP04:
            self.pump.close_after_answer()
            return encode(Fail(FailCode.PROTOCOL, TP03_REFUSAL), frame.version, frame.sequence)
        if self.login is not None and frame.type == FrameType.LOGIN and self.session.state is State.CONNECTED:
            return self._guarded_login(frame)
        return self.session.handle(frame)

    def internal_error(self, frame: Frame) -> bytes:
        return encode_admin(Fail(FailCode.FRAME, "Internal server error"), frame.sequence)

    def may_answer(self) -> bool:
        """Not while the admin does not read (`paused`: the requests wait, then reading stops);
        then take a frame's token (`FrameThrottle`); without one, the pump is called back."""
        if self.paused:
            return False
        return self._throttle is None or self._throttle.may_answer()

    def answered(self) -> None:
        if self.closing:
            return
        if self.login is not None and self.login.must_close:
            self.close()
            return
        logged_in = self.session is not None and self.session.state is State.LOGGED_IN
        if self._login_overdue and not logged_in:
            self._login_late()
            return
        limits = self.factory.limits
        if logged_in and limits is not None and limits.admin_idle_seconds:
            if self._deadline is not None and self._deadline.active():
                self._deadline.cancel()
            self._deadline = self.factory.reactor.callLater(limits.admin_idle_seconds, self._idle)

    # -- the limits -------------------------------------------------------------------------

    def _guarded_login(self, frame: Frame) -> bytes | defer.Deferred:
        """A Login through the server's login guard: hashed when it gives a slot, a failure
        answered after its delay, refused untried (Fail 3) when over a budget."""
        assert self.login is not None and self.session is not None
        session = self.session
        try:
            message = decode_admin(frame)
        except ProtocolError:
            return session.handle(frame)  # the session's own answer to a Login it cannot read
        assert isinstance(message, Login)
        name = message.username.partition("@")[0]
        if not name or not message.password:
            return session.handle(frame)  # nothing to check: refused as such

        def refused(failure):
            failure.trap(Refused)
            return encode_admin(Fail(FailCode.UNAVAILABLE_TEMPORARILY, failure.value.message), frame.sequence)

        d = self.login.attempt(
            name,
            lambda: session.handle(frame),
            lambda answer: session.state is State.LOGGED_IN,
            account=admin_account_key(name),
            hurry=lambda: self.closing,
        )
        return d.addErrback(refused)

    def _login_late(self) -> None:
        """The login's deadline: a connection not logged in by now is told so and closed (a
        login being checked first gets its answer)."""
        self._deadline = None
        if self.closing or (self.session is not None and self.session.state is State.LOGGED_IN):
            return
        assert self.pump is not None
        if self.pump.busy:
            self._login_overdue = True  # decided once the login in hand is answered
            return
        limits = self.factory.limits
        seconds = limits.admin_login_seconds if limits is not None else 0
        log.info(
            "closing admin connection {peer}: no login within {seconds:g} s", peer=self.peer, seconds=seconds
        )
        self._hang_up(NO_LOGIN_IN_TIME.format(seconds=seconds))

    def _idle(self) -> None:
        self._deadline = None
        if self.closing or (self.pump is not None and self.pump.busy):
            return
        limits = self.factory.limits
        seconds = limits.admin_idle_seconds if limits is not None else 0
        log.info("closing admin connection {peer}: idle for {seconds:g} s", peer=self.peer, seconds=seconds)
        self._hang_up(IDLE.format(seconds=seconds))

    def _hang_up(self, text: str) -> None:
        """Tell the admin why (a Fail, sequence 0) and close."""
        assert self.pump is not None
        self.pump.write(encode_admin(Fail(FailCode.UNAVAILABLE_TEMPORARILY, text), 0))
        self.pump.close()

    def _slowed(self, rate: float) -> None:
        log.info(
            "slowing down admin connection {peer}: more than {rate:g} frames a second",
            peer=self.peer,
            rate=rate,
        )

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
        if self.paused:
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
        limits: Limits | None = None,
        guard: LoginGuard | None = None,
        share: DescriptorShare | None = None,
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
        # the limits (None: none, as in tests); the server's login guard; its descriptor share
        self.limits = limits
        self.guard = guard
        self.limiter = ConnectionLimiter(limits.admin_connections_per_address if limits else 0, share)

    def startFactory(self) -> None:
        self.publisher.addObserver(self._observer)

    def stopFactory(self) -> None:
        self.publisher.removeObserver(self._observer)
        for connection in list(self.connections):
            connection.close()

    def buildProtocol(self, addr) -> AdminConnection:
        key = address_key(str(getattr(addr, "host", "") or ""))
        refusal = None
        why = self.limiter.open(key) if self.limits is not None else None
        if why is not None:
            limit = self.limiter.per_address
            refusal = (
                TOO_MANY_CONNECTIONS.format(limit=limit) if why == ConnectionLimiter.ADDRESS else SERVER_FULL
            )
            log.warn(
                "refusing an admin connection from {address}: {why}",
                address=key,
                why="too many connections" if why == ConnectionLimiter.ADDRESS else "no descriptors left",
            )
        return AdminConnection(self, key, refusal)

    def connection_closed(self, connection: AdminConnection) -> None:
        """A connection counted by `buildProtocol` is gone."""
        if self.limits is not None and connection.refusal is None:
            self.limiter.close(connection.address)
