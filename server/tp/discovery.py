"""Finding the server on the local network: mDNS/DNS-SD advertisement with python-zeroconf.

Each game is advertised once per player listener, as tpserver-cpp's Avahi publisher does for
its one game: a `tcp:` listener as `_tp._tcp`, an `ssl:` one as `_tps._tcp`, with the TXT
keys Thousand Parsec clients read (spec/protocol.md §8; tpserver-cpp `avahi.cpp`)::

    tp=0.3,0.4  server=0.1.0  sertype=tpserver-tae  rule=TaE  rulever=0.01
    turn=<turns played>  plys=<players>  objs=<objects>  prd=<turn length>
    next=<Unix time the turn ends> (only with a deadline)
    sn=<game name, the @game of a login>  ln=<long name>  admin=<e-mail>  cmt=<comment>

The records follow the games' snapshots: they are refreshed whenever what they say changes (a
turn ends, a player joins or is removed, the deadline moves), every `REFRESH_INTERVAL_S` seconds
for games created since, and withdrawn at stop. python-zeroconf runs its own thread and event
loop; every call to it is handed to that loop and its answer comes back to the reactor thread
as a Deferred, so the reactor never waits on the network. A server calls `advertise(...)` once
it listens and `stop()` on the result when it stops.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from ipaddress import ip_address
from typing import TYPE_CHECKING, Any

from twisted.internet import defer, threads
from twisted.internet.task import LoopingCall
from twisted.logger import Logger

if TYPE_CHECKING:
    from server.game.directory import GameDirectory

from server.model.changes import ChangeRecord, ClockControlled, DeadlineChanged, SeatChanged, TurnEnded
from server.model.snapshot import GameSnapshot

log = Logger()

#: Games created since the last look are found this often (the records change only when
#: what they say does).
REFRESH_INTERVAL_S = 10.0
SERVICE_TYPES = {"tp": "_tp._tcp.local.", "tps": "_tps._tcp.local."}
#: DNS-SD instance names are at most 63 bytes.
MAX_INSTANCE = 63


@dataclass(frozen=True, slots=True)
class Listener:
    """A player listener to advertise: `kind` "tp" (plain TCP) or "tps" (TLS), the port it
    listens on, and the address it is bound to (None: every interface)."""

    kind: str
    port: int
    address: str | None = None


@dataclass(frozen=True, slots=True)
class GameFacts:
    """What the TXT record says about one game. `next_turn` is the Unix time the current turn
    ends, None without a deadline."""

    name: str
    description: str
    turn: int
    players: int
    objects: int
    period: int
    next_turn: int | None = None


def listeners_from(descriptions: Iterable[str], ports: Iterable[Any]) -> list[Listener]:
    """The advertisable listeners among the configured endpoint strings and the ports they
    opened (in the same order): `tcp:`/`tcp6:` → tp, `ssl:` → tps; others are skipped."""
    found = []
    for description, port in zip(descriptions, ports, strict=False):
        kind = description.split(":", 1)[0]
        if kind not in ("tcp", "tcp6", "ssl"):
            continue
        host = port.getHost()
        options = dict(part.split("=", 1) for part in description.split(":")[1:] if "=" in part)
        interface = options.get("interface", "").strip("[]") or None
        if interface in ("0.0.0.0", "::"):
            interface = None
        found.append(Listener("tps" if kind == "ssl" else "tp", int(host.port), interface))
    return found


def facts_of(snapshot: GameSnapshot) -> GameFacts:
    """What the TXT record of a game says, from one of its snapshots. The deadline is in the
    game clock's seconds, which is the Unix time on a real reactor."""
    from server.views.tp.universe import universe_of

    return GameFacts(
        name=snapshot.name,
        description=snapshot.setup.description or snapshot.name,
        turn=snapshot.turn,
        players=len(snapshot.state.players) - len(snapshot.removed_players),
        objects=len(universe_of(snapshot).ids),
        period=snapshot.setup.timer.turn_length,
        next_turn=None if snapshot.deadline is None or snapshot.over else int(round(snapshot.deadline)),
    )


class DirectoryGames:
    """The `GameFacts` of every game in a directory, read from their snapshots when called.

    `on_change` is called when a game stores a change of what the record says (`ANNOUNCED`: a
    turn ended, a player joined or was removed, the deadline moved or the clock was changed);
    games added to the directory later are followed from the first read on.
    """

    #: The change records that change a game's facts.
    ANNOUNCED = (TurnEnded, SeatChanged, DeadlineChanged, ClockControlled)

    def __init__(self, directory: GameDirectory):
        self.directory = directory
        self.on_change: Callable[[], object] | None = None
        self._unsubscribe: dict[int, Callable[[], None]] = {}

    def _changed(self, record: ChangeRecord, snapshot: GameSnapshot) -> None:
        if self.on_change is not None and isinstance(record.change, self.ANNOUNCED):
            self.on_change()

    def watch(self) -> None:
        for game in self.directory.games.values():
            if id(game) not in self._unsubscribe:
                self._unsubscribe[id(game)] = game.follow_changes(self._changed)

    def unwatch(self) -> None:
        for unsubscribe in self._unsubscribe.values():
            unsubscribe()
        self._unsubscribe.clear()

    def __call__(self) -> list[GameFacts]:
        self.watch()
        return [facts_of(game.snapshot) for game in self.directory.ordered()]


def txt_record(facts: GameFacts, *, admin_email: str = "", comment: str = "") -> dict[str, str]:
    """The TXT keys of one game's service, in tpserver-cpp's order."""
    from server.views.tp.games import RULESET_NAME, RULESET_VERSION, SERVER_TYPE, SERVER_VERSION

    record = {
        "server": SERVER_VERSION,
        "sertype": SERVER_TYPE,
        "tp": "0.3,0.4",
        "rule": RULESET_NAME,
        "rulever": RULESET_VERSION,
    }
    if facts.next_turn is not None:
        record["next"] = str(facts.next_turn)
    record.update(
        prd=str(facts.period),
        objs=str(facts.objects),
        plys=str(facts.players),
        turn=str(facts.turn),
    )
    if admin_email:
        record["admin"] = admin_email
    if comment:
        record["cmt"] = comment
    record["sn"] = facts.name
    record["ln"] = facts.description
    # A TXT string holds at most 255 bytes, key and '=' included.
    return {key: _cut(value, 254 - len(key)) for key, value in record.items()}


def _cut(text: str, limit: int) -> str:
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", "ignore")


def instance_name(game: str, host: str) -> str:
    """The service instance name of a game: "TaE <game> on <host>", cut to 63 bytes."""
    return _cut(f"TaE {game} on {host}", MAX_INSTANCE)


def local_addresses(listeners: Sequence[Listener]) -> list[str]:
    """The IPv4 addresses the services point at: the listeners' own addresses when they are
    bound to one, else every address of this host except loopback ones."""
    bound = {listener.address for listener in listeners}
    if None not in bound:
        return sorted(a for a in bound if a is not None and ip_address(a).version == 4)
    import ifaddr

    addresses = {
        ip.ip
        for adapter in ifaddr.get_adapters()
        for ip in adapter.ips
        if isinstance(ip.ip, str) and not ip_address(ip.ip).is_loopback
    }
    return sorted(addresses) or ["127.0.0.1"]


class Advertiser:
    """Keeps one DNS-SD service per (game, listener) registered and up to date.

    `zeroconf` is a `zeroconf.Zeroconf` (its thread and loop do the network work); `games()`
    gives the current `GameFacts`; `reactor` is where answers are delivered (callFromThread)
    and what the refresh loop runs on.
    """

    def __init__(
        self,
        zeroconf,
        listeners: Sequence[Listener],
        games: Callable[[], list[GameFacts]],
        reactor,
        *,
        host: str | None = None,
        addresses: Sequence[str] | None = None,
        admin_email: str = "",
        comment: str = "",
        refresh_interval: float = REFRESH_INTERVAL_S,
    ):
        self.zeroconf = zeroconf
        self.listeners = list(listeners)
        self.games = games
        self.reactor = reactor
        self.host = (host or socket.gethostname()).split(".")[0]
        self.addresses = list(addresses) if addresses is not None else local_addresses(self.listeners)
        self.admin_email = admin_email
        self.comment = comment
        self.refresh_interval = refresh_interval
        self.services: dict[tuple[str, str], Any] = {}  # (game, kind:port) → ServiceInfo
        self._records: dict[tuple[str, str], dict[str, str]] = {}
        self._loop: LoopingCall | None = None
        self._running: defer.Deferred | None = None
        self._waiters: list[defer.Deferred] = []
        self._again = False
        self._stopped = False
        #: Called once the advertiser has stopped.
        self.stopped: list[Callable[[], object]] = []

    # -- the zeroconf loop ----------------------------------------------------------------

    def _on_zeroconf(self, make_coroutine: Callable[[], Any]) -> defer.Deferred:
        """Run a coroutine on zeroconf's loop; a Deferred fired in the reactor thread."""
        d: defer.Deferred = defer.Deferred()

        async def step():
            # zeroconf's async_* methods are coroutines that return the task of the
            # announcement; the work is done once both have finished.
            result = make_coroutine()
            while asyncio.iscoroutine(result) or isinstance(result, asyncio.Future):
                result = await result
            return result

        future = asyncio.run_coroutine_threadsafe(step(), self.zeroconf.loop)

        def done(finished) -> None:
            error = finished.exception()
            if error is not None:
                self.reactor.callFromThread(d.errback, error)
            else:
                self.reactor.callFromThread(d.callback, finished.result())

        future.add_done_callback(done)
        return d

    def _info(self, facts: GameFacts, listener: Listener, record: dict[str, str]):
        from zeroconf import ServiceInfo

        service_type = SERVICE_TYPES[listener.kind]
        name = instance_name(facts.name, self.host)
        return ServiceInfo(
            service_type,
            f"{name}.{service_type}",
            port=listener.port,
            properties=record,
            addresses=[socket.inet_aton(address) for address in self.addresses],
            server=f"{self.host}.local.",
        )

    # -- keeping the records ----------------------------------------------------------------

    def start(self) -> defer.Deferred:
        """Register every service now and refresh them periodically; fires once registered."""
        self._loop = LoopingCall(self.refresh)
        self._loop.clock = self.reactor
        first = self.refresh()
        self._loop.start(self.refresh_interval, now=False)
        return first

    def refresh(self) -> defer.Deferred:
        """Bring the records in line with the games; fires when they are. One refresh runs at
        a time: asking during one runs another after it. Never fails: problems are logged."""
        waiter: defer.Deferred = defer.Deferred()
        self._waiters.append(waiter)
        if self._running is not None:
            self._again = True
        else:
            self._run()
        return waiter

    def _run(self) -> None:
        self._again = False
        running = defer.ensureDeferred(self._refresh())
        running.addErrback(lambda failure: log.failure("discovery: updating the records failed", failure))
        self._running = running
        running.addCallback(self._ran)

    def _ran(self, _) -> None:
        self._running = None
        if self._again and not self._stopped:
            self._run()
            return
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            waiter.callback(None)

    async def _refresh(self) -> None:
        if self._stopped:
            return
        wanted: dict[tuple[str, str], tuple[GameFacts, Listener, dict[str, str]]] = {}
        for facts in self.games():
            record = txt_record(facts, admin_email=self.admin_email, comment=self.comment)
            for listener in self.listeners:
                wanted[(facts.name, f"{listener.kind}:{listener.port}")] = (facts, listener, record)
        for key in [key for key in self.services if key not in wanted]:
            info = self.services.pop(key)
            self._records.pop(key, None)
            await self._on_zeroconf(partial(self.zeroconf.async_unregister_service, info))
        for key, (facts, listener, record) in wanted.items():
            if self._records.get(key) == record:
                continue
            old = self.services.get(key)
            if old is None:
                info = self._info(facts, listener, record)
                await self._on_zeroconf(
                    partial(self.zeroconf.async_register_service, info, allow_name_change=True)
                )
                log.info(
                    "discovery: game {game} advertised as {name!r} ({kind} port {port})",
                    game=facts.name,
                    name=info.name,
                    kind=listener.kind,
                    port=listener.port,
                )
            else:
                info = self._info(facts, listener, record)
                info = _same_name(info, old)
                await self._on_zeroconf(partial(self.zeroconf.async_update_service, info))
            self.services[key] = info
            self._records[key] = record

    def stop(self) -> defer.Deferred:
        """Withdraw every service (the network is told they are gone) and close zeroconf."""
        return defer.ensureDeferred(self._stop())

    async def _stop(self) -> None:
        self._stopped = True
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        if self._running is not None:
            waiter: defer.Deferred = defer.Deferred()
            self._waiters.append(waiter)
            await waiter
        try:
            if self.services:
                await self._on_zeroconf(self.zeroconf.async_unregister_all_services)
        except Exception:
            log.failure("discovery: withdrawing the records failed")
        self.services.clear()
        self._records.clear()
        await threads.deferToThreadPool(self.reactor, self.reactor.getThreadPool(), self.zeroconf.close)
        for callback in self.stopped:
            callback()


def _same_name(info, old):
    """`info` under the name `old` was registered with (zeroconf may have renamed it)."""
    from zeroconf import ServiceInfo

    if info.name == old.name:
        return info
    return ServiceInfo(
        info.type,
        old.name,
        port=info.port,
        properties=info.properties,
        addresses=info.addresses,
        server=info.server,
    )


def advertise(
    listeners: Sequence[Listener],
    directory: GameDirectory,
    reactor,
    *,
    admin_email: str = "",
    comment: str = "",
    refresh_interval: float = REFRESH_INTERVAL_S,
) -> tuple[Advertiser, defer.Deferred]:
    """Advertise the games of `directory` on `listeners`; the running `Advertiser` (stop it when
    the server stops) and a Deferred that fires once the first records are registered.

    Zeroconf listens on the listeners' own address when they all have one (127.0.0.1: this host
    only), else on every IPv4 interface. Raises `DiscoveryUnavailable` when it cannot start.
    """
    from zeroconf import IPVersion, Zeroconf

    if not listeners:
        raise DiscoveryUnavailable("discovery: no tcp: or ssl: listener to advertise")
    bound = {listener.address for listener in listeners}
    interfaces: Any = sorted(a for a in bound if a is not None) if None not in bound else None
    try:
        if interfaces:
            zeroconf = Zeroconf(interfaces=interfaces, ip_version=IPVersion.V4Only)
        else:
            zeroconf = Zeroconf(ip_version=IPVersion.V4Only)
    except OSError as error:
        raise DiscoveryUnavailable(f"discovery: cannot use multicast DNS here: {error}") from None
    games = DirectoryGames(directory)
    advertiser = Advertiser(
        zeroconf,
        listeners,
        games,
        reactor,
        admin_email=admin_email,
        comment=comment,
        refresh_interval=refresh_interval,
    )
    games.on_change = advertiser.refresh
    advertiser.stopped.append(games.unwatch)
    return advertiser, advertiser.start()


class DiscoveryUnavailable(Exception):
    """Multicast DNS cannot be used (no interface, no permission); the message says why."""
