"""Putting a server together: the listeners, the store, the games, and shutdown."""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from twisted.internet import defer
from twisted.internet import protocol as twisted_protocol
from twisted.internet.endpoints import serverFromString
from twisted.internet.error import CannotListenError
from twisted.logger import Logger

from server.config.errors import ConfigError
from server.config.file import ServerConfig
from server.game.directory import GameDirectory
from server.game.passwords import PasswordPolicy, ThreadPoolHasher
from server.guards.connections import DescriptorShare
from server.guards.login_guard import LoginGuard
from server.model.store import GameStore
from server.operating.game_actions import OperationError
from server.tp.network import TPFactory

log = Logger()

# How long a stopping server waits for turns being resolved to be stored.
STOP_WAIT_S = 60
# How long a web request for a game that is moving or failing over waits for its new owner.
WEB_RELAY_WAIT_S = 15.0


@dataclass
class Server:
    """A running server: its games and the ports it listens on."""

    config: ServerConfig
    store: GameStore
    directory: GameDirectory
    ports: list = field(default_factory=list)
    web_ports: list = field(default_factory=list)
    web: Any = None  # server.web.WebSite, when there is a web listener
    desk: Any = None  # server.operating.desk.OperatorDesk, with a database store
    hasher: ThreadPoolHasher | None = None
    guard: LoginGuard | None = None
    # the file descriptors the listeners other than TP share (web, and admin)
    descriptors: DescriptorShare | None = None
    cluster: Any = None  # server.cluster.node.ClusterNode, on a cluster node
    advertiser: Any = None  # server.tp.discovery's, when the games are advertised
    notifications: Any = None  # server.notifications.service.Notifications, with a database

    def stop(self) -> defer.Deferred:
        """Stop cleanly: no new connections or operator requests; turns being resolved are
        stored (nothing a player was told is lost, nothing half-done is left); then the store
        is closed, after the work already handed to it."""
        return defer.ensureDeferred(self._stop())

    async def _stop(self) -> None:
        from twisted.internet import reactor as default_reactor

        if self.advertiser is not None:
            await self.advertiser.stop()
        stops = [defer.maybeDeferred(port.stopListening) for port in self.ports + self.web_ports]
        if self.web is not None:
            self.web.close()  # ends the pages' event streams
        await defer.gatherResults(stops, consumeErrors=True).addErrback(
            lambda failure: log.failure("stopping a listener failed", failure)
        )
        if self.desk is not None:
            await self.desk.stop()
        if self.cluster is not None:
            await self.cluster.stop()  # hands every game over to the other nodes
        games = list(self.directory.games.values())
        clock = games[0].clock if games else default_reactor
        deadline = clock.seconds() + STOP_WAIT_S
        while any(game.busy for game in games) and clock.seconds() < deadline:
            waits = defer.DeferredList([game.ready() for game in games if game.busy])
            waits.addTimeout(max(0.1, deadline - clock.seconds()), clock)
            await waits.addErrback(lambda _: None)
        for game in games:
            game.timer.stop()
            if game.busy:
                log.warn(
                    "game {game}: turn {turn} was not stored before the stop; it is resolved "
                    "again at restart",
                    game=game.setup.name,
                    turn=game.state.turn,
                )
        if self.notifications is not None:
            # after the last turns were stored: their events are written to the outbox, and
            # the sends in flight end (each within its time limit)
            await self.notifications.stop()
        if self.guard is not None:
            self.guard.stop()
        if self.hasher is not None:
            self.hasher.stop()
        close = getattr(self.store, "close", None)
        if close is not None:
            await defer.maybeDeferred(close)
        log.info("server stopped")


@defer.inlineCallbacks
def load_games(
    config: ServerConfig, store: GameStore, reactor, desk=None, *, hasher=None, now: float | None = None
) -> Generator[Any, Any, GameDirectory]:
    """Every stored game as last committed; the configured open game is created on first start
    (at time `now`, the reactor's time by default).

    Each game resumes its turn (`Game.resume`): with the deadline its timer had and the players
    who had finished it, so a turn whose end a crash interrupted is resolved again now."""
    from server.operating.desk import restore_game

    stored = yield defer.maybeDeferred(store.load_games, all_states=False)
    directory = GameDirectory()
    if not stored:
        setup = config.game.setup(ctime=int(reactor.seconds() if now is None else now))
        yield defer.maybeDeferred(store.create_game, setup)
        stored = yield defer.maybeDeferred(store.load_games, all_states=False)
    directory.default_name = (
        config.game.name if any(r.setup.name == config.game.name for r in stored) else None
    )
    for record in stored:
        restore_game(record, store, reactor, directory, desk, hasher=hasher)
    return directory


@defer.inlineCallbacks
def open_database(url: str, reactor) -> Generator[Any, Any, Any]:
    """The database store at `url`; an empty database gets the schema, an old one is refused."""
    from server.database import DatabaseStore
    from server.database.opening import DatabaseProblem, Unreachable, needs_schema, unreachable, unusable

    try:
        store = DatabaseStore(url, reactor)
    except Exception as error:  # a malformed URL or a missing driver
        raise ConfigError(str(unusable(url, error))) from None
    try:
        if needs_schema(url, (yield store.current_revision()), create=True):
            yield store.upgrade()
    except Exception as error:
        yield store.close()
        if isinstance(error, DatabaseProblem) and not isinstance(error, Unreachable):
            raise ConfigError(str(error)) from None
        # unreachable or broken: an operational failure (exit 1), not a configuration error
        raise OperationError(str(unreachable(url, error))) from None
    return store


def _endpoints(
    descriptions: tuple[str, ...], reactor, setting: str, backlog: int = 0
) -> list[tuple[str, Any]]:
    """Every configured listener of `setting` as an endpoint, checked before anything is opened
    (with `backlog` pending connections, when the endpoint names none)."""
    endpoints = []
    for description in descriptions:
        try:
            endpoints.append((description, serverFromString(reactor, with_backlog(description, backlog))))
        except (ValueError, TypeError, KeyError) as error:
            raise ConfigError(f"{setting}: {description!r} is not a usable endpoint ({error})") from None
    return endpoints


class _LateFactory(twisted_protocol.Factory):
    """The factory of a listener bound before its site exists (the port is held meanwhile)."""

    noisy = False

    def __init__(self) -> None:
        self.target: Any = None

    def serve(self, target: Any) -> None:
        self.target = target
        target.doStart()

    def doStop(self) -> None:
        if self.target is not None:
            self.target.doStop()

    def buildProtocol(self, addr):
        return self.target.buildProtocol(addr)


def with_backlog(description: str, backlog: int) -> str:
    """A tcp:, tcp6:, ssl: or unix: endpoint string with `backlog=` added (0: as it is)."""
    kind = description.split(":", 1)[0]
    if not backlog or kind not in ("tcp", "tcp6", "ssl", "unix") or "backlog=" in description:
        return description
    return f"{description}:backlog={backlog}"


def _hold(port) -> None:
    """Accept no connection on `port` yet (they wait in the backlog until `_release`)."""
    stop = getattr(port, "stopReading", None)
    if stop is not None:
        stop()


def _release(port) -> None:
    start = getattr(port, "startReading", None)
    if start is not None:
        start()


async def _bind(endpoints: list[tuple[str, Any]], factory, setting: str) -> list:
    """Listen on every endpoint, each port held; on a failure the ports bound are closed."""
    ports: list = []
    try:
        for description, endpoint in endpoints:
            try:
                port = await endpoint.listen(factory)
            except CannotListenError as error:
                reason = getattr(error.socketError, "strerror", None) or error.socketError
                raise OperationError(f"{setting}: cannot listen on {description!r}: {reason}") from None
            _hold(port)
            ports.append(port)
    except Exception:
        await _close_ports(ports)
        raise
    return ports


async def _close_ports(ports: list) -> None:
    await defer.gatherResults([defer.maybeDeferred(p.stopListening) for p in ports], consumeErrors=True)


def start_server(config: ServerConfig, reactor, store: GameStore | None = None) -> defer.Deferred:
    """Listen on every configured endpoint, then open the store and load the games; fires with
    the `Server`, accepting connections from then on. With `config.node` the server is a
    cluster node (`server.cluster`): it joins the others on the PostgreSQL database and runs its
    share of the games, and its listeners serve them all.

    The order makes a start that fails create and change nothing: the TP and web listeners are
    checked and bound first (a bad endpoint, a port in use, a missing web secret), and only then
    is the database opened, created or given a first game. A later failure (an admin listener)
    stops the server and removes a SQLite database that this start created."""
    return defer.ensureDeferred(_start_server(config, reactor, store))


async def _start_server(config: ServerConfig, reactor, store: GameStore | None) -> Server:
    limits = config.limits
    tp_endpoints = _endpoints(config.listen, reactor, "listen", limits.listen_backlog)
    web_endpoints = _endpoints(config.web, reactor, "web")
    secret = _web_secret(config)
    factory = TPFactory(GameDirectory(), limits=limits, clock=reactor)
    # one login brake for every listener; `ann` and `ann@DEFAULT` are one account to it
    guard = LoginGuard(reactor, limits, default_game=lambda: factory.directory.default_name)
    factory.guard = guard
    web_factory = _LateFactory()
    ports = await _bind(tp_endpoints, factory, "listen")
    try:
        web_ports = await _bind(web_endpoints, web_factory, "web")
    except Exception:
        await _close_ports(ports)
        raise
    created = _new_sqlite_file(config) if store is None else None
    try:
        server = await _open_and_load(config, reactor, store, factory)
    except Exception:
        await _close_ports(ports + web_ports)
        _remove_created(created)
        raise
    server.ports.extend(ports)
    server.web_ports.extend(web_ports)
    server.guard = guard
    server.descriptors = DescriptorShare(limits.tp_descriptor_share)
    try:
        await _serve_web(config, server, reactor, secret, web_factory, web_ports)
        await _start_admin(config, server, reactor)
    except Exception:
        await server.stop()
        _remove_created(created)
        raise
    for port in ports + web_ports:
        _release(port)
    _advertise(config, server, reactor)
    if server.desk is not None:
        server.desk.start()
    if server.notifications is not None:
        server.notifications.start()
    return server


def _new_sqlite_file(config: ServerConfig) -> Path | None:
    """The SQLite file the start is about to create (None: it exists, or it is no SQLite file)."""
    from sqlalchemy.engine import make_url

    from server.database import DEFAULT_URL

    if config.node is not None:
        return None
    try:
        url = make_url(config.database or DEFAULT_URL)
    except Exception:
        return None
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    path = Path(str(url.database))
    return None if path.exists() else path


def _remove_created(path: Path | None) -> None:
    if path is None:
        return
    for leftover in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        try:
            leftover.unlink()
        except FileNotFoundError:
            pass
        except OSError as error:
            log.warn("could not remove {path}: {error}", path=str(leftover), error=error)


async def _open_and_load(config: ServerConfig, reactor, store: Any, factory: TPFactory) -> Server:
    node = None
    if config.node is not None:
        from server.cluster.start import open_node_store

        store = await open_node_store(config, reactor, store)
    elif store is None:
        from server.database import DEFAULT_URL

        store = await open_database(config.database or DEFAULT_URL, reactor)
    assert store is not None
    limits = config.limits
    hasher = ThreadPoolHasher(
        reactor,
        limits.hashing_threads,
        policy=PasswordPolicy.with_cost(limits.password_min_length, limits.password_hash_cost),
    )
    desk = None
    if config.node is not None:
        from server.cluster.start import join_cluster

        try:
            node = await join_cluster(config, store, reactor, hasher)
        except Exception:
            hasher.stop()
            await defer.maybeDeferred(store.close)
            raise
        desk = node.desk
    elif hasattr(store, "pending_requests"):
        from server.operating.desk import OperatorDesk

        desk = OperatorDesk(store, GameDirectory(), reactor, hasher=hasher)  # its games come below
        try:
            await desk.take_lease()
        except Exception:
            hasher.stop()
            await defer.maybeDeferred(getattr(store, "close", lambda: None))
            raise
    if desk is not None and node is None:
        desk.notifications = _notifications(config, store, reactor, desk, None)
    directory: GameDirectory
    try:
        directory = (
            node.directory
            if node is not None
            else (await load_games(config, store, reactor, desk, hasher=hasher))
        )
    except Exception:
        hasher.stop()
        if desk is not None:
            await defer.ensureDeferred(desk.stop())
        await defer.maybeDeferred(getattr(store, "close", lambda: None))
        raise
    server = Server(config, store, directory, desk=desk, hasher=hasher, cluster=node)
    if desk is not None:
        desk.directory = directory
        server.notifications = _notifications(config, store, reactor, desk, node)
    factory.directory = directory
    if node is not None:
        factory.session_factory = node.session_factory
    return server


def _notifications(config: ServerConfig, store: Any, reactor: Any, desk: Any, node: Any) -> Any:
    """The server's notifications (None when they are off or the store keeps no outbox), made
    once and handed to the operator desk, which gives it every game it brings to life. A
    cluster node's games that arrived before (at join) are followed now; those that leave are
    forgotten."""
    if desk.notifications is not None:
        return desk.notifications
    if not config.notifications.enabled or not hasattr(store, "claim_notifications"):
        return None
    from server.notifications.service import Notifications

    notifications = Notifications(
        store, reactor, config.notifications, name=node.name if node is not None else None
    )
    desk.notifications = notifications
    if node is not None:
        for game in list(node.directory.games.values()):
            notifications.follow(game)
        node.watch_departures(notifications.forget)
    return notifications


def _web_secret(config: ServerConfig):
    """The web listener's secret, read before anything starts (None without a web listener)."""
    if not config.web:
        return None
    from server.web.secret import SecretError, load_secret

    try:
        return load_secret(config.web_secret_file)
    except SecretError as error:
        raise ConfigError(str(error)) from None


async def _serve_web(
    config: ServerConfig, server: Server, reactor: Any, secret, factory: _LateFactory, ports: list
) -> None:
    """The web pages and JSON API on the web listeners bound at the start."""
    if not config.web:
        return
    from server.guards.proxies import TrustedProxies
    from server.web import make_site

    places = None
    if server.cluster is not None and config.node is not None:
        from server.cluster.web_places import NodeWebPlaces

        places = NodeWebPlaces(server.cluster, wait=min(config.node.relay_timeout, WEB_RELAY_WAIT_S))
    site = make_site(
        server.directory,
        server.store,
        reactor,
        secret=secret,
        places=places,
        reactor=reactor,
        notifications=server.notifications,
        limits=config.limits,
        login_guard=server.guard,
        proxies=TrustedProxies(config.trusted_proxies),
        share=server.descriptors,
    )
    server.web = site.web  # type: ignore[attr-defined]
    await server.web.start()  # the sessions that ended before: refused from the first request
    factory.serve(site)
    if places is not None and config.node is not None:
        await _publish_web_address(config, server, places, ports)
    for description, port in zip(config.web, ports, strict=True):
        address = port.getHost()
        scheme = "https" if description.startswith("ssl:") else "http"
        host = getattr(address, "host", "?")
        log.info(
            "web pages and JSON API on {scheme}://{host}:{port}/{every}",
            scheme=scheme,
            host=host,
            port=getattr(address, "port", "?"),
            every=" (every interface)" if host in ("0.0.0.0", "::") else "",
        )


async def _publish_web_address(config: ServerConfig, server: Server, places: Any, ports: list) -> None:
    """Tell the other nodes where this node's web listener is; forget what the pages kept of a
    game that leaves this node."""
    from server.cluster.web_places import web_address

    assert config.node is not None
    address = web_address(config.node.advertise, config.node.web_advertise, list(zip(config.web, ports)))
    if address is None:
        log.warn(
            "cluster node {node}: no plain tcp web listener: the other nodes cannot relay web "
            "requests here (set cluster.web_advertise)",
            node=config.node.node,
        )
    await places.publish(address)
    server.cluster.watch_departures(server.web.forget)
    log.info(
        "cluster node {node}: web listener reached by the other nodes at {address}",
        node=config.node.node,
        address=address,
    )


async def _start_admin(config: ServerConfig, server: Server, reactor: Any) -> None:
    if not config.admin.listen:
        return
    assert server.hasher is not None  # made with the store, before any listener starts
    from server.admin.listener import listen as listen_admin
    from server.admin.live import LiveBackend

    backend: Any
    if server.cluster is not None:
        from server.admin.cluster import ClusterBackend

        backend = ClusterBackend(
            server.directory,
            server.store,
            reactor,
            config.game,
            cluster=server.cluster,
            desk=server.desk,
            hasher=server.hasher,
        )
    else:
        backend = LiveBackend(
            server.directory, server.store, reactor, config.game, desk=server.desk, hasher=server.hasher
        )
    server.ports.extend(await listen_admin(reactor, config.admin, backend, server.hasher))


def _advertise(config: ServerConfig, server: Server, reactor: Any) -> None:
    if not config.discovery.enabled:
        return
    from server.tp.discovery import DiscoveryUnavailable, advertise, listeners_from

    try:
        server.advertiser, _ = advertise(
            listeners_from(config.listen, server.ports),
            server.directory,
            reactor,
            admin_email=config.discovery.admin_email,
            comment=config.discovery.comment,
        )
    except DiscoveryUnavailable as error:
        log.warn("{error}; the games are not advertised", error=error)
