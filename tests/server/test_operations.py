"""server.operating.on_database and what it stores (revision 0002), in process: the operator request queue,
the server lease, removed players, finished players and turn deadlines across restarts, the
CLI's offline edits, replays. On SQLite always, on PostgreSQL when TAE_TEST_DATABASE_URL is set.
"""

from __future__ import annotations

import os
import time

import pytest
import sqlalchemy as sa
from twisted.internet import defer
from twisted.internet.task import Clock

from ruleset import Phase
from server.app import start_server
from server.config.file import GameConfig, ServerConfig
from server.database import (
    DatabaseStore,
    SyncDatabase,
    SynchronousDatabaseThread,
    create_engine,
    head_revision,
    lease,
    upgrade,
)
from server.database.operator_requests import OperatorRequest
from server.game.game import Game
from server.game.passwords import hash_password
from server.game.replay import check_replay, replay
from server.model.refusals import Refused
from server.model.store import GameSetup, OrderEntry
from server.model.timer_settings import TimerSettings
from server.operating import on_database as operations
from server.operating.desk import OperatorDesk
from server.operating.on_database import OperationError, list_games, open_database
from server.services.games import load_games
from tests.support.deferreds import failureResultOf
from tests.support.games import logs_in
from tests.support.operator import operate
from tests.support.stores import hold_turns

from .memory_server import JournalStore, ServerReactor
from .test_database import drive_game, result


def _at_wall_time(operation):
    """An operation of server.operating.on_database, run at the real time (as the command line does)."""

    def run(*args, **kwargs):
        kwargs.setdefault("wallclock", time.time)
        return operation(*args, **kwargs)

    return run


create_game = _at_wall_time(operations.create_game)
game_status = _at_wall_time(operations.game_status)


def add_player(db, game, name, password):
    return operate(db, "add-player", game, name, password, wallclock=time.time)


def remove_player(db, game, name):
    return operate(db, "remove-player", game, name, wallclock=time.time)


def end_turn(db, game):
    return operate(db, "end-turn", game, wallclock=time.time)


pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def url(database_url):
    """An empty database: a SQLite file, or a schema of its own on PostgreSQL."""
    return database_url


@pytest.fixture
def db(url):
    upgrade(url)
    database = SyncDatabase(url)
    yield database
    database.close()


class WallClock:
    """The lease's Unix time, moved by hand."""

    def __init__(self, now: float = 1_800_000_000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


def server_store(url) -> DatabaseStore:
    return DatabaseStore(url, thread=SynchronousDatabaseThread())


def start_desk(url, clock=None, wallclock=None, pid=4242, host="test-host"):
    """What start_server does, on a synchronous store and a Clock: lease, games, polling."""
    store = server_store(url)
    clock = clock or Clock()
    desk = OperatorDesk(store, None, clock, wallclock=wallclock or WallClock(), host=host, pid=pid)
    result(desk.take_lease())
    directory = result(load_games(ServerConfig(), store, clock, desk))
    desk.directory = directory
    return store, desk, directory, clock


def restart_after_crash(url, clock=None, pid=4243):
    """A new server process, after the old one died without giving the lease back."""
    later = 1_800_000_000.0 + (pid - 4242) * 10 * lease.STALE_AFTER_S
    return start_desk(url, clock=clock, wallclock=WallClock(later), pid=pid)


def setup(name="g", **kwargs) -> GameSetup:
    kwargs.setdefault("timer", TimerSettings(turn_length=0))
    return GameSetup(name, seed=kwargs.pop("seed", 5), ctime=1_700_000_000, **kwargs)


def queue(db, game_id, kind, payload=None) -> int:
    return db.requests.queue(game_id, kind, payload or {})


# -- migrations and records ---------------------------------------------------------------------


def test_revision_0002_keeps_the_data_of_0001_and_fills_join_turns(url):
    engine = create_engine(url)
    try:
        upgrade(engine, "0001")
        with engine.begin() as conn:
            conn.execute(
                sa.text(
                    "INSERT INTO games (name, seed, timer_kind, turn_length, turn_players_min, "
                    "turn_player_threshold, turn_length_over_threshold, turn_length_under_threshold, "
                    "max_players, auto_add, account_creation, description, ctime, last_turn) VALUES "
                    "('old', 1, 'basic', 0, 2, 0, 0, 0, 0, false, true, '', 0, 3)"
                )
            )
            conn.execute(
                sa.text(
                    "INSERT INTO accounts (game_id, player_id, username, password_hash, email, comment) "
                    "VALUES (1, 1, 'a', 'h', '', ''), (1, 2, 'b', 'h', '', '')"
                )
            )
            conn.execute(
                sa.text(
                    "INSERT INTO join_messages (game_id, seq, joined_player, player, turn, subject, body) "
                    "VALUES (1, 1, 1, 1, 0, 'Welcome', ''), (1, 2, 2, 2, 2, 'Welcome', ''), "
                    "(1, 3, 2, 1, 2, 'New Player', '')"
                )
            )
        assert upgrade(engine) == head_revision()
        with SyncDatabase(engine) as database:
            stored = database.load_games()[0]
        assert stored.join_turns == {1: 0, 2: 2}
        assert len(stored.join_messages) == 3 and stored.removed_players == set()
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT count(*) FROM server_lease")).scalar() == 1
    finally:
        engine.dispose()


def test_the_new_records_round_trip(db):
    game_id = db.create_game(setup())
    game = Game(game_id, setup(), Game.initial_state(setup()), db, Clock())
    for name in ("a", "b", "c"):
        result(game.create_account(name, "pw"))
    db.record_finished(game_id, 1, 2)
    db.record_finished(game_id, 1, 2)  # idempotent
    db.record_finished(game_id, 2, 1)
    db.remove_player(game_id, 3)
    db.remove_player(game_id, 3)
    db.set_deadline(game_id, 1, 1234.5)
    stored = db.load_games()[0]
    assert stored.finished == {(1, 2), (2, 1)} and stored.removed_players == {3}
    assert stored.deadline == (1, 1234.5) and stored.join_turns == {1: 0, 2: 0, 3: 0}
    db.set_deadline(game_id, 1, None)
    assert db.load_games()[0].deadline is None

    first = queue(db, game_id, "end_turn", {"turn": 1})
    second = queue(db, game_id, "remove_player", {"username": "x"})
    assert [r.id for r in db.requests.pending()] == [first, second]
    db.requests.finish(first, "done", "ok")
    assert db.requests.get(first) == OperatorRequest(first, game_id, "end_turn", {"turn": 1}, "done", "ok")
    assert [r.id for r in db.requests.pending()] == [second]
    assert db.requests.get(second + 100) is None
    with pytest.raises(ValueError):
        queue(db, game_id, "explode")


def test_the_lease(db):
    now = 1_800_000_000.0
    host = lease.this_host()
    assert db.lease.holder(now) is None
    assert db.lease.take("elsewhere", 1, now) is None
    holder = db.lease.take("other", 2, now + 1)
    assert holder.host == "elsewhere" and holder.pid == 1  # alive: refused
    assert db.lease.holder(now + 5).pid == 1
    assert db.lease.heartbeat("elsewhere", 1, now + 10) and not db.lease.heartbeat("other", 2, now + 10)
    assert db.lease.holder(now + 10 + lease.STALE_AFTER_S + 1) is None  # stale
    assert db.lease.take("other", 2, now + 10 + lease.STALE_AFTER_S + 1) is None
    db.lease.release("other", 2)
    assert db.lease.holder(now + 40) is None
    # on this host, a holder whose process is gone is not alive, however fresh its heartbeat
    dead = 2**22 + 12345
    assert not lease.process_exists(dead)
    assert db.lease.take(host, dead, now + 50) is None
    assert db.lease.holder(now + 50) is None
    assert db.lease.take(host, os.getpid(), now + 50) is None
    assert db.lease.holder(now + 50).pid == os.getpid()


# -- the server side: OperatorDesk ------------------------------------------------------------


def test_requests_are_carried_out_by_a_running_server(url, db):
    game_id = db.create_game(setup("one"))
    store, desk, directory, clock = start_desk(url)
    game = directory.find("one")
    assert db.lease.holder(desk.wallclock()) is not None

    # a new game created while the server runs is loaded by the next poll
    other = db.create_game(setup("two", seed=9))
    load = queue(db, other, "load_game")
    add = queue(db, game_id, "add_player", {"username": "ann", "password_hash": hash_password("pw", n=16)})
    add_again = queue(
        db, game_id, "add_player", {"username": "ann", "password_hash": hash_password("x", n=16)}
    )
    add_bob = queue(
        db, game_id, "add_player", {"username": "bob", "password_hash": hash_password("pw", n=16)}
    )
    result(desk.poll())
    assert directory.find("two").id == other and directory.find("two").state.turn == 0
    assert db.requests.get(load).status == "done"
    assert db.requests.get(add).status == "done" and "as player 1" in db.requests.get(add).result
    assert (
        db.requests.get(add_again).status == "failed"
        and "already has a player" in db.requests.get(add_again).result
    )
    assert db.requests.get(add_bob).status == "done"
    assert logs_in(game, "ann", "pw") == 1
    assert [m.message.subject for m in game.snapshot.board(1)][:1] == ["Welcome"]

    # end_turn names the turn: carried out twice (a crash before the status), one turn ends
    end = queue(db, game_id, "end_turn", {"turn": 1})
    end_again = queue(db, game_id, "end_turn", {"turn": 1})
    result(desk.poll())
    assert game.state.turn == 1
    assert db.requests.get(end).result == "turn 0 of game 'one' ended; turn 1 begins"
    assert "has ended" in db.requests.get(end_again).result and db.requests.get(end_again).status == "done"
    assert directory.find("two").state.turn == 0  # the other game did not move

    # removal: no login, no orders, and the turn no longer waits for the player
    game.finish_turn(1)
    gone = queue(db, game_id, "remove_player", {"username": "bob"})
    unknown = queue(db, game_id, "remove_player", {"username": "nobody"})
    result(desk.poll())
    assert db.requests.get(gone).status == "done" and db.requests.get(unknown).status == "failed"
    assert game.state.turn == 2, "ann had finished: removing bob ends the turn"
    assert logs_in(game, "bob", "pw") is None and game.waiting_for() == [1]
    fleet = next(f.id for f in game.state.fleets.values() if f.owner == 2)
    assert failureResultOf(game.insert_order(2, fleet, -1, 2, 0), Refused).value.message.startswith(
        "You have been removed"
    )

    clock.advance(5)
    result(defer.ensureDeferred(desk.stop()))
    assert db.lease.holder(desk.wallclock()) is None
    result(store.close())

    # restarted: the removal and the new game are still there
    store, desk, directory, clock = start_desk(url, pid=4243)
    assert directory.find("one").removed_players == {2} and directory.find("one").state.turn == 2
    assert sorted(directory.games) == ["one", "two"]
    result(defer.ensureDeferred(desk.stop()))
    result(store.close())


def test_a_second_server_is_refused_while_the_first_lives(url, db):
    db.create_game(setup())
    store, desk, _, _ = start_desk(url, pid=1)
    other = OperatorDesk(server_store(url), None, Clock(), wallclock=WallClock(), host="test-host", pid=2)
    refused = failureResultOf(other.take_lease(), OperationError)
    assert "another server is using this database" in str(refused.value)
    result(defer.ensureDeferred(desk.stop()))
    result(other.take_lease())
    result(store.close())
    result(other.store.close())


def test_a_turn_interrupted_by_a_crash_is_resolved_again_at_start(url, db):
    db.create_game(setup())
    store, desk, directory, clock = start_desk(url)
    game = directory.default
    for name in ("a", "b"):
        result(game.create_account(name, "pw"))
    game.finish_turn(1)
    # the last player finishes; the turn's commit never happens (the process dies)
    hold_turns(store, defer.Deferred)
    game.finish_turn(2)
    assert game.busy and db.load_games()[0].turns == []
    assert db.load_games()[0].finished == {(1, 1), (1, 2)}

    store2, desk2, directory2, _ = restart_after_crash(url)
    again = directory2.default
    assert again.state.turn == 1 and not again.busy, "the interrupted turn was resolved at start"
    stored = db.load_games()[0]
    assert [t.turn for t in stored.turns] == [1] and check_replay(stored) == []
    result(defer.ensureDeferred(desk2.stop()))
    result(store2.close())


def test_the_deadline_survives_a_restart(url, db):
    db.create_game(setup(timer=TimerSettings("basic", turn_length=100)))
    clock = Clock()
    clock.advance(1_000)
    store, desk, directory, _ = start_desk(url, clock=clock)
    game = directory.default
    for name in ("a", "b"):
        result(game.create_account(name, "pw"))
    assert game.timer.seconds_left() == 100
    assert db.load_games()[0].deadline == (1, 1_100)
    clock.advance(60)

    later = Clock()
    later.advance(1_070)  # restarted 10 s after the crash: 30 s left, not 100
    _, _, directory2, _ = restart_after_crash(url, clock=later)
    assert directory2.default.timer.seconds_left() == 30
    later.advance(30)
    assert directory2.default.state.turn == 1

    much_later = Clock()
    much_later.advance(5_000)  # the deadline of turn 2 passed while no server ran
    _, _, directory3, _ = restart_after_crash(url, clock=much_later, pid=4244)
    much_later.advance(0)
    assert directory3.default.state.turn == 2


def test_finished_players_are_remembered_across_a_restart(url, db):
    db.create_game(setup())
    store, desk, directory, clock = start_desk(url)
    game = directory.default
    for name in ("a", "b", "c"):
        result(game.create_account(name, "pw"))
    game.finish_turn(2)
    _, _, directory2, _ = restart_after_crash(url)
    assert directory2.default.waiting_for() == [1, 3]


def test_server_stop_waits_for_a_turn_being_stored():
    reactor = ServerReactor()
    store = JournalStore(reactor.journal)
    config = ServerConfig(listen=("tcp:6923",), game=GameConfig(timer=TimerSettings(turn_length=0)))
    server = result(start_server(config, reactor, store))
    game = server.directory.default
    for name in ("a", "b"):
        result(game.create_account(name, "pw", password_hash=hash_password("pw", n=2**4)))
    pending = defer.Deferred()
    hold_turns(store, lambda: pending)
    game.finish_turn(1)
    game.finish_turn(2)
    stopping = server.stop()
    assert not stopping.called and "close store" not in reactor.journal
    pending.callback(None)
    assert stopping.called and reactor.journal[-1] == "close store" and game.state.turn == 1


# -- the CLI side ---------------------------------------------------------------------------


def test_offline_edits_go_straight_to_the_database(url, db):
    outcome = create_game(db, setup("one"))
    assert "no server is running" in outcome.text and outcome.request is None
    with pytest.raises(OperationError, match="exists"):
        create_game(db, setup("one"))
    assert add_player(db, "one", "ann", "pw").text == "player 'ann' added to game 'one' as player 1"
    assert add_player(db, "one", "bob", "pw").text.endswith("as player 2")
    with pytest.raises(OperationError, match="already has a player named 'ann'"):
        add_player(db, "one", "ann", "other")
    with pytest.raises(OperationError, match="no game named 'nope' \\(games: one\\)"):
        add_player(db, "nope", "x", "pw")
    create_game(db, setup("two"))
    joined = add_player(db, "two", "Ann", "not-her-password")
    assert joined.text == (
        "player 'Ann' added to game 'two' as player 1"
        " (the server's account 'ann', which keeps its own password)"
    )
    assert "removed" in remove_player(db, "one", "bob").text
    with pytest.raises(OperationError, match="no player named"):
        remove_player(db, "one", "carol")
    queued = end_turn(db, "one")
    assert queued.queued and "no server is running" in queued.text

    status = game_status(db, "one")
    assert [(p.name, p.state) for p in status.players] == [("ann", "waiting"), ("bob", "removed")]
    assert status.server is None and status.snapshot.turn == 0
    summary = list_games(db)[0]
    assert (summary.name, summary.players, summary.removed, summary.phase) == ("one", 1, 1, "normal")

    # the next server start: the game as edited, and the queued end of turn carried out
    store, desk, directory, _ = start_desk(url)
    result(desk.poll())
    game = directory.find("one")
    assert logs_in(game, "ann", "pw") == 1 and game.removed_players == {2}
    assert logs_in(directory.find("two"), "ann", "pw") == 1
    assert logs_in(directory.find("two"), "ann", "not-her-password") is None
    assert [m.message.subject for m in game.snapshot.board(1)][0] == "Welcome"
    assert game.state.turn == 1
    assert db.requests.get(queued.request).status == "done"
    result(defer.ensureDeferred(desk.stop()))


def test_with_a_server_running_edits_are_requests(url, db, monkeypatch):
    create_game(db, setup("one"))
    store, desk, directory, clock = start_desk(url, wallclock=time.time)
    # the CLI waits for the answer: here the "server" answers during the CLI's wait
    import server.operating.on_database as operations

    def wait_and_poll(database, request_id, timeout, wallclock, poll=0.1):
        result(desk.poll())
        return database.requests.get(request_id)

    monkeypatch.setattr(operations, "wait_for", wait_and_poll)
    created = create_game(db, setup("two"))
    assert created.request is not None and "loaded at turn 0" in created.text
    assert directory.find("two") is not None
    assert add_player(db, "two", "ann", "pw").text.endswith("as player 1")
    assert logs_in(directory.find("two"), "ann", "pw") == 1
    assert "ended" in end_turn(db, "two").text and directory.find("two").state.turn == 1
    with pytest.raises(OperationError, match="no player named"):
        remove_player(db, "two", "zed")
    assert game_status(db, "two").server is not None
    result(defer.ensureDeferred(desk.stop()))


def test_open_database_errors(tmp_path, url):
    if url.startswith("sqlite"):
        with pytest.raises(OperationError, match="no such file"):
            open_database(url)
    else:
        with pytest.raises(OperationError, match="no schema"):
            open_database(url)
    open_database(url, create=True).close()
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("UPDATE alembic_version SET version_num = '0001'"))
    finally:
        engine.dispose()
    with pytest.raises(OperationError, match="upgrade-db"):
        open_database(url)
    with pytest.raises(OperationError, match="not a database URL"):
        open_database("::nonsense::")


# -- replays ----------------------------------------------------------------------------------


def test_a_replay_equals_the_stored_game_and_notices_tampering(db):
    game_id = db.create_game(setup(seed=11))
    game = Game(game_id, setup(seed=11), Game.initial_state(setup(seed=11)), db, Clock())
    for name in ("a", "b", "c"):
        result(game.create_account(name, "pw"))
    drive_game(game, 6)
    stored = db.load_games()[0]
    assert check_replay(stored) == []
    state, turns = replay(stored)
    assert state == game.state and len(turns) == game.state.turn

    entry = next(e for e in stored.orders if e.turn == 2 and e.seq not in stored.removed_orders)
    stored.removed_orders.add(entry.seq)  # as if an acknowledged order had been lost
    assert check_replay(stored)
    stored.removed_orders.discard(entry.seq)
    stored.orders.append(OrderEntry(10_000, len(stored.turns) + 5, 1, 1, 0, 2, 0))
    assert "orders for turns not yet open" in check_replay(stored)[-1]
    assert game.state.phase is not Phase.OVER
