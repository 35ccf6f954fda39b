"""A Twisted transport for ``ClientSession``: requests return Deferreds.

``TPClientProtocol`` is a ``Protocol`` wrapping the sans-IO session. ``request(message)``
returns a Deferred that fires with the reply or fails with a ``ClientError``; pushed frames
(TimeRemaining at the end of a turn) go to the ``on_async`` listeners. ``TwistedClient`` adds the
cache and the TaE game API, with Deferred-returning methods::

    from twisted.internet import defer, reactor, task
    from clients.twisted_transport import TwistedClient

    @defer.inlineCallbacks
    def play(reactor):
        client = yield TwistedClient.connect(reactor, "localhost", 6923)
        yield client.login("alice", "secret")
        yield client.update()
        for fleet in client.game.my_bombers():
            ...
        yield client.finish_turn()
        turn = yield client.wait_for_next_turn()

    task.react(play)

Everything that waits takes an ``IReactorTime`` (``clock``), so tests use ``task.Clock``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from twisted.internet import defer
from twisted.internet.defer import Deferred
from twisted.internet.endpoints import HostnameEndpoint, connectProtocol
from twisted.internet.error import ConnectError, ConnectionRefusedError, TimeoutError
from twisted.internet.interfaces import IReactorTime
from twisted.internet.protocol import Protocol
from twisted.python.failure import Failure

from protocol import Connect, CreateAccount, Login, Message, Redirect, TimeRemaining, Version

from .blocking import CLIENT_STRING, DEFAULT_PORT
from .cache import Cache
from .errors import (
    ClientError,
    ConnectFailed,
    Redirected,
    RequestFailed,
    RequestTimeout,
    creation_refusal,
)
from .game_api import TaeGame
from .plans import Plan, PlanDone, advance, is_batch
from .session import AsyncReceived, ClientSession, ReplyReceived, Request

__all__ = ["TPClientProtocol", "TwistedClient", "connect_tcp"]


class TPClientProtocol(Protocol):
    """One connection; see the module docstring. Requests made before the connection is up
    are written when it is."""

    def __init__(
        self,
        version: Version = Version.TP04,
        *,
        clock: IReactorTime | None = None,
        timeout: float | None = None,
        on_async: Callable[[Message], None] | None = None,
        session: ClientSession | None = None,
    ) -> None:
        self.session = session or ClientSession(version)
        self.version = self.session.version
        self.clock = clock
        self.timeout = timeout
        self.async_listeners: list[Callable[[Message], None]] = []
        if on_async is not None:
            self.async_listeners.append(on_async)
        self._waiting: dict[int, Deferred] = {}
        self.disconnected: Deferred = Deferred()

    # ----------------------------------------------------------------------------------------
    # Twisted's side
    # ----------------------------------------------------------------------------------------

    def connectionMade(self) -> None:
        self._flush()

    def dataReceived(self, data: bytes) -> None:
        self._handle(self.session.receive_data(data))
        self._flush()

    def connectionLost(self, reason: Failure | None = None) -> None:
        text = reason.getErrorMessage() if reason is not None else "connection lost"
        self._handle(self.session.connection_lost(text))
        if not self.disconnected.called:
            self.disconnected.callback(None)

    # ----------------------------------------------------------------------------------------
    # Requests
    # ----------------------------------------------------------------------------------------

    def request(self, message: Message, timeout: float | None = None) -> Deferred:
        """Send ``message``; the Deferred fires with the reply or fails with ``ClientError``
        (``RequestTimeout`` after ``timeout`` seconds, if one is given here or on the
        protocol and a clock is known)."""
        try:
            request = self.session.send(message)
        except ClientError:
            return defer.fail()
        deferred = self._deferred_for(request, timeout)
        self._flush()
        return deferred

    def request_many(self, messages: Iterable[Message], timeout: float | None = None) -> Deferred:
        """Send every message at once (pipelined); fires with a list holding, for each, the
        reply or the ``ClientError`` instance."""
        deferreds = []
        for message in messages:
            deferred = self.request(message, timeout)
            deferred.addErrback(_error_value)
            deferreds.append(deferred)
        return defer.gatherResults(deferreds)

    def run(self, plan: Plan, timeout: float | None = None) -> Deferred:
        """Run a plan (``clients.plans``); fires with its return value."""
        result: Deferred = Deferred()

        def step(outcome, first: bool = False, single: bool = False) -> None:
            try:
                next_step = advance(plan, outcome, first=first, single=single)
            except PlanDone as done:
                result.callback(done.value)
                return
            except BaseException:
                result.errback()
                return
            if is_batch(next_step):
                self.request_many(next_step, timeout).addCallback(step)
            else:
                deferred = self.request(next_step, timeout)
                deferred.addErrback(_error_value)
                deferred.addCallback(step, single=True)

        step(None, first=True)
        return result

    def add_async_listener(self, listener: Callable[[Message], None]) -> None:
        self.async_listeners.append(listener)

    def close(self) -> Deferred:
        """Close the connection; the Deferred fires once it is closed."""
        transport: Any = self.transport  # an ITransport (zope interface)
        if transport is not None:
            transport.loseConnection()
        return self.disconnected

    # ----------------------------------------------------------------------------------------

    def _deferred_for(self, request: Request, timeout: float | None) -> Deferred:
        def cancel(_deferred: Deferred) -> None:
            self._waiting.pop(request.sequence, None)

        deferred: Deferred[object] = Deferred(cancel)
        self._waiting[request.sequence] = deferred
        timeout = self.timeout if timeout is None else timeout
        if timeout is not None and self.clock is not None:
            name = type(request.message).__name__
            deferred.addTimeout(timeout, self.clock)
            deferred.addErrback(_timeout_error, f"no answer to {name} in {timeout} s")
        return deferred

    def _flush(self) -> None:
        if self.transport is None:
            return
        data = self.session.data_to_send()
        if data:
            transport: Any = self.transport  # an ITransport (zope interface)
            transport.write(data)

    def _handle(self, events) -> None:
        for event in events:
            if isinstance(event, ReplyReceived):
                request = event.request
                deferred = self._waiting.pop(request.sequence, None)
                if deferred is None:
                    continue  # timed out or cancelled
                if request.error is not None:
                    deferred.errback(Failure(request.error))
                else:
                    deferred.callback(request.reply)
            elif isinstance(event, AsyncReceived):
                for listener in list(self.async_listeners):
                    listener(event.message)


def _error_value(failure: Failure):
    """Turn a ClientError failure into the error instance (for batches and plans)."""
    failure.trap(ClientError)
    return failure.value


def _timeout_error(failure: Failure, text: str):
    failure.trap(defer.TimeoutError, defer.CancelledError)
    raise RequestTimeout(text)


def connect_tcp(
    reactor,
    host: str,
    port: int = DEFAULT_PORT,
    *,
    version: Version = Version.TP04,
    timeout: float = 30.0,
    client_string: str = CLIENT_STRING,
    endpoint=None,
) -> Deferred:
    """Connect over TCP and send Connect; fires with the ``TPClientProtocol`` (or fails with
    ``ConnectFailed``, ``Redirected``, ``RequestFailed``, ``VersionRejected``). ``endpoint``
    replaces the default ``HostnameEndpoint(reactor, host, port)`` (TLS, tests…)."""
    if endpoint is None:
        endpoint = HostnameEndpoint(reactor, host, port, timeout=timeout)
    protocol = TPClientProtocol(version, clock=reactor, timeout=timeout)

    def failed(failure: Failure):
        failure.trap(ConnectError, ConnectionRefusedError, TimeoutError, OSError)
        raise ConnectFailed(f"cannot connect to {host}:{port}: {failure.getErrorMessage()}")

    def connected(_protocol):
        return protocol.request(Connect(client_string)).addCallback(answered)

    def answered(reply):
        if isinstance(reply, Redirect):
            protocol.close()
            raise Redirected(reply.uri)
        return protocol

    deferred = connectProtocol(endpoint, protocol)
    deferred.addCallbacks(connected, failed)
    return deferred


class TwistedClient:
    """A ``TPClientProtocol`` with a ``Cache`` and a ``TaeGame``; methods return Deferreds."""

    def __init__(
        self, protocol: TPClientProtocol, *, cache: Cache | None = None, clock: IReactorTime | None = None
    ) -> None:
        self.protocol = protocol
        self.cache = cache or Cache(protocol.version)
        self.game = TaeGame(self.cache)
        # Any: zope interfaces are not types mypy understands (no mypy-zope here).
        self.clock: Any = clock or protocol.clock
        self._turn_ended = False
        self._turn_waiters: list[Deferred] = []
        protocol.add_async_listener(self._pushed)

    @classmethod
    def connect(cls, reactor, host: str, port: int = DEFAULT_PORT, **kwargs) -> Deferred:
        return connect_tcp(reactor, host, port, **kwargs).addCallback(cls)

    @property
    def version(self) -> Version:
        return self.protocol.version

    def run(self, plan: Plan) -> Deferred:
        return self.protocol.run(plan)

    def request(self, message: Message) -> Deferred:
        return self.protocol.request(message)

    @defer.inlineCallbacks
    def login(
        self, username: str, password: str, *, create: bool = False, email: str = "", comment: str = ""
    ):
        refused: RequestFailed | None = None
        if create:
            try:
                yield self.request(CreateAccount(username, password, email, comment))
            except RequestFailed as error:
                refused = error
        try:
            reply = yield self.request(Login(username, password))
        except RequestFailed as error:
            raise creation_refusal(refused) or error from None
        if isinstance(reply, Redirect):
            raise Redirected(reply.uri)
        return reply

    def games(self) -> Deferred:
        return self.run(self.cache.fetch_games())

    def update(self) -> Deferred:
        return self.run(self.cache.update())

    def time_remaining(self) -> Deferred:
        return self.run(self.cache.fetch_time_remaining())

    def insert_order(self, fleet_id: int, order_type, target=None, **kwargs) -> Deferred:
        return self.run(self.game.insert_order(fleet_id, order_type, target, **kwargs))

    def probe_order(self, fleet_id: int, order_type, target=None, **kwargs) -> Deferred:
        return self.run(self.game.probe_order(fleet_id, order_type, target, **kwargs))

    def remove_orders(self, fleet_id: int, slots=None) -> Deferred:
        return self.run(self.game.remove_orders(fleet_id, slots))

    def finish_turn(self) -> Deferred:
        return self.run(self.game.finish_turn())

    @defer.inlineCallbacks
    def wait_for_next_turn(
        self, timeout: float | None = None, poll_interval: float = 10.0, update: bool = True
    ):
        """Fires with the new turn number once the Universe's turn counter moves on (after a
        pushed TimeRemaining(0), or by polling every ``poll_interval`` seconds); the cache is
        then updated (``update``). Fails with ``RequestTimeout`` after ``timeout`` seconds."""
        if self.clock is None:
            raise ValueError("waiting needs a clock (IReactorTime)")
        start = self.game.turn
        if start is None:
            start = yield self.run(self.game.refresh_turn())
        deadline = None if timeout is None else self.clock.seconds() + timeout
        while True:
            wait = poll_interval
            if deadline is not None:
                wait = min(wait, deadline - self.clock.seconds())
                if wait <= 0:
                    raise RequestTimeout(f"turn {start} did not end in time")
            yield self._turn_end_or(wait)
            turn = yield self.run(self.game.refresh_turn())
            if turn is not None and turn != start:
                if update:
                    yield self.update()
                return turn

    def close(self) -> Deferred:
        return self.protocol.close()

    # ----------------------------------------------------------------------------------------

    def _pushed(self, message: Message) -> None:
        self.cache.note(message)
        if isinstance(message, TimeRemaining) and message.time == 0:
            self._turn_ended = True
            waiters, self._turn_waiters = self._turn_waiters, []
            for waiter in waiters:
                if not waiter.called:
                    waiter.callback(True)

    def _turn_end_or(self, seconds: float) -> Deferred:
        """Fires with True on a pushed end of turn (or one already seen), else False after
        ``seconds``."""
        if self._turn_ended:
            self._turn_ended = False
            return defer.succeed(True)
        waiter: Deferred = Deferred()
        self._turn_waiters.append(waiter)
        call = self.clock.callLater(seconds, _fire_once, waiter, False)

        def done(result):
            self._turn_ended = False
            if call.active():
                call.cancel()
            if waiter in self._turn_waiters:
                self._turn_waiters.remove(waiter)
            return result

        return waiter.addBoth(done)


def _fire_once(waiter: Deferred[bool], value: bool) -> None:
    if not waiter.called:
        waiter.callback(value)
