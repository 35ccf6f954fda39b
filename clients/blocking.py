"""A blocking socket transport for ``ClientSession``, and a blocking game client on top.

``connect(host, port)`` opens TCP, sends Connect and returns a ``BlockingConnection`` whose
``request(message)`` returns the reply (or raises ``ClientError``). ``BlockingClient`` adds the
cache and the TaE game API::

    from clients.blocking import BlockingClient
    from protocol import Version

    with BlockingClient.connect("localhost", 6923, version=Version.TP04, timeout=10) as client:
        client.login("alice", "secret")
        client.update()                                   # downloads only what changed
        leader = client.game.my_leaders()[ColonyKind.SCIENTIST]
        client.insert_order(leader.id, "Move", (4, 5))
        client.finish_turn()
        client.wait_for_next_turn(timeout=600)

Every wait has a deadline: ``timeout`` (seconds) per request by default, or per call. Socket
problems become ``ConnectFailed`` (could not connect), ``ConnectionClosed`` (the server went
away) or ``RequestTimeout``.
"""

from __future__ import annotations

import socket
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence

from protocol import (
    Connect,
    CreateAccount,
    FailCode,
    Login,
    Message,
    Okay,
    Redirect,
    TimeRemaining,
    Version,
)

from .cache import Cache, UpdateStats
from .errors import (
    ClientError,
    ConnectFailed,
    ConnectionClosed,
    Redirected,
    RequestFailed,
    RequestTimeout,
    StreamBroken,
    TlsMismatch,
    creation_refusal,
)
from .game_api import TaeGame
from .plans import Plan, PlanDone, advance, is_batch
from .session import (
    AsyncReceived,
    ClientSession,
    ConnectionFailed,
    ReplyReceived,
    Request,
)
from .tls import TlsOptions, looks_like_tls, wrap

__all__ = ["BlockingClient", "BlockingConnection", "connect", "DEFAULT_PORT", "CLIENT_STRING"]

DEFAULT_PORT = 6923
CLIENT_STRING = "tpserver-tae-clients/0.1"
_RECV_SIZE = 1 << 16


#: Waits before a request refused with "try again shortly" is sent again (about 30 s in all).
SHORTLY_RETRY_DELAYS = (0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0)


def says_try_again(error: RequestFailed) -> bool:
    """Whether a refusal is the server's "not now, nothing was done: try again shortly"."""
    fail = error.fail
    return (
        int(fail.code) == int(FailCode.UNAVAILABLE_TEMPORARILY)
        and "try again shortly" in fail.message.lower()
    )


class BlockingConnection:
    """A ``ClientSession`` over a connected socket, read only while someone waits.

    ``async_messages`` collects what the server pushed (TimeRemaining); ``on_async`` is also
    called with each one, as it is read.
    """

    def __init__(
        self,
        sock: socket.socket,
        version: Version,
        *,
        timeout: float = 30.0,
        session: ClientSession | None = None,
    ) -> None:
        self.sock = sock
        self.session = session or ClientSession(version)
        self.version = self.session.version
        self.timeout = timeout
        self.async_messages: deque[Message] = deque(maxlen=1000)
        self.on_async: Callable[[Message], None] | None = None
        self.received = 0  # bytes read so far

    @classmethod
    def open(
        cls,
        host: str,
        port: int = DEFAULT_PORT,
        *,
        version: Version = Version.TP04,
        timeout: float = 30.0,
        tls: TlsOptions | None = None,
    ) -> BlockingConnection:
        """Open the TCP connection, and with ``tls`` do the TLS handshake (no Connect frame yet)."""
        try:
            sock: socket.socket = socket.create_connection((host, port), timeout=timeout)
        except ConnectionRefusedError as error:
            raise ConnectFailed(f"connection to {host}:{port} refused") from error
        except TimeoutError as error:
            raise ConnectFailed(f"connection to {host}:{port} timed out") from error
        except OSError as error:
            raise ConnectFailed(f"cannot connect to {host}:{port}: {error}") from error
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if tls is not None:
            sock = wrap(sock, host, port, tls)
        return cls(sock, version, timeout=timeout)

    # ----------------------------------------------------------------------------------------

    def send(self, message: Message) -> Request:
        """Write a request now and return it (its answer is read by ``wait``)."""
        request = self.session.send(message)
        self._flush()
        return request

    def wait(self, request: Request, timeout: float | None = None):
        """Read until ``request`` is answered; return its reply or raise its error."""
        deadline = self._deadline(timeout)
        while not request.done:
            self._read(deadline, what=f"the answer to {type(request.message).__name__}")
        return request.result()

    def request(self, message: Message, timeout: float | None = None):
        """Send ``message`` and return its reply (raises ``RequestFailed`` on Fail, …). A
        request the server refuses "for now" with the words "try again shortly" (Fail 3: its
        database is away a moment, nothing was changed; the game is moving between cluster
        nodes) is sent again after SHORTLY_RETRY_DELAYS, then its refusal is raised. Logins
        have their own rule (``BlockingClient.login``)."""
        for delay in (*SHORTLY_RETRY_DELAYS, None):
            try:
                return self.wait(self.send(message), timeout)
            except RequestFailed as error:
                if delay is None or isinstance(message, Login | CreateAccount) or not says_try_again(error):
                    raise
                time.sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover - the last round raises or returns

    def request_many(self, messages: Iterable[Message], timeout: float | None = None) -> list:
        """Send every message before reading any answer (pipelining); return, for each, the
        reply or the ``ClientError`` instance. The timeout is for the whole batch."""
        requests = [self.session.send(message) for message in messages]
        self._flush()
        deadline = self._deadline(timeout)
        outcomes = []
        for request in requests:
            while not request.done:
                self._read(deadline, what=f"the answer to {type(request.message).__name__}")
            outcomes.append(request.error if request.error is not None else request.reply)
        return outcomes

    def run(self, plan: Plan, timeout: float | None = None):
        """Run a plan (``clients.plans``) to its end and return its value. ``timeout`` bounds
        each step (one request or one pipelined batch)."""
        try:
            step = advance(plan, first=True)
            while True:
                if is_batch(step):
                    step = advance(plan, self.request_many(step, timeout))
                else:
                    try:
                        outcome = self.request(step, timeout)
                    except ClientError as error:
                        outcome = error
                    step = advance(plan, outcome, single=True)
        except PlanDone as done:
            return done.value

    def poll(self, timeout: float = 0.0) -> list[Message]:
        """Read whatever arrives within ``timeout`` seconds; return (and keep) the pushed
        messages seen meanwhile."""
        seen: list[Message] = []
        listener, self.on_async = self.on_async, None

        def collect(message: Message) -> None:
            seen.append(message)
            if listener is not None:
                listener(message)

        self.on_async = collect
        deadline = time.monotonic() + max(timeout, 0.001)
        try:
            while True:
                self._read(deadline, what="pushed frames")
        except RequestTimeout:
            pass
        finally:
            self.on_async = listener
        return seen

    def wait_async(
        self, predicate: Callable[[Message], bool] | None = None, timeout: float | None = None
    ) -> Message:
        """Wait for a pushed message (one ``predicate`` accepts, if given) and take it out of
        ``async_messages``. Raises ``RequestTimeout``."""
        deadline = self._deadline(timeout)
        while True:
            for message in list(self.async_messages):
                if predicate is None or predicate(message):
                    self.async_messages.remove(message)
                    return message
            self._read(deadline, what="a pushed frame")

    def close(self) -> None:
        try:
            self.sock.close()
        finally:
            self._handle(self.session.connection_lost("closed by the client"))

    def __enter__(self) -> BlockingConnection:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    # ----------------------------------------------------------------------------------------

    def _deadline(self, timeout: float | None) -> float:
        return time.monotonic() + (self.timeout if timeout is None else timeout)

    def _flush(self) -> None:
        data = self.session.data_to_send()
        if not data:
            return
        try:
            self.sock.sendall(data)
        except OSError as error:
            self._handle(self.session.connection_lost(f"send failed: {error}"))
            raise ConnectionClosed(f"cannot send to the server: {error}") from error

    def _read(self, deadline: float, what: str) -> None:
        """One recv (bounded by the deadline), fed to the session."""
        if self.session.closed:
            raise self.session.error or ConnectionClosed("the connection is closed")
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise RequestTimeout(f"no {what} in time")
        self.sock.settimeout(remaining)
        try:
            data = self.sock.recv(_RECV_SIZE)
        except TimeoutError:
            raise RequestTimeout(f"no {what} in time") from None
        except OSError as error:
            self._handle(self.session.connection_lost(f"receive failed: {error}"))
            return
        if not data:
            self._handle(self.session.connection_lost("the server closed the connection"))
            return
        self.received += len(data)
        self._handle(self.session.receive_data(data))
        self._flush()

    def _handle(self, events) -> None:
        for event in events:
            if isinstance(event, AsyncReceived):
                self.async_messages.append(event.message)
                if self.on_async is not None:
                    self.on_async(event.message)
            elif isinstance(event, (ReplyReceived, ConnectionFailed)):
                pass  # requests carry their own result; waiters look at them


def connect(
    host: str,
    port: int = DEFAULT_PORT,
    *,
    version: Version = Version.TP04,
    timeout: float = 30.0,
    client_string: str = CLIENT_STRING,
    tls: TlsOptions | None = None,
) -> BlockingConnection:
    """Open a connection (TLS with ``tls``) and send Connect. Raises ``ConnectFailed`` if TCP
    or TLS fails (``TlsMismatch`` when only one side speaks TLS), ``Redirected`` if the server
    sends us elsewhere, ``RequestFailed`` if it refuses, ``VersionRejected`` if it does not speak
    ``version``."""
    connection = BlockingConnection.open(host, port, version=version, timeout=timeout, tls=tls)
    try:
        reply = connection.request(Connect(client_string))
    except (StreamBroken, ConnectionClosed) as error:
        connection.close()
        text = error.text if isinstance(error, StreamBroken) else ""
        if tls is None and (looks_like_tls(text.encode("utf-8", "replace")) or not connection.received):
            # A TLS listener drops a plain client's Connect (or answers with a TLS alert).
            raise TlsMismatch(host, port, client_tls=False) from error
        raise
    except BaseException:
        connection.close()
        raise
    if isinstance(reply, Redirect):
        connection.close()
        raise Redirected(reply.uri)
    return connection


#: Seconds to wait before trying a temporarily refused login again (then it is raised).
LOGIN_RETRY_DELAYS = (0.25, 0.5, 1.0, 2.0, 2.0)


class BlockingClient:
    """A connection with a ``Cache`` and a ``TaeGame``; every method blocks until done.

    Pushed TimeRemaining frames update ``cache.time_remaining`` as they are read.
    """

    def __init__(self, connection: BlockingConnection, *, cache: Cache | None = None) -> None:
        self.connection = connection
        self.cache = cache or Cache(connection.version)
        self.game = TaeGame(self.cache)
        connection.on_async = self.cache.note

    @classmethod
    def connect(
        cls,
        host: str,
        port: int = DEFAULT_PORT,
        *,
        version: Version = Version.TP04,
        timeout: float = 30.0,
        client_string: str = CLIENT_STRING,
        tls: TlsOptions | None = None,
    ) -> BlockingClient:
        return cls(
            connect(host, port, version=version, timeout=timeout, client_string=client_string, tls=tls)
        )

    @property
    def version(self) -> Version:
        return self.connection.version

    def run(self, plan: Plan, timeout: float | None = None):
        return self.connection.run(plan, timeout)

    def request(self, message: Message, timeout: float | None = None):
        return self.connection.request(message, timeout)

    def poll(self, timeout: float = 0.0) -> list[Message]:
        """Read what the server pushed within ``timeout`` seconds (the cache takes note)."""
        return self.connection.poll(timeout)

    def login(
        self,
        username: str,
        password: str,
        *,
        create: bool = False,
        email: str = "",
        comment: str = "",
    ) -> Okay:
        """Login → Okay (``RequestFailed`` if refused). With ``create``, CreateAccount first;
        its Fail ("account exists") is ignored when the Login succeeds, and is the error raised
        when both fail for another reason (a password too short, a full game...). An account
        creation the server refuses for now (Fail 3: its database is away for a moment, the
        game is moving to another cluster node) is tried again a few times, waiting a little
        longer each time (LOGIN_RETRY_DELAYS), before it is raised. (A Login refused for now is
        not: that is the server's brake on failed logins, which wants a new connection.)"""
        for delay in (*LOGIN_RETRY_DELAYS, None):
            try:
                return self._login_once(username, password, create, email, comment)
            except RequestFailed as error:
                temporary = error.fail.code == FailCode.UNAVAILABLE_TEMPORARILY
                if delay is None or not temporary or not isinstance(error.request, CreateAccount):
                    raise
                time.sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover - the last round raises or returns

    def _login_once(self, username: str, password: str, create: bool, email: str, comment: str) -> Okay:
        refused: RequestFailed | None = None
        if create:
            try:
                self.request(CreateAccount(username, password, email, comment))
            except RequestFailed as error:
                refused = error
        try:
            reply = self.request(Login(username, password))
        except RequestFailed as error:
            raise creation_refusal(refused) or error from None
        if isinstance(reply, Redirect):
            raise Redirected(reply.uri)
        return reply

    def games(self):
        """TP04 GetGames (the game list; () on TP03)."""
        return self.run(self.cache.fetch_games())

    def update(self) -> UpdateStats:
        return self.run(self.cache.update())

    def time_remaining(self) -> TimeRemaining:
        return self.run(self.cache.fetch_time_remaining())

    def insert_order(self, fleet_id: int, order_type: int | str, target=None, **kwargs):
        return self.run(self.game.insert_order(fleet_id, order_type, target, **kwargs))

    def probe_order(self, fleet_id: int, order_type: int | str, target=None, **kwargs):
        return self.run(self.game.probe_order(fleet_id, order_type, target, **kwargs))

    def remove_orders(self, fleet_id: int, slots: Sequence[int] | None = None):
        return self.run(self.game.remove_orders(fleet_id, slots))

    def finish_turn(self) -> Okay:
        return self.run(self.game.finish_turn())

    def wait_for_next_turn(
        self, timeout: float | None = None, poll_interval: float = 10.0, update: bool = True
    ) -> int | None:
        """Block until the Universe's turn counter moves on, then (``update``) refresh the
        cache; return the new turn.

        The server pushes TimeRemaining with time 0 when the turn ends and answers nothing
        until the new turn is ready (§5.6), so after that push one read of object 0 shows the
        new turn. Without a push (or if it was missed) the turn is polled every
        ``poll_interval`` seconds. ``timeout`` None waits forever; otherwise ``RequestTimeout``.
        """
        start = self.game.turn
        if start is None:
            start = self.run(self.game.refresh_turn())
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            wait = poll_interval
            if deadline is not None:
                wait = min(wait, deadline - time.monotonic())
                if wait <= 0:
                    raise RequestTimeout(f"turn {start} did not end in time")
            try:
                self.connection.wait_async(_turn_ended, timeout=wait)
            except RequestTimeout:
                pass
            turn = self.run(self.game.refresh_turn())
            if turn is not None and turn != start:
                if update:
                    self.update()
                return turn

    def close(self) -> None:
        self.connection.close()

    def __enter__(self) -> BlockingClient:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def _turn_ended(message: Message) -> bool:
    return isinstance(message, TimeRemaining) and message.time == 0
