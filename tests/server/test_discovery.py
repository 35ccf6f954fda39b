"""server.tp.discovery: the DNS-SD records, and advertisement over multicast DNS on the loopback
interface (skipped where multicast does not work there)."""

from __future__ import annotations

import queue
import socket
import threading
import time

import pytest
from twisted.internet import defer
from twisted.internet.address import IPv4Address
from twisted.internet.task import Clock
from twisted.python.failure import Failure
from twisted.python.threadpool import ThreadPool

from server.config.discovery import DiscoverySettings, parse_discovery_settings
from server.config.errors import ConfigError
from server.model.timer_settings import TimerSettings
from server.tp.discovery import (
    DirectoryGames,
    GameFacts,
    Listener,
    advertise,
    instance_name,
    listeners_from,
    local_addresses,
    txt_record,
)
from tests.server.wire import Wire, make_directory

pytestmark = pytest.mark.timeout(60)

NOW = 1_700_000_000


class FakePort:
    def __init__(self, port: int):
        self.port = port

    def getHost(self):
        return IPv4Address("TCP", "0.0.0.0", self.port)


def test_listeners_from_the_configured_endpoints():
    listeners = listeners_from(
        [
            "tcp:6923",
            "ssl:6924:privateKey=k.pem:interface=127.0.0.1",
            "unix:/tmp/tp.sock",
            "tcp:0:interface=0.0.0.0",
        ],
        [FakePort(6923), FakePort(6924), FakePort(0), FakePort(40001)],
    )
    assert listeners == [
        Listener("tp", 6923, None),
        Listener("tps", 6924, "127.0.0.1"),
        Listener("tp", 40001, None),
    ]


def test_the_discovery_section():
    assert parse_discovery_settings({}) == DiscoverySettings(enabled=False)
    settings = parse_discovery_settings({"enabled": True, "admin_email": "op@example.org", "comment": "hi"})
    assert settings == DiscoverySettings(True, "op@example.org", "hi")
    for table, message in (
        ({"enabled": "yes"}, "discovery.enabled: expected bool"),
        ({"port": 5353}, "discovery: unknown setting 'port'"),
        ([], "discovery: expected object, not array"),
    ):
        with pytest.raises(ConfigError, match=message):
            parse_discovery_settings(table)


def test_the_txt_record_has_the_keys_clients_require():
    facts = GameFacts("tae", "An open game", turn=4, players=3, objects=120, period=300, next_turn=NOW + 60)
    record = txt_record(facts, admin_email="op@example.org", comment="be nice")
    assert record == {
        "server": "0.1.0",
        "sertype": "tpserver-tae",
        "tp": "0.3,0.4",
        "rule": "TaE",
        "rulever": "0.01",
        "next": str(NOW + 60),
        "prd": "300",
        "objs": "120",
        "plys": "3",
        "turn": "4",
        "admin": "op@example.org",
        "cmt": "be nice",
        "sn": "tae",
        "ln": "An open game",
    }
    bare = txt_record(GameFacts("g", "g", 0, 0, 2, 0))
    assert "next" not in bare and "admin" not in bare and "cmt" not in bare


def test_long_values_fit_a_txt_string_and_names_fit_a_label():
    record = txt_record(GameFacts("g", "é" * 300, 0, 0, 2, 0))
    assert len(b"ln=" + record["ln"].encode()) <= 255
    name = instance_name("x" * 100, "host")
    assert len(name.encode()) <= 63 and name.startswith("TaE xxx")


def test_a_bound_listener_is_advertised_at_its_own_address():
    assert local_addresses([Listener("tp", 1, "127.0.0.1")]) == ["127.0.0.1"]
    everywhere = local_addresses([Listener("tp", 1, None)])
    assert everywhere == ["127.0.0.1"] or not any(address.startswith("127.") for address in everywhere)


def test_the_facts_of_a_directory_follow_the_games():
    directory, game = make_directory(timer=TimerSettings(turn_length=120, turn_players_min=1))
    games = DirectoryGames(directory)
    changes = []
    games.on_change = lambda: changes.append(True)
    (before,) = games()
    assert (before.name, before.turn, before.players, before.period, before.next_turn) == (
        "tae",
        0,
        0,
        120,
        None,
    )
    Wire(directory).login("alice")
    assert changes, "a player joining changes the record"
    (joined,) = games()
    assert joined.players == 1
    assert joined.next_turn == int(game.clock.seconds()) + 120
    assert joined.objects > 2
    changes.clear()
    game.end_turn()
    assert changes
    assert games()[0].turn == 1
    games.unwatch()
    changes.clear()
    game.end_turn()
    assert changes == []


# -- over multicast DNS ----------------------------------------------------------------------


class ThreadedClock(Clock):
    """A Clock that also takes calls from other threads, run by `pump` in the test's thread."""

    def __init__(self):
        super().__init__()
        self.from_threads: queue.Queue = queue.Queue()
        self.pool = ThreadPool(1, 2, "discovery-test")
        self.pool.start()

    def callFromThread(self, f, *args, **kwargs):
        self.from_threads.put((f, args, kwargs))

    def getThreadPool(self):
        return self.pool

    def pump(self, d: defer.Deferred, timeout: float = 20.0):
        out: list = []
        d.addBoth(out.append)
        deadline = time.monotonic() + timeout
        while not out:
            try:
                f, args, kwargs = self.from_threads.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise TimeoutError("the Deferred did not fire") from None
            f(*args, **kwargs)
        result = out[0]
        if isinstance(result, Failure):
            result.raiseException()
        return result

    def close(self):
        self.pool.stop()


def lookup(service_type: str, name: str, timeout_ms: int = 3000):
    """A service's info as a fresh resolver on the loopback interface finds it (or None)."""
    from zeroconf import IPVersion, Zeroconf

    resolver = Zeroconf(interfaces=["127.0.0.1"], ip_version=IPVersion.V4Only)
    try:
        return resolver.get_service_info(service_type, name, timeout_ms)
    finally:
        resolver.close()


@pytest.fixture(scope="module")
def loopback_multicast():
    """Skip unless one zeroconf on 127.0.0.1 can resolve a service another registered."""
    zeroconf = pytest.importorskip("zeroconf")
    try:
        publisher = zeroconf.Zeroconf(interfaces=["127.0.0.1"], ip_version=zeroconf.IPVersion.V4Only)
    except OSError as error:
        pytest.skip(f"multicast DNS cannot bind on the loopback interface here: {error}")
    name = f"probe-{threading.get_ident()}._tp-probe._tcp.local."
    info = zeroconf.ServiceInfo(
        "_tp-probe._tcp.local.",
        name,
        port=9,
        addresses=[socket.inet_aton("127.0.0.1")],
        server="probe.local.",
    )
    try:
        publisher.register_service(info)
        found = lookup("_tp-probe._tcp.local.", name)
    except OSError as error:
        found = None
        reason = str(error)
    else:
        reason = "a service registered on 127.0.0.1 could not be resolved there"
    finally:
        publisher.close()
    if found is None:
        pytest.skip(f"multicast DNS does not work on the loopback interface here: {reason}")


def test_games_are_advertised_updated_and_withdrawn(loopback_multicast):
    directory, game = make_directory(timer=TimerSettings(turn_length=0, turn_players_min=1))
    Wire(directory).login("alice")
    reactor = ThreadedClock()
    listeners = [Listener("tp", 16923, "127.0.0.1"), Listener("tps", 16924, "127.0.0.1")]
    advertiser, started = advertise(listeners, directory, reactor, comment="test server")
    try:
        reactor.pump(started)
        plain = next(info for (g, kind), info in advertiser.services.items() if kind == "tp:16923")
        secure = next(info for (g, kind), info in advertiser.services.items() if kind == "tps:16924")
        assert secure.type == "_tps._tcp.local."
        found = lookup("_tp._tcp.local.", plain.name)
        assert found is not None and found.port == 16923
        assert found.parsed_addresses() == ["127.0.0.1"]
        txt = {k.decode(): v.decode() for k, v in found.properties.items()}
        assert {
            "tp": "0.3,0.4",
            "sertype": "tpserver-tae",
            "rule": "TaE",
            "sn": "tae",
            "plys": "1",
        }.items() <= (txt.items())
        assert txt["turn"] == "0" and txt["cmt"] == "test server"
        assert lookup("_tps._tcp.local.", secure.name).port == 16924

        game.end_turn()  # the new snapshot asks for a refresh
        reactor.pump(advertiser.refresh())
        updated = lookup("_tp._tcp.local.", plain.name)
        assert updated.properties[b"turn"] == b"1"

        reactor.pump(advertiser.stop())
        assert lookup("_tp._tcp.local.", plain.name, 1500) is None
        assert advertiser.services == {}
    finally:
        if not advertiser._stopped:
            reactor.pump(advertiser.stop())
        reactor.close()
