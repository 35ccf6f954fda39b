"""server.app: a whole server started and stopped in memory (`tests.server.memory_server`), its
parts as Services in order. A start that fails stops what started, in reverse, once, and opens
no port; a server that stops closes its ports first and its store last."""

from __future__ import annotations

import pytest
from twisted.application.service import Service
from twisted.internet import defer
from twisted.internet.address import IPv4Address, IPv6Address, UNIXAddress
from twisted.logger import formatEvent, globalLogPublisher

from server.app import Server, start_server
from server.config.admin import AdminSettings
from server.config.errors import ConfigError
from server.config.file import GameConfig, ServerConfig
from server.game.passwords import hash_password
from server.model.timer_settings import TimerSettings
from server.operating.game_actions import OperationError
from server.services.listeners import ADMIN, TP, WEB, announce
from server.services.ordered import AsyncService, OrderedServices
from server.services.store import StoreService
from tests.support.deferreds import failureResultOf

from .memory_server import JournalStore, ServerReactor
from .test_database import result

ADMIN_SETTINGS = AdminSettings(
    ("tcp:6925:interface=127.0.0.1",), "info", {"tpadm": hash_password("secret7", n=2**4)}
)


def config(**settings) -> ServerConfig:
    settings.setdefault("listen", ("tcp:6923:interface=127.0.0.1",))
    settings.setdefault("game", GameConfig(timer=TimerSettings(turn_length=0)))
    return ServerConfig(**settings)


def start(settings: ServerConfig, reactor: ServerReactor) -> tuple[defer.Deferred, JournalStore]:
    store = JournalStore(reactor.journal)
    return start_server(settings, reactor, store), store


@pytest.fixture
def logged():
    events: list[dict] = []
    globalLogPublisher.addObserver(events.append)
    yield events
    globalLogPublisher.removeObserver(events.append)


# -- a start that fails -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "words"),
    [
        ({"listen": ("tcp:notaport",)}, "listen: 'tcp:notaport' is not a usable endpoint"),
        ({"web": ("tcp:8080", "nonsense:1")}, "web: 'nonsense:1' is not a usable endpoint"),
        ({"admin": AdminSettings(("tcp:6925",), "info", {})}, "an admin listener needs an account"),
        (
            {"admin": AdminSettings(("tcp:x",), "info", ADMIN_SETTINGS.users)},
            "admin.listen: 'tcp:x' is not a usable",
        ),
    ],
)
def test_a_setting_that_cannot_work_starts_nothing(settings, words):
    reactor = ServerReactor()
    starting, store = start(config(**settings), reactor)
    assert words in str(failureResultOf(starting, ConfigError).value)
    assert reactor.journal == [] and store.load_games() == []


def test_a_port_in_use_closes_the_ports_bound_before_it_and_opens_no_store():
    reactor = ServerReactor(taken=(8080,))
    starting, store = start(config(listen=("tcp:6923", "tcp:6924"), web=("tcp:8080",)), reactor)
    error = failureResultOf(starting, OperationError).value
    assert str(error) == "web: cannot listen on 'tcp:8080': Address already in use"
    assert reactor.journal == ["bind 6923", "hold 6923", "bind 6924", "hold 6924", "close 6923", "close 6924"]
    assert store.load_games() == []  # no first game was made


def test_a_database_that_cannot_be_opened_closes_the_ports(tmp_path):
    reactor = ServerReactor()
    settings = config(web=("tcp:8080",), database="nonsense://what")
    starting = start_server(settings, reactor)
    assert "nonsense://what" in str(failureResultOf(starting, ConfigError).value)
    assert reactor.journal == ["bind 6923", "hold 6923", "bind 8080", "hold 8080", "close 8080", "close 6923"]


def test_an_admin_listener_that_fails_after_the_rest_started_stops_everything_in_reverse():
    reactor = ServerReactor(taken=(6925,))
    starting, store = start(config(web=("tcp:8080",), admin=ADMIN_SETTINGS), reactor)
    error = failureResultOf(starting, OperationError).value
    assert (
        str(error) == "admin.listen: cannot listen on 'tcp:6925:interface=127.0.0.1': Address already in use"
    )
    # every part had started (the game was loaded, the site made); no port was ever opened
    assert [game.setup.name for game in store.load_games()] == ["tae"]
    assert reactor.journal == [
        "bind 6923",
        "hold 6923",
        "bind 8080",
        "hold 8080",
        "close store",
        "close 8080",
        "close 6923",
    ]


def test_a_part_that_fails_to_start_undoes_its_own_half_then_the_rest_in_reverse_once():
    journal: list[str] = []

    class Part(AsyncService):
        def __init__(self, name: str, fails: bool = False):
            self.setName(name)
            self.fails = fails

        async def start(self) -> None:
            journal.append(f"start {self.name}")
            if self.fails:
                raise RuntimeError(f"{self.name} broke")

        async def stop(self) -> None:
            journal.append(f"stop {self.name} (undoing: {self.parent.undoing_start})")

    services = OrderedServices()
    for part in (Part("a"), Part("b"), Part("c", fails=True), Part("d")):
        part.setServiceParent(services)
    failure = failureResultOf(services.startService(), RuntimeError)
    assert str(failure.value) == "c broke"
    assert journal == [
        "start a",
        "start b",
        "start c",
        "stop c (undoing: True)",
        "stop b (undoing: True)",
        "stop a (undoing: True)",
    ]
    result(services.stopService())
    assert len(journal) == 6 and not services.running


def test_a_part_that_fails_to_stop_does_not_keep_the_others_running():
    journal: list[str] = []

    class Breaks(Service):
        def stopService(self):
            super().stopService()
            raise RuntimeError("it broke")

    class Notes(Service):
        def stopService(self):
            super().stopService()
            journal.append("stopped")

    services = OrderedServices()
    Notes().setServiceParent(services)
    Breaks().setServiceParent(services)
    result(services.startService())
    result(services.stopService())
    assert journal == ["stopped"]


# -- a server that runs -------------------------------------------------------------------------


def test_the_ports_open_last_and_close_first_the_store_closes_last(logged):
    reactor = ServerReactor()
    web = ("tcp:8080:interface=127.0.0.1",)
    starting, store = start(
        config(listen=("tcp:6923:interface=127.0.0.1", "tcp:6924"), web=web, admin=ADMIN_SETTINGS), reactor
    )
    server = result(starting)
    assert isinstance(server, Server) and server.running
    assert reactor.journal == [
        "bind 6923",
        "hold 6923",
        "bind 6924",
        "hold 6924",
        "bind 8080",
        "hold 8080",
        "bind 6925",
        "hold 6925",
        "open 6923",
        "open 6924",
        "open 8080",
        "open 6925",
    ]
    lines = [formatEvent(e) for e in logged if e.get("listener")]
    assert lines == [
        "listening on 127.0.0.1:6923 for TP",
        "listening on 0.0.0.0:6924 (every interface) for TP",
        "listening on 127.0.0.1:8080 for the web pages and JSON API: open http://127.0.0.1:8080/",
        "listening on 127.0.0.1:6925 for the admin protocol (plain TCP)",
    ]
    assert [p.getHost().port for p in server.ports] == [6923, 6924]
    del reactor.journal[:]
    stopped = server.stop()
    assert server.stop() is stopped
    result(stopped)
    assert reactor.journal == ["close 6923", "close 6924", "close 8080", "close 6925", "close store"]
    assert not server.running
    assert [e["log_format"] for e in logged].count("server stopped") == 1


@pytest.mark.parametrize(
    ("setting", "description", "address", "line"),
    [
        (
            TP,
            "ssl:6924",
            IPv4Address("TCP", "127.0.0.1", 6924),
            "listening on 127.0.0.1:6924 for TP over TLS",
        ),
        (
            WEB,
            "ssl:8443",
            IPv6Address("TCP", "::", 8443),
            "listening on [::]:8443 (every interface) for the web pages and JSON API: open https://[::1]:8443/",
        ),
        (
            WEB,
            "tcp6:8080",
            IPv6Address("TCP", "::1", 8080),
            "listening on [::1]:8080 for the web pages and JSON API: open http://[::1]:8080/",
        ),
        (
            ADMIN,
            "ssl:6926",
            IPv4Address("TCP", "10.0.0.2", 6926),
            "listening on 10.0.0.2:6926 for the admin protocol (TLS)",
        ),
        (TP, "unix:/run/tae.sock", UNIXAddress("/run/tae.sock"), "listening on /run/tae.sock for TP"),
    ],
)
def test_each_listener_says_which_it_is_and_where(logged, setting, description, address, line):
    announce(setting, description, address)
    (event,) = logged
    assert formatEvent(event) == line


def test_the_listeners_serve_the_games_once_open():
    reactor = ServerReactor()
    server = result(start(config(web=("tcp:8080",)), reactor)[0])
    tp_factory = reactor.ports[6923].factory
    connection = tp_factory.buildProtocol(None)
    assert connection.directory is server.directory and server.directory.default is not None
    assert reactor.ports[8080].factory.buildProtocol(None) is not None
    assert server.web is not None
    result(server.stop())


def test_a_sqlite_file_is_removed_only_when_the_start_that_made_it_is_undone(tmp_path):
    made = tmp_path / "new.db"

    def store_service(parent_undoing: bool) -> StoreService:
        services = OrderedServices()
        service = StoreService(config(database=f"sqlite:///{made}"), ServerReactor(), JournalStore([]))
        service.setServiceParent(services)
        service.created = made
        services.undoing_start = parent_undoing
        return service

    for name in ("new.db", "new.db-wal", "new.db-shm"):
        (tmp_path / name).write_bytes(b"")
    result(store_service(parent_undoing=False).stopService())
    assert made.exists()  # a server that ran keeps its database
    result(store_service(parent_undoing=True).stopService())
    assert list(tmp_path.iterdir()) == []
