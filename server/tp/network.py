"""The Twisted side: one `TPConnection` per TCP connection, frames in, replies out, in order.

The connection's `RequestPump` (`server.tp.pump`, shared with the admin listener) deframes the
bytes and answers the requests strictly in arrival order, one at a time, because clients
pipeline requests and match replies by sequence number (§6.1); a reply made of several frames
goes out in one write. Each frame is decoded and handed to the connection's `Session`, made for
the version the first bytes fixed. Nothing a peer sends can raise into the reactor: protocol
errors become the answers tpserver-cpp gives, and a handler that fails answers Fail and leaves
every other connection alone.

No single client can stall the server (`server.config.limits` has the settings): a connection beyond
its address's share is answered Fail 3 and closed; frames beyond the per-connection rate wait
(reading pauses while too many wait); a connection that does not log in and sends nothing is
closed; a client that does not read its replies is cut off once the transport holds more than
`pending_output_bytes` for it (the transport pauses its producer, this connection, at that
size). Logins and account creations go through the server's `LoginGuard` (hashing slots,
growing delays, per-address budget). A connection made without limits (tests) has none.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from twisted.internet import defer
from twisted.internet import protocol as twisted_protocol
from twisted.internet.interfaces import IDelayedCall, IPushProducer, IReactorTime
from twisted.logger import Logger
from zope.interface import implementer

import protocol as tp
from protocol import FailCode, ProtocolError, fit_fail
from server.config.limits import Limits
from server.game.directory import GameDirectory
from server.game.passwords import split_login
from server.guards.login_guard import GuardedClient, LoginGuard
from server.guards.rates import FrameThrottle, address_key
from server.model.refusals import WRONG_ACCOUNT_PASSWORD
from server.tp.errors import fail, fail_for, internal_error
from server.tp.login_requests import ACCOUNT_JOINED
from server.tp.pump import RequestPump
from server.tp.session import Session, State
from server.views.tp import catalogue
from server.views.tp.frame_cache import FrameCache

log = Logger()

# A client that sends more than this many requests ahead of our replies is paused until we
# catch up, so a flood cannot make the server buffer without bound.
MAX_PENDING = 256
# A connection refused for its address's share is closed if it sends no frame in this time.
REFUSED_GRACE_S = 5.0

TOO_MANY_CONNECTIONS = "Too many connections from your address (at most {limit}); close one and try again."
NOT_LOGGED_IN = "No login for {seconds:g} s; the connection is closed."


def _byte_transport(transport):
    """The transport that buffers the bytes (under TLS, the TCP connection beneath it)."""
    seen = 0
    while transport is not None and seen < 4:
        if hasattr(transport, "bufferSize"):
            return transport
        transport = getattr(transport, "transport", None)
        seen += 1
    return None


@implementer(IPushProducer)
class TPConnection(twisted_protocol.Protocol):
    """One TP connection: its `RequestPump` answers the requests in order (`server.tp.pump`);
    this class keeps what is TP's own: the session made for the version of the first frame,
    the limits, the rate bucket, the login guard and the wait for a login."""

    transport: Any  # a TCP or TLS transport: also a producer and a consumer

    def __init__(
        self,
        directory: GameDirectory,
        frames=None,
        session_factory=None,
        *,
        limits: Limits | None = None,
        guard: LoginGuard | None = None,
        clock: IReactorTime | None = None,
        refusal: str | None = None,
    ):
        self.directory = directory
        self.frames = frames
        # What serves a connection: `Session`, or a stand-in with the same constructor (a
        # cluster node's `server.cluster.routing.ClusterSession`, which relays to other nodes;
        # a stand-in with `handle_frame(message, frame)` also gets the undecoded frame).
        self.session_factory = session_factory or Session
        self.limits = limits
        self.guard = guard
        self.clock = clock
        self.refusal = refusal  # set: answer the first frame with this Fail text and close
        self.pump: RequestPump | None = None
        self.session: Session | None = None
        self.address = "?"
        self.login: GuardedClient | None = None
        self._throttle: FrameThrottle | None = None
        self._idle: IDelayedCall | None = None

    @property
    def closing(self) -> bool:
        """Whether the connection is going away (nothing more is written)."""
        return self.pump is not None and self.pump.closing

    # -- Twisted -------------------------------------------------------------------------

    def connectionMade(self) -> None:
        self.pump = RequestPump(self.transport, self, max_pending=MAX_PENDING)
        if self.address == "?":
            self.address = address_key(str(getattr(self.transport.getPeer(), "host", "") or ""))
        if self.refusal is not None:
            self._idle = self._clock().callLater(REFUSED_GRACE_S, self._close)
            return
        limits = self.limits
        if self.guard is not None:
            self.login = self.guard.client(self.address)
        if limits is None:
            return
        if limits.frames_per_second:
            self._throttle = FrameThrottle(
                self._clock(),
                limits.frames_per_second,
                limits.frame_burst,
                self.pump.answer_waiting,
                self._slowed,
            )
        if limits.pending_output_bytes:
            buffered = _byte_transport(self.transport)
            if buffered is not None:
                buffered.bufferSize = limits.pending_output_bytes
            self.pump.register_producer(self)
        self._arm_idle()

    def dataReceived(self, data: bytes) -> None:
        assert self.pump is not None
        self.pump.feed(data)
        if self.pump.pending or self.pump.busy:
            self._arm_idle()  # requests came: the wait for a login starts again

    def connectionLost(self, reason=None) -> None:
        if self.pump is not None:
            self.pump.connection_lost()
        if self._throttle is not None:
            self._throttle.stop()
        if self._idle is not None and self._idle.active():
            self._idle.cancel()
        if self.login is not None:
            self.login.lost()
        if self.session is not None:
            self.session.connection_lost()
        factory = getattr(self, "factory", None)
        if factory is not None and self.refusal is None:
            factory.connection_closed(self)

    # -- IPushProducer: the transport holds too much unsent output -----------------------

    def pauseProducing(self) -> None:
        if self.pump is None or self.pump.closing:
            return
        limit = self.limits.pending_output_bytes if self.limits else 0
        log.warn(
            "cutting off {peer}: more than {limit} bytes of replies it has not read",
            peer=self._peer(),
            limit=limit,
        )
        self.pump.abort()

    def resumeProducing(self) -> None:
        pass

    def stopProducing(self) -> None:
        if self.pump is not None:
            self.pump.stop()

    # -- answers (server.tp.pump.Answering) ----------------------------------------------

    def answer(self, frame: tp.Frame) -> bytes | defer.Deferred:
        assert self.pump is not None
        if self.refusal is not None:
            self.pump.close_after_answer()
            return self._refusal(frame)
        if self.session is None:
            host = self.transport.getHost()
            self.session = self.session_factory(
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
            return tp.encode_error(error, frame.version, frame.sequence)
        if self.login is not None and isinstance(message, tp.Login | tp.CreateAccount) and self._guarded():
            return self._guarded_login(message, frame, partial(self._handle, message, frame))
        return self._handle(message, frame)

    def internal_error(self, frame: tp.Frame) -> bytes:
        return tp.encode(internal_error(), frame.version, frame.sequence)

    def may_answer(self) -> bool:
        """Take a frame's token (`FrameThrottle`); without one, the pump is called back when it is there."""
        return self._throttle is None or self._throttle.may_answer()

    def answered(self) -> None:
        if self.login is not None and self.login.must_close:
            self._close()
            return
        self._arm_idle()

    def _slowed(self, rate: float) -> None:
        log.info("slowing down {peer}: more than {rate:g} frames a second", peer=self._peer(), rate=rate)

    def _clock(self) -> IReactorTime:
        if self.clock is None:
            from twisted.internet import reactor

            self.clock = reactor
        return self.clock

    def _handle(self, message: tp.Message, frame: tp.Frame) -> bytes | defer.Deferred:
        assert self.session is not None
        handle_frame = getattr(self.session, "handle_frame", None)
        if handle_frame is not None:
            return handle_frame(message, frame)
        return self.session.handle(message, frame.sequence)

    def _fail_bytes(self, answer: tp.Fail, frame: tp.Frame) -> bytes:
        return tp.encode(fit_fail(answer, frame.version), frame.version, frame.sequence)

    # -- logins --------------------------------------------------------------------------

    def _guarded(self) -> bool:
        """Whether a Login or CreateAccount now goes through the login guard."""
        assert self.session is not None
        if getattr(self.session, "relayed", False):  # another node of the cluster, relaying
            return False
        return _state(self.session) is State.CONNECTED

    def _guarded_login(
        self, message: tp.Login | tp.CreateAccount, frame: tp.Frame, request: Callable[[], Any]
    ) -> defer.Deferred:
        """A Login or CreateAccount (`request()` runs it), run when the guard gives it a hashing
        slot; a failed login is answered after the guard's delay. An account created counts
        against its address's `accounts_per_address`; one that joined an existing account does
        not (its password was proved, as by a login)."""
        assert self.login is not None and self.session is not None
        session = self.session
        is_login = isinstance(message, tp.Login)

        def succeeded(answer: bytes) -> bool:
            if is_login:
                return _state(session) is State.PLAYING
            return _frame_type(answer) == tp.FrameType.OKAY

        def counts(answer: bytes) -> bool:
            """A failed login counts; so does an account creation that joins a game with a
            wrong password for the server's account of that name (a guess all the same)."""
            return is_login or WRONG_ACCOUNT_PASSWORD.message.encode() in answer

        def refused(failure):
            answer = fail_for(failure.value)
            if answer is None:
                return failure
            return self._fail_bytes(answer, frame)

        def attempt(creating: bool) -> defer.Deferred:
            assert self.login is not None
            return self.login.attempt(
                message.username,
                request,
                succeeded,
                creating=creating,
                counts=counts,
                new_account=lambda answer: ACCOUNT_JOINED.encode() not in answer,
                hurry=lambda: self.closing,
            )

        d = defer.succeed(False) if is_login else self._would_create(message.username)
        return d.addCallback(attempt).addErrback(refused)

    def _would_create(self, login_name: str) -> defer.Deferred:
        """Whether a CreateAccount of `login_name` (NAME@GAME) would make a new server account
        rather than join the existing one with its password (a password check like a login,
        not an account creation). Any game of this process can ask: the accounts are the
        server's."""
        name, game_name = split_login(login_name)
        game = self.directory.find(game_name) or next(iter(self.directory.ordered()), None)
        return defer.succeed(True) if game is None else game.would_create(name)

    # -- limits --------------------------------------------------------------------------

    def _arm_idle(self) -> None:
        """(Re)start the wait for a login: a connection not logged in is closed after
        `login_idle_seconds` without a frame."""
        seconds = self.limits.login_idle_seconds if self.limits else 0
        if not seconds or self.closing:
            return
        if self.session is not None and _state(self.session) is State.PLAYING:
            if self._idle is not None and self._idle.active():
                self._idle.cancel()
            self._idle = None
            return
        if self._idle is not None and self._idle.active():
            self._idle.reset(seconds)
        else:
            self._idle = self._clock().callLater(seconds, self._idle_expired)

    def _idle_expired(self) -> None:
        self._idle = None
        pump = self.pump
        if pump is None or pump.closing:
            return
        if self.session is not None and _state(self.session) is State.PLAYING:
            return
        if pump.busy or pump.pending:  # a request is being answered (a login waiting its turn)
            self._arm_idle()
            return
        seconds = self.limits.login_idle_seconds if self.limits else 0
        log.info("closing {peer}: no login for {seconds:g} s", peer=self._peer(), seconds=seconds)
        version = pump.version
        if version is not None:
            answer = fail(FailCode.UNAVAILABLE_TEMPORARILY, NOT_LOGGED_IN.format(seconds=seconds))
            pump.write(tp.encode(fit_fail(answer, version), version, 0))
        self._close()

    def _refusal(self, frame: tp.Frame) -> bytes:
        limit = self.limits.connections_per_address if self.limits else 0
        answer = fail(FailCode.UNAVAILABLE_TEMPORARILY, TOO_MANY_CONNECTIONS.format(limit=limit))
        return self._fail_bytes(answer, frame)

    def _close(self) -> None:
        if self.pump is not None:
            self.pump.close()

    def _push(self, data: bytes) -> None:
        if self.pump is not None:
            self.pump.write(data)

    def _peer(self) -> str:
        peer = self.transport.getPeer() if self.transport else None
        return f"{getattr(peer, 'host', '?')}:{getattr(peer, 'port', '?')}"


def _frame_type(answer: bytes) -> int | None:
    """The type of the first frame of an encoded answer (TP03 and TP04 headers alike)."""
    if not isinstance(answer, bytes) or len(answer) < tp.HEADER_SIZE:
        return None
    return int.from_bytes(answer[8:12], "big")


def _state(session: Any) -> State:
    """Where a connection's conversation is: a `Session`'s state; a cluster node's stand-in
    (`server.cluster.routing.ClusterSession`) is logged in once it has a mode."""
    state = getattr(session, "state", None)
    if isinstance(state, State):
        return state
    if getattr(session, "mode", None) is not None:
        return State.PLAYING
    local = getattr(session, "local", None)
    return getattr(local, "state", State.CONNECTED)


class TPFactory(twisted_protocol.Factory):
    """Serves TP on one or more listeners; keeps the encoded frames of each game for all its
    connections (the read side's cache, `server.views.tp.frame_cache`), counts the connections of
    each source address, and gives every connection the server's limits and login guard."""

    noisy = False

    def __init__(
        self,
        directory: GameDirectory,
        session_factory=None,
        *,
        limits: Limits | None = None,
        guard: LoginGuard | None = None,
        clock: IReactorTime | None = None,
    ):
        self.directory = directory
        self.session_factory = session_factory
        self.limits = limits
        self.guard = guard
        self.clock = clock
        self._frame_caches: dict[int, FrameCache] = {}
        self.connections: dict[str, int] = {}

    def frames(self, game_id: int) -> FrameCache:
        cache = self._frame_caches.get(game_id)
        if cache is None:
            cache = self._frame_caches[game_id] = FrameCache()
        return cache

    def buildProtocol(self, addr) -> TPConnection:
        key = address_key(str(getattr(addr, "host", "") or ""))
        limit = self.limits.connections_per_address if self.limits else 0
        refusal = None
        if limit and self.connections.get(key, 0) >= limit:
            refusal = TOO_MANY_CONNECTIONS.format(limit=limit)
            log.warn(
                "refusing a connection from {address}: it has {count} open (limit {limit})",
                address=key,
                count=self.connections.get(key, 0),
                limit=limit,
            )
        else:
            self.connections[key] = self.connections.get(key, 0) + 1
        connection = TPConnection(
            self.directory,
            self.frames,
            self.session_factory,
            limits=self.limits,
            guard=self.guard,
            clock=self.clock,
            refusal=refusal,
        )
        connection.factory = self
        connection.address = key
        return connection

    def connection_closed(self, connection: TPConnection) -> None:
        count = self.connections.get(connection.address, 0) - 1
        if count > 0:
            self.connections[connection.address] = count
        else:
            self.connections.pop(connection.address, None)
