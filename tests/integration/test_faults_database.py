"""The database goes away mid-game and comes back: the server refuses new orders with a clear
Fail 3 at once (never a hang), keeps every order and finished flag it acknowledged, and carries
on by itself when the database is back.

* In process: a store that fails on demand (every step checked on a task.Clock).
* A real server on SQLite whose disk fills up (a tiny tmpfs; needs root, skipped otherwise).
* A real server on a PostgreSQL of the test's own (initdb and pg_ctl in a temporary folder,
  never the machine's shared instance), stopped and started again, also under load.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
import sqlalchemy as sa
from twisted.internet import defer
from twisted.internet.task import Clock

import protocol as tp
from ruleset import OrderType, game_rng
from ruleset.simulator import RandomPlayer
from server.database import SyncDatabase, create_engine
from server.game.directory import GameDirectory
from server.game.game import Game
from server.game.write_side import COMMIT_RETRY_S
from server.model.memory_store import MemoryStore
from server.model.refusals import TURN_NOT_STORED
from server.model.store import GameSetup, StoreUnavailable
from server.model.timer_settings import TimerSettings
from server.tp.errors import STORE_UNAVAILABLE_TEXT
from tests.server.test_session import colonist_of
from tests.server.wire import Wire
from tests.support.servers import free_port
from tests.support.stores import hold_turns

from .server_process import ServerProcess
from .tp_client import TPClient

pytestmark = pytest.mark.timeout(240)

PASSWORD = "a-good-password"


# -- in process: a store that goes away ---------------------------------------------------------


class FlakyStore(MemoryStore):
    """A MemoryStore whose writes fail with StoreUnavailable while `down` (only turns, while
    `turns_down`)."""

    def __init__(self):
        super().__init__()
        self.down = False
        self.turns_down = False

    def _available(self) -> None:
        if self.down:
            raise StoreUnavailable("could not connect to server: Connection refused")

    def record_order(self, *args):
        self._available()
        return super().record_order(*args)

    def remove_order(self, *args):
        self._available()
        return super().remove_order(*args)

    def commit_turn(self, *args):
        self._available()
        if self.turns_down:
            raise StoreUnavailable("database or disk is full")
        return super().commit_turn(*args)

    def record_finished(self, *args):
        self._available()
        return super().record_finished(*args)


def flaky_game():
    store = FlakyStore()
    setup = GameSetup("tae", seed=7, timer=TimerSettings(turn_length=0), ctime=1_700_000_000)
    game_id = store.create_game(setup)
    clock = Clock()
    game = Game(game_id, setup, setup.initial_state(), store, clock)
    directory = GameDirectory()
    directory.add(game)
    game.start()
    ann, bob = Wire(directory), Wire(directory)
    ann.login("ann", PASSWORD)
    bob.login("bob", PASSWORD)
    return store, game, clock, ann, bob


def colonize(game, player: int) -> tuple[int, tp.InsertOrder]:
    fleet = colonist_of(game, player)
    target = game.state.board.system_id(game.state.board.cell_at(0, 0))
    return fleet.id, tp.InsertOrder(fleet.id, -1, OrderType.COLONIZE, (tp.ObjectArg(target),))


def another_order(game, player: int, besides: int) -> tp.InsertOrder:
    """An order the ruleset accepts for another of the player's fleets than `besides`."""
    for seed in range(200):
        for order in RandomPlayer()(game.state, player, game_rng(seed, 1, "flaky")):
            if order.fleet != besides:
                return tp.InsertOrder(
                    order.fleet, -1, int(order.type), TPClient.order_args(int(order.type), order.target)
                )
    raise AssertionError("no other order")


def stored_orders(store: FlakyStore, game: Game) -> list[tuple[int, int]]:
    stored = store.games[game.id]
    return [(o.player, o.object_id) for o in stored.orders if o.seq not in stored.removed_orders]


def test_orders_are_refused_at_once_while_the_store_is_away_and_the_acknowledged_kept():
    store, game, clock, ann, bob = flaky_game()
    fleet, order = colonize(game, 1)
    assert isinstance(ann.one(order), tp.Order)
    store.down = True
    answer = ann.one(another_order(game, 1, fleet))
    assert (answer.code, answer.message) == (3, STORE_UNAVAILABLE_TEXT)
    removed = ann.items(tp.RemoveOrder(fleet, (0,)))[0]
    assert (removed.code, removed.message) == (3, STORE_UNAVAILABLE_TEXT)
    assert [q.order.type for q in game.queue(fleet)] == [OrderType.COLONIZE]
    assert stored_orders(store, game) == [(1, fleet)]
    assert isinstance(ann.one(tp.Ping()), tp.Okay)
    store.down = False
    assert isinstance(ann.items(tp.RemoveOrder(fleet, (0,)))[0], tp.Okay)
    assert stored_orders(store, game) == []


def test_a_finished_flag_that_cannot_be_stored_is_taken_back():
    store, game, clock, ann, bob = flaky_game()
    store.down = True
    answer = ann.one(tp.FinishedTurn())
    assert (answer.code, answer.message) == (3, STORE_UNAVAILABLE_TEXT)
    assert game.finished == frozenset() and 1 in game.waiting_for()
    store.down = False
    assert isinstance(ann.one(tp.FinishedTurn()), tp.Okay)
    assert game.finished == {1} and (1, 1) in store.games[game.id].finished


def test_a_turn_that_cannot_be_stored_answers_everyone_at_once_and_is_stored_when_the_store_is_back():
    store, game, clock, ann, bob = flaky_game()
    fleet, order = colonize(game, 1)
    assert isinstance(ann.one(order), tp.Order)
    assert isinstance(ann.one(tp.FinishedTurn()), tp.Okay)
    store.turns_down = True
    # bob's flag is stored, so his finish is durable: Okay, though the turn cannot be stored yet
    assert isinstance(bob.one(tp.FinishedTurn()), tp.Okay)
    assert game.busy and game.state.turn == 0
    for request in (
        another_order(game, 1, fleet),
        tp.GetObjectIDs(-1, 0, -1, -1),
        tp.FinishedTurn(),
        tp.GetTimeRemaining(),
    ):
        answer = ann.one(request)
        assert (type(answer), answer.code, answer.message) == (tp.Fail, 3, TURN_NOT_STORED.message)
    assert isinstance(ann.one(tp.Ping()), tp.Okay)
    clock.advance(COMMIT_RETRY_S)  # still away: tried again, still refused
    assert game.busy and ann.one(tp.GetTimeRemaining()).code == 3
    store.turns_down = False
    clock.advance(COMMIT_RETRY_S)
    assert not game.busy and game.state.turn == 1 and len(store.games[game.id].turns) == 1
    pushed = ann.read()  # the new turn is announced
    assert [m.turn for m in pushed if isinstance(m, tp.TimeRemaining)][-1:] == [1]
    assert ann.one(tp.GetTimeRemaining()).turn == 1
    assert (1, fleet) in stored_orders(store, game)  # the acknowledged order was played


def test_requests_already_waiting_for_the_turn_are_answered_when_storing_it_fails():
    store, game, clock, ann, bob = flaky_game()
    commit = defer.Deferred()
    put_back = hold_turns(store, lambda: commit)
    assert isinstance(ann.one(tp.FinishedTurn()), tp.Okay)
    bob.send(tp.FinishedTurn())  # ends the turn: the commit is under way
    ann.read()  # the announcement that the turn ends
    assert ann.send(tp.GetTimeRemaining()) == []  # waits for the new turn
    commit.errback(StoreUnavailable("disk full"))
    answer = ann.read()
    assert [(type(m), m.code, m.message) for m in answer] == [(tp.Fail, 3, TURN_NOT_STORED.message)]
    assert [type(m) for m in bob.read() if not isinstance(m, tp.TimeRemaining)] == [tp.Okay]
    put_back()
    clock.advance(COMMIT_RETRY_S)
    assert game.state.turn == 1


# -- helpers for real servers -------------------------------------------------------------------


def player(port: int, name: str) -> TPClient:
    client = TPClient(port, timeout=30)
    client.connect()
    reply = client.create_account(f"{name}@tae", PASSWORD)
    assert isinstance(reply, tp.Okay | tp.Fail), reply
    client.login(f"{name}@tae", PASSWORD)
    return client


def current_game(url: str) -> Game:
    with SyncDatabase(url) as db:
        stored = db.load_games()
    return Game.restore(stored[0], None, Clock())


def orders_for(url: str, pid: int, count: int) -> list:
    """`count` orders the ruleset accepts for player `pid` in the current turn."""
    game = current_game(url)
    for seed in range(200):
        orders = RandomPlayer()(game.state, pid, game_rng(seed, game.state.turn + 1, "faults"))
        if len(orders) >= count:
            return orders[:count]
    raise AssertionError("no orders")


def retry_until(what, seconds: float = 40.0, step: float = 0.5):
    deadline = time.monotonic() + seconds
    while True:
        value = what()
        if value is not None:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {seconds} s")
        time.sleep(step)


def timed(client: TPClient, message):
    """(the answer, the seconds it took); a list request's first item is its answer."""
    started = time.monotonic()
    replies = client.request(message)
    answer = replies[1] if isinstance(replies[0], tp.Sequence) and len(replies) > 1 else replies[0]
    return answer, time.monotonic() - started


# -- SQLite: the disk fills up --------------------------------------------------------------------


@pytest.fixture
def tiny_disk():
    if os.geteuid() != 0:
        pytest.skip("mounting a tiny tmpfs needs root")
    folder = Path(tempfile.mkdtemp(prefix="tae-full-"))
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(folder)], capture_output=True
    )
    if mounted.returncode != 0:
        folder.rmdir()
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)
        folder.rmdir()


def fill(folder: Path) -> Path:
    """Fill the file system of `folder` to the last byte; the filler file."""
    filler = folder / "filler"
    with filler.open("wb", buffering=0) as out:
        for size in (65536, 4096, 1):
            try:
                while True:
                    out.write(b"\0" * size)
            except OSError:
                pass
    return filler


def test_sqlite_disk_full_refuses_with_a_clear_fail_and_recovers(tiny_disk):
    url = f"sqlite:///{tiny_disk / 'tae.db'}"
    server = ServerProcess(url, "--turn-length", "0")
    try:
        port = server.start()
        ann, bob = player(port, "ann"), player(port, "bob")
        first, second = orders_for(url, 1, 2)
        assert isinstance(ann.one(ann.insert_order(first.fleet, int(first.type), first.target)), tp.Order)
        filler = fill(tiny_disk)
        # SQLite may still find room in pages it has; the disk is full once a write needs more
        answer, waited = timed(ann, ann.insert_order(second.fleet, int(second.type), second.target))
        refusals = 0
        while isinstance(answer, tp.Order):  # it found room: take it back and try the next write
            removed = ann.items(tp.RemoveOrder(second.fleet, (len(ann.queue(second.fleet)) - 1,)))[0]
            if isinstance(removed, tp.Fail):
                answer = removed
                break
            answer, waited = timed(ann, ann.insert_order(second.fleet, int(second.type), second.target))
        assert isinstance(answer, tp.Fail) and answer.code == 3 and "database" in answer.message, answer
        assert waited < 5
        refusals += 1
        assert isinstance(ann.one(tp.Ping()), tp.Okay)
        filler.unlink()  # room again
        reply = retry_until(
            lambda: (
                r
                if isinstance(
                    r := ann.one(ann.insert_order(second.fleet, int(second.type), second.target)), tp.Order
                )
                else None
            )
        )
        assert isinstance(reply, tp.Order)
        assert (int(first.type), first.target) in ann.queue(first.fleet)
        assert isinstance(ann.one(tp.FinishedTurn()), tp.Okay) and isinstance(
            bob.one(tp.FinishedTurn()), tp.Okay
        )
        assert ann.time_remaining().turn == 1
        assert refusals == 1
    finally:
        server.kill()


# -- PostgreSQL of the test's own -------------------------------------------------------------------


def pg_bin() -> Path | None:
    for folder in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (folder / "initdb").exists() and (folder / "pg_ctl").exists():
            return folder
    found = shutil.which("pg_ctl")
    return Path(found).resolve().parent if found else None


class OwnPostgres:
    """A PostgreSQL cluster in a temporary folder, on a free port, run as the `postgres` user
    when the tests run as root (PostgreSQL refuses to run as root)."""

    def __init__(self, bindir: Path):
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="tae-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self.databases = 0
        if os.geteuid() == 0:
            import pwd

            owner = pwd.getpwnam("postgres")
            os.chown(self.root, owner.pw_uid, owner.pw_gid)
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "--no-sync")

    def _run(self, tool: str, *args: str) -> None:
        command = [str(self.bindir / tool), *args]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{tool} failed: {done.stdout} {done.stderr}")

    def start(self) -> None:
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run(
            "pg_ctl",
            "-D",
            str(self.data),
            "-l",
            str(self.root / "log"),
            "-o",
            options,
            "-w",
            "-t",
            "60",
            "start",
        )

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        self.databases += 1
        name = f"tae_faults_{self.databases}"
        engine = create_engine(self.url(), isolation_level="AUTOCOMMIT")
        with engine.connect() as conn:
            conn.execute(sa.text(f"CREATE DATABASE {name}"))
        engine.dispose()
        return self.url(name)

    def destroy(self) -> None:
        try:
            self.stop("immediate")
        except RuntimeError:
            pass
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture(scope="module")
def own_postgres():
    bindir = pg_bin()
    if bindir is None:
        pytest.skip("no PostgreSQL binaries (initdb, pg_ctl)")
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        pytest.skip("running as root without runuser: cannot start PostgreSQL as another user")
    try:
        cluster = OwnPostgres(bindir)
    except (RuntimeError, KeyError) as error:
        pytest.skip(f"cannot make a PostgreSQL cluster here: {error}")
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.destroy()


def test_postgres_stopped_and_started_again(own_postgres):
    url = own_postgres.new_database()
    server = ServerProcess(url, "--turn-length", "0")
    try:
        port = server.start()
        ann, bob = player(port, "ann"), player(port, "bob")
        first, second = orders_for(url, 1, 2)
        insert = [ann.insert_order(o.fleet, int(o.type), o.target) for o in (first, second)]
        assert isinstance(ann.one(insert[0]), tp.Order)

        own_postgres.stop("fast")
        answer, waited = timed(ann, insert[1])
        assert (type(answer), answer.code, answer.message) == (tp.Fail, 3, STORE_UNAVAILABLE_TEXT)
        assert waited < 5, waited
        answer, waited = timed(ann, tp.FinishedTurn())
        assert (answer.code, answer.message) == (3, STORE_UNAVAILABLE_TEXT) and waited < 5
        assert ann.queue(first.fleet) == [(int(first.type), first.target)]  # reads go on
        assert isinstance(bob.one(tp.Ping()), tp.Okay)
        assert ann.time_remaining().waiting == (1, 2)  # ann's finish was taken back

        own_postgres.start()  # the server finds it again by itself
        retry_until(lambda: r if isinstance(r := ann.one(insert[1]), tp.Order) else None)
        assert isinstance(ann.one(tp.FinishedTurn()), tp.Okay)
        assert isinstance(bob.one(tp.FinishedTurn()), tp.Okay)
        assert ann.time_remaining().turn == 1
        server.terminate()
        with SyncDatabase(url) as db:
            stored = db.load_games()[0]
        assert [t.turn for t in stored.turns] == [1]
        played = {(o.player, o.object_id, o.type, o.target) for o in stored.orders if o.turn == 1}
        assert {(1, o.fleet, int(o.type), o.target) for o in (first, second)} <= played
        assert {(1, 1), (1, 2)} <= stored.finished
    finally:
        server.kill()
        if not _is_up(own_postgres):
            own_postgres.start()


def test_postgres_away_when_a_turn_ends_the_turn_is_stored_once_it_is_back(own_postgres):
    url = own_postgres.new_database()
    server = ServerProcess(url, "--turn-length", "8")
    try:
        port = server.start()
        ann, bob = player(port, "ann"), player(port, "bob")  # the game starts: 8 s to go
        (order,) = orders_for(url, 1, 1)
        assert isinstance(ann.one(ann.insert_order(order.fleet, int(order.type), order.target)), tp.Order)
        assert isinstance(ann.one(tp.FinishedTurn()), tp.Okay)
        own_postgres.stop("fast")
        server.wait_for(
            lambda e: str(e.get("message", "")).startswith("game tae: storing the end of turn 0 failed"), 30
        )
        for client in (ann, bob):
            answer, waited = timed(client, tp.GetTimeRemaining())
            assert (answer.code, answer.message) == (3, TURN_NOT_STORED.message) and waited < 5
        answer, waited = timed(bob, tp.FinishedTurn())
        assert answer.code == 3 and waited < 5
        assert isinstance(ann.one(tp.Ping()), tp.Okay)
        own_postgres.start()
        turn = retry_until(
            lambda: r.turn if isinstance(r := ann.one(tp.GetTimeRemaining()), tp.TimeRemaining) else None
        )
        assert turn == 1
        assert any(e.get("message") == "game tae: the store keeps turns again" for e in server.events)
        server.terminate()
        with SyncDatabase(url) as db:
            stored = db.load_games()[0]
        assert [t.turn for t in stored.turns] == [1]
        assert (1, order.fleet, int(order.type), order.target) in {
            (o.player, o.object_id, o.type, o.target) for o in stored.orders if o.turn == 1
        }
    finally:
        server.kill()
        if not _is_up(own_postgres):
            own_postgres.start()


def _is_up(cluster: OwnPostgres) -> bool:
    try:
        engine = create_engine(cluster.url())
        with engine.connect():
            pass
        engine.dispose()
        return True
    except Exception:
        return False


class LoadPlayer(threading.Thread):
    """Inserts and removes one order over and over; keeps what the server acknowledged."""

    def __init__(self, port: int, name: str, pid: int, order, stop: threading.Event):
        super().__init__(daemon=True)
        self.client = player(port, name)
        self.pid, self.order, self.stop = pid, order, stop
        self.queued = 0  # acknowledged inserts minus acknowledged removals
        self.answers: Counter = Counter()
        self.slowest = 0.0
        self.last_success = 0.0
        self.in_doubt = False  # a write was answered "may or may not have been done"
        self.error: BaseException | None = None

    def run(self) -> None:
        order = self.order
        message = self.client.insert_order(order.fleet, int(order.type), order.target)
        try:
            while not self.stop.is_set():
                if self.queued == 0:
                    answer, waited = timed(self.client, message)
                    if isinstance(answer, tp.Order):
                        self.queued += 1
                else:
                    answer, waited = timed(self.client, tp.RemoveOrder(order.fleet, (0,)))
                    if isinstance(answer, tp.Okay):
                        self.queued -= 1
                self.slowest = max(self.slowest, waited)
                if not isinstance(answer, tp.Fail):
                    self.last_success = time.monotonic()
                    if self.in_doubt:  # the game settled the earlier write before this one
                        self.queued, self.in_doubt = len(self.client.queue(order.fleet)), False
                elif "may or may not" in answer.message:
                    self.in_doubt = True  # told "look again": it may have been stored after all
                elif "Could not remove" in answer.message:
                    # no order to remove: a removal told "may or may not" was stored; look again,
                    # as a player would, at what the server holds
                    self.queued = len(self.client.queue(order.fleet))
                kind = type(answer).__name__ + (f" {answer.code}" if isinstance(answer, tp.Fail) else "")
                self.answers[kind] += 1
                self.client.one(tp.GetObjectIDs(-1, 0, -1, -1))
        except BaseException as error:  # reported by the test
            self.error = error


def test_postgres_killed_under_load_loses_nothing_acknowledged_and_recovers(own_postgres):
    url = own_postgres.new_database()
    server = ServerProcess(url, "--turn-length", "0")
    stop = threading.Event()
    loaders: list[LoadPlayer] = []
    try:
        port = server.start()
        names = ("ann", "bob", "cat", "dan")
        for name in names:
            player(port, name).close()  # all accounts first: the players' ids are fixed
        for pid, name in enumerate(names, start=1):
            loaders.append(LoadPlayer(port, name, pid, orders_for(url, pid, 1)[0], stop))
        for loader in loaders:
            loader.start()
        time.sleep(2)
        own_postgres.stop("immediate")  # killed: no goodbye to its clients
        time.sleep(random.uniform(2, 4))
        own_postgres.start()
        back = time.monotonic()
        time.sleep(6)
        stop.set()
        for loader in loaders:
            loader.join(60)
        print("LOAD", [(dict(loader.answers), round(loader.slowest, 2), loader.queued) for loader in loaders])
        for loader in loaders:
            assert loader.error is None, loader.error
            assert loader.answers["Fail 3"] > 0, loader.answers  # the outage was seen, and told
            # and work went on after it (else: the server's last lines, to see why)
            assert loader.last_success > back + 1, (loader.pid, loader.answers, server.lines[-30:])
            assert loader.slowest < 15, loader.slowest  # answered, never hung
            expected = [(int(loader.order.type), loader.order.target)] * loader.queued
            assert loader.client.queue(loader.order.fleet) == expected
        server.terminate()
        with SyncDatabase(url) as db:
            stored = db.load_games()[0]
        for loader in loaders:
            kept = [
                o
                for o in stored.orders
                if o.player == loader.pid and o.turn == 1 and o.seq not in stored.removed_orders
            ]
            assert len(kept) == loader.queued, (loader.pid, kept, loader.queued)
    finally:
        stop.set()
        for loader in loaders:
            loader.client.close()
        server.kill()
        if not _is_up(own_postgres):
            own_postgres.start()
