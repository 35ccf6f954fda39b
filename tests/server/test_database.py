"""server.database on SQLite: migrations, every record through load_games, atomic commits,
Game.restore from the database, and the one database thread.

The `check_*` functions take a database URL; tests/integration/test_database_postgres.py runs
them against PostgreSQL too.
"""

from __future__ import annotations

import queue
import threading
import time

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from twisted.internet import defer
from twisted.internet.task import Clock
from twisted.python.failure import Failure

from ruleset import Message, Phase, game_rng, resolve_turn
from ruleset.ai import Level
from ruleset.simulator import RandomPlayer, set_up
from server.database import (
    ConflictError,
    DatabaseStore,
    NotFoundError,
    SyncDatabase,
    SynchronousDatabaseThread,
    create_engine,
    current_revision,
    head_revision,
    upgrade,
)
from server.database.migrate import alembic_config
from server.database.schema import metadata, users
from server.game.game import Game
from server.model.memory_store import MemoryStore
from server.model.store import Account, GameSetup, OrderEntry, TurnRecord
from server.model.timer_settings import TimerSettings
from tests.support.deferreds import failureResultOf, successResultOf

pytestmark = pytest.mark.timeout(60)

TABLES = {"games", "accounts", "join_messages", "orders", "removed_messages", "turns", "changes"}


# -- helpers ---------------------------------------------------------------------------------


result = successResultOf


def settled(d):
    """What a fired Deferred gave: its result, or its Failure (not raised)."""
    out = []
    d.addBoth(out.append)
    assert out, "the Deferred did not fire"
    return out[0]


def sync_store(url) -> DatabaseStore:
    return DatabaseStore(url, thread=SynchronousDatabaseThread())


class TeeStore:
    """Every call goes to a MemoryStore (the reference) and to the store under test."""

    def __init__(self, store):
        self.memory = MemoryStore()
        self.store = store

    def __getattr__(self, name):
        def call(*args):
            getattr(self.memory, name)(*args)
            return getattr(self.store, name)(*args)

        return call


@pytest.fixture
def sqlite_url(tmp_path):
    return f"sqlite:///{tmp_path / 'tae.db'}"


@pytest.fixture
def fresh_url(sqlite_url):
    upgrade(sqlite_url)
    return sqlite_url


def inject_failure(engine, prefix: str):
    """Make the next statements starting with `prefix` fail; returns the remover."""

    def fail(conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith(prefix.upper()):
            raise RuntimeError(f"injected failure at {prefix}")

    sa.event.listen(engine, "before_cursor_execute", fail)
    return lambda: sa.event.remove(engine, "before_cursor_execute", fail)


def full_setup(name="full") -> GameSetup:
    return GameSetup(
        name=name,
        map_text="A.M\n.A.\n..M\n",
        seed=2**62 + 7,
        timer=TimerSettings("threshold", 120, 3, 50, 30, 600),
        max_players=5,
        auto_add=True,
        account_creation=False,
        description="ünïcode\nlines",
        ctime=1700000000,
    )


def drive_game(game: Game, turns: int, seed: int = 1, joiner_at: int = 1) -> None:
    """Play `turns` turns of random orders through the game service, with removals of orders
    and messages and a player who joins late, so that every kind of record is stored."""
    player = RandomPlayer()
    rng = game_rng(seed, 0, "test driver")
    for _ in range(turns):
        state = game.state
        if state.phase is Phase.OVER:
            break
        if state.turn == joiner_at and game.player_id("late") is None:
            result(game.create_account("late", "pw", "late@example.org", "joined late"))
        for pid in game.acting_players():
            for order in player(game.state, pid, game_rng(seed, state.turn + 1, f"p{pid}")):
                inserted = game.insert_order(pid, order.fleet, -1, order.type, order.target)
                slot = settled(inserted)
                if not isinstance(slot, Failure) and rng.random() < 0.2:
                    result(game.remove_order(pid, order.fleet, slot))
            board = game.snapshot.board(pid)
            if board and rng.random() < 0.3:
                assert result(game.remove_message(pid, rng.randrange(len(board)))) is None
        for pid in game.acting_players():
            game.finish_turn(pid)
        assert game.state.turn == state.turn + 1, "the turn did not end"
    # leave some open orders for the next turn
    for pid in game.acting_players():
        for order in player(game.state, pid, game_rng(seed, game.state.turn + 1, f"p{pid}")):
            settled(game.insert_order(pid, order.fleet, -1, order.type, order.target))


def new_game(store, name="tae", seed=3, players=("alice", "bob", "carol")) -> Game:
    setup = GameSetup(name, seed=seed, timer=TimerSettings(turn_length=0))
    game_id = result(defer.maybeDeferred(store.create_game, setup))
    game = Game(game_id, setup, Game.initial_state(setup), store, Clock())
    for name in players:
        result(game.create_account(name, name + "-pw"))
    return game


def assert_same_game(again: Game, game: Game) -> None:
    assert again.state == game.state
    assert again.accounts == game.accounts
    assert again.order_serial == game.order_serial
    assert {k: [(q.entry, q.order) for q in v] for k, v in again.snapshot.queues.items()} == {
        k: [(q.entry, q.order) for q in v] for k, v in game.snapshot.queues.items()
    }
    for pid in range(1, len(game.state.players) + 1):
        assert [(m.index, m.message) for m in again.snapshot.board(pid)] == [
            (m.index, m.message) for m in game.snapshot.board(pid)
        ]


# -- checks shared with the PostgreSQL tests -------------------------------------------------


def check_migrations_from_empty(url) -> None:
    assert current_revision(url) is None
    assert upgrade(url) == head_revision()
    assert current_revision(url) == head_revision()
    assert upgrade(url) == head_revision()  # again: nothing to do
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            assert set(sa.inspect(conn).get_table_names()) >= TABLES
            # the migrations build exactly what server.database.schema declares
            assert compare_metadata(MigrationContext.configure(conn), metadata) == []
        with engine.begin() as conn:
            command.downgrade(alembic_config(conn), "base")
        with engine.connect() as conn:
            assert not TABLES & set(sa.inspect(conn).get_table_names())
        assert upgrade(engine) == head_revision()
    finally:
        engine.dispose()


def check_the_change_records_revision_goes_down_and_up(url) -> None:
    """0006c adds the changes table and takes it away again, with the records in it."""
    assert upgrade(url) == head_revision()
    engine = create_engine(url)
    try:
        with SyncDatabase(engine) as db:
            game_id = db.create_game(GameSetup("g"))
            game = Game(game_id, GameSetup("g"), GameSetup("g").initial_state(), db, Clock())
            successResultOf(game.create_account("ann", "ann-password"))
            assert [r.kind for r in db.changes_after(game_id)] == ["seat_changed"]
        with engine.begin() as conn:
            command.downgrade(alembic_config(conn), "0005s")
        with engine.connect() as conn:
            names = set(sa.inspect(conn).get_table_names())
            assert "changes" not in names and {"games", "accounts", "web_session_revocations"} <= names
        assert upgrade(engine) == head_revision()
        with SyncDatabase(engine) as db:
            assert db.changes_after(game_id) == [] and db.load_games()[0].accounts[0].username == "ann"
    finally:
        engine.dispose()


def check_every_record_round_trips(url) -> None:
    """Explicit records of two games go in; load_games gives back what a MemoryStore does."""
    store = TeeStore(sync_store(url))
    try:
        ids = [result(store.create_game(full_setup("one"))), result(store.create_game(GameSetup("two")))]
        state = set_up(2, seed=9)
        for game_id in ids:
            for pid, name in ((1, "alice"), (2, "bob")):
                messages = (
                    Message(pid, 0, "Welcome", f"hello {name}"),
                    Message(3 - pid, 0, "New Player", f"{name} joined"),
                )
                result(store.add_account(game_id, Account(name, "scrypt$x", pid, f"{name}@x", "c"), messages))
        first, second = ids
        result(store.record_order(first, OrderEntry(1, 1, 1, 500, 0, 1, 4)))
        result(store.record_order(first, OrderEntry(2, 1, 2, 501, 0, 2, 6)))
        result(store.record_order(second, OrderEntry(1, 1, 1, 500, 0, 3, 8)))
        result(store.remove_order(first, 2))
        result(store.remove_message(first, 1, 0))
        result(store.remove_message(first, 1, 0))  # twice: still one removal
        result(store.remove_message(second, 2, 1))
        for turn in (1, 2):
            orders = RandomPlayer()(state, 1, game_rng(9, turn, "p1")) + RandomPlayer()(
                state, 2, game_rng(9, turn, "p2")
            )
            outcome = resolve_turn(state, orders, game_rng(9, turn))
            state = outcome.state
            record = TurnRecord(turn, state, outcome.messages, outcome.events, 10 * turn)
            assert outcome.messages and outcome.events
            result(store.commit_turn(first, record))
        result(store.record_order(first, OrderEntry(3, 3, 1, 502, 0, 1, 4)))

        loaded = result(sync_store(url).load_games())
        assert loaded == store.memory.load_games()
        assert [g.game_id for g in loaded] == ids
        assert loaded[0].setup == full_setup("one")
        assert loaded[0].removed_orders == {2} and loaded[0].removed_messages == {(1, 0)}
        assert [t.turn for t in loaded[0].turns] == [1, 2] and loaded[0].turns[-1].state == state
        assert [g.game_id for g in result(sync_store(url).load_games([second]))] == [second]
    finally:
        result(store.store.close())


def check_game_restores_from_the_database(url, turns: int = 6) -> None:
    """A game played through DatabaseStore is rebuilt equal from a fresh store's load_games."""
    tee = TeeStore(sync_store(url))
    game = new_game(tee)
    drive_game(game, turns)
    assert game.state.turn >= 2 and game.player_id("late") == 4
    assert any(game.snapshot.queues.values())
    result(tee.store.close())

    again_store = sync_store(url)
    stored = result(again_store.load_games())
    assert stored == tee.memory.load_games()
    again = Game.restore(stored[0], again_store, Clock())
    assert_same_game(again, game)
    # and the restored game goes on storing: one more turn, restored once more
    drive_game(again, 1, seed=2, joiner_at=-1)
    restored = Game.restore(result(again_store.load_games())[0], again_store, Clock())
    assert_same_game(restored, again)
    result(again_store.close())


def check_failed_commit_leaves_nothing(url) -> None:
    store = sync_store(url)
    game = new_game(store, players=("a", "b"))
    game_id = game.id
    state = game.state
    outcome = resolve_turn(state, [], game_rng(3, 1))
    record = TurnRecord(1, outcome.state, outcome.messages, outcome.events, 7)
    remove = inject_failure(store.engine, "UPDATE games")  # after the turn row was inserted
    try:
        assert "injected" in str(failureResultOf(store.commit_turn(game_id, record), RuntimeError).value)
    finally:
        remove()
    with store.engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM turns")).scalar() == 0
        assert conn.execute(sa.text("SELECT last_turn, last_modtime_serial FROM games")).one() == (0, 0)
    assert result(store.load_games())[0].turns == []
    result(store.commit_turn(game_id, record))
    assert result(store.load_games())[0].turns == [record]

    # an account and its join messages are one transaction too
    remove = inject_failure(store.engine, "INSERT INTO join_messages")
    try:
        failureResultOf(
            store.add_account(game_id, Account("c", "h", 3), (Message(3, 1, "Welcome", "hi"),)), RuntimeError
        )
    finally:
        remove()
    assert [a.username for a in result(store.load_games())[0].accounts] == ["a", "b"]
    result(store.close())


def check_the_game_keeps_its_state_when_a_commit_fails_and_retries(url) -> None:
    store = sync_store(url)
    game = new_game(store, players=("a", "b"))
    before = game.state
    remove = inject_failure(store.engine, "INSERT INTO turns")
    game.finish_turn(1)
    game.finish_turn(2)
    assert game.state is before  # nothing was told; a retry is scheduled
    assert result(store.load_games())[0].turns == []
    remove()
    game.clock.advance(5)
    assert game.state.turn == 1
    assert result(store.load_games())[0].turns[-1].state == game.state
    result(store.close())


def check_conflicts_and_missing_records(url) -> None:
    store = sync_store(url)
    game_id = result(store.create_game(GameSetup("g")))
    failureResultOf(store.create_game(GameSetup("g")), ConflictError)
    result(store.add_account(game_id, Account("a", "h", 1), ()))
    failureResultOf(store.add_account(game_id, Account("a", "h", 2), ()), ConflictError)
    failureResultOf(store.add_account(game_id, Account("b", "h", 1), ()), ConflictError)
    failureResultOf(store.add_account(game_id + 100, Account("a", "h", 1), ()), NotFoundError)
    failureResultOf(store.remove_order(game_id, 1), NotFoundError)
    result(store.record_order(game_id, OrderEntry(1, 1, 1, 2, 0, 1, 4)))
    failureResultOf(store.record_order(game_id, OrderEntry(1, 1, 1, 2, 0, 1, 4)), ConflictError)
    failureResultOf(
        store.record_order(game_id + 100, OrderEntry(1, 1, 1, 2, 0, 1, 4)), ConflictError
    )  # unknown game: the foreign key refuses it

    state = set_up(1, seed=1)
    one = resolve_turn(state, [], game_rng(1, 1))
    two = resolve_turn(one.state, [], game_rng(1, 2))
    record_two = TurnRecord(2, two.state, two.messages, two.events, 2)
    assert "cannot follow" in str(
        failureResultOf(store.commit_turn(game_id, record_two), ConflictError).value
    )
    record_one = TurnRecord(1, one.state, one.messages, one.events, 1)
    result(store.commit_turn(game_id, record_one))
    result(store.commit_turn(game_id, record_one))  # a retried commit of the same turn
    assert "different" in str(
        failureResultOf(
            store.commit_turn(game_id, TurnRecord(1, one.state, (), one.events, 1)), ConflictError
        ).value
    )
    failureResultOf(store.commit_turn(game_id, TurnRecord(3, one.state, (), (), 1)), ValueError)
    result(store.commit_turn(game_id, record_two))
    assert [t.turn for t in result(store.load_games())[0].turns] == [1, 2]
    result(store.close())


class ThreadReactor:
    """Just enough reactor for DatabaseThread: results come back through a queue that the test
    pumps, so the real worker thread is used without running the global reactor."""

    def __init__(self):
        self.calls: queue.Queue = queue.Queue()
        self.triggers = []

    def callFromThread(self, f, *args, **kwargs):
        self.calls.put((f, args, kwargs))

    def addSystemEventTrigger(self, phase, event, f, *args):
        self.triggers.append(f)
        return f

    def removeSystemEventTrigger(self, trigger):
        self.triggers.remove(trigger)

    def wait(self, d, timeout=20.0):
        out = []
        d.addBoth(out.append)
        deadline = time.monotonic() + timeout
        while not out:
            f, args, kwargs = self.calls.get(timeout=max(0.01, deadline - time.monotonic()))
            f(*args, **kwargs)
        if isinstance(out[0], Failure):
            out[0].raiseException()
        return out[0]


def check_one_database_thread_and_results_after_commit(url) -> None:
    reactor = ThreadReactor()
    store = DatabaseStore(url, reactor)
    threads = set()
    sa.event.listen(store.engine, "before_cursor_execute", lambda *a: threads.add(threading.get_ident()))
    observer = create_engine(url)  # another connection, as another process would see it
    seen = []

    def visible(game_id):
        with observer.connect() as conn:
            seen.append(
                conn.execute(sa.text("SELECT name FROM games WHERE id = :i"), {"i": game_id}).scalar()
            )
        return game_id

    try:
        assert reactor.wait(store.upgrade()) == head_revision()
        pending = [store.create_game(GameSetup(f"g{i}")).addCallback(visible) for i in range(5)]
        ids = [reactor.wait(d) for d in pending]
        assert seen == [f"g{i}" for i in range(5)]  # committed before the Deferred fired
        assert ids == sorted(set(ids)) and len(ids) == 5  # run one after another, in order
        with pytest.raises(ConflictError):
            reactor.wait(store.create_game(GameSetup("g0")))
        games = reactor.wait(store.load_games())
        assert [g.setup.name for g in games] == [f"g{i}" for i in range(5)]
        assert len(threads) == 1 and threading.get_ident() not in threads
    finally:
        reactor.wait(store.close())
        observer.dispose()
    assert not store.thread.running and reactor.triggers == []
    with pytest.raises(Exception, match="stopped"):
        reactor.wait(store.load_games())


# -- SQLite ------------------------------------------------------------------------------------


def test_the_change_records_revision_goes_down_and_up(sqlite_url):
    check_the_change_records_revision_goes_down_and_up(sqlite_url)


def test_migrations_from_empty(sqlite_url):
    check_migrations_from_empty(sqlite_url)


def test_sqlite_connections_use_wal_and_foreign_keys(fresh_url):
    engine = create_engine(fresh_url)
    try:
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2
            assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() > 0
    finally:
        engine.dispose()


def test_every_record_round_trips(fresh_url):
    check_every_record_round_trips(fresh_url)


def test_game_restores_from_the_database(fresh_url):
    check_game_restores_from_the_database(fresh_url)


def test_failed_commit_leaves_nothing(fresh_url):
    check_failed_commit_leaves_nothing(fresh_url)


def test_the_game_keeps_its_state_when_a_commit_fails_and_retries(fresh_url):
    check_the_game_keeps_its_state_when_a_commit_fails_and_retries(fresh_url)


def test_conflicts_and_missing_records(fresh_url):
    check_conflicts_and_missing_records(fresh_url)


def test_one_database_thread_and_results_after_commit(sqlite_url):
    check_one_database_thread_and_results_after_commit(sqlite_url)


def test_an_in_memory_database_is_one_database():
    store = SyncDatabase("sqlite://")
    assert store.upgrade() == head_revision()
    game_id = store.create_game(GameSetup("mem"))
    assert [g.game_id for g in store.load_games()] == [game_id]
    store.close()


def test_sync_database_is_a_game_store(fresh_url):
    with SyncDatabase(fresh_url) as db:
        game = new_game(db, players=("a", "b"))
        drive_game(game, 3)
        again = Game.restore(db.load_games()[0], db, Clock())
        assert_same_game(again, game)


def test_a_stopped_thread_refuses_work(fresh_url):
    thread = SynchronousDatabaseThread()
    store = DatabaseStore(fresh_url, thread=thread)
    result(store.close())
    assert "stopped" in str(failureResultOf(store.load_games(), Exception).value)


def test_start_up_decodes_only_each_games_last_state(sqlite_url):
    """A restart needs the last state of each game; the older ones are left undecoded."""
    store = sync_store(sqlite_url)
    result(store.upgrade())
    game = new_game(store, players=("a", "b"))
    for _ in range(3):
        for player in (1, 2):
            result(game.finish_turn(player))
    everything = result(store.load_games())[0]
    lean = result(store.load_games(all_states=False))[0]
    assert [t.turn for t in lean.turns] == [t.turn for t in everything.turns] == [1, 2, 3]
    assert [t.state is None for t in lean.turns] == [True, True, False]
    assert lean.turns[-1].state == everything.turns[-1].state == game.state
    assert [t.messages for t in lean.turns] == [t.messages for t in everything.turns]
    assert Game.restore(lean, store, Clock()).state == game.state


def test_computer_players_of_many_games_share_one_account_without_a_collision(fresh_url):
    """A server-wide account per name: every game's `computer-normal` is one account with no
    password (nobody logs in to it), and a second game adds its own without a conflict."""
    store = sync_store(fresh_url)
    games = [new_game(store, name, players=("alice",)) for name in ("g1", "g2")]
    for game in games:
        assert result(game.add_computer_player(Level.NORMAL)) == 2
    with store.engine.connect() as conn:
        rows = dict(conn.execute(sa.select(users.c.username, users.c.password_hash)).all())
    assert set(rows) == {"alice", "computer-normal"} and rows["computer-normal"] == ""
    loaded = result(store.load_games())
    assert [[a.account_name for a in g.accounts] for g in loaded] == [["alice", "computer-normal"]] * 2
    # a person who took the name first keeps it: the next game's computer player is named on
    people = new_game(store, "g3", players=("computer-easy",))
    assert people.snapshot.owners == {1: "computer-easy"}
    later = new_game(store, "g4", players=("alice",))
    assert result(later.add_computer_player(Level.EASY)) == 2
    assert later.snapshot.owners[2] == "computer-easy-2"
