"""tae-server pause / resume / extend / set / reinstate (server.operating.on_database.control): carried out
by a running server's desk and, without a server, in the database; what survives a restart
(revision 0004t); what players are told. On SQLite always, on PostgreSQL when
TAE_TEST_DATABASE_URL is set."""

from __future__ import annotations

import time

import pytest
from twisted.internet import defer
from twisted.internet.task import Clock

from server.game.passwords import hash_password
from server.model.timer_settings import TimerSettings
from server.operating import on_database as operations
from server.operating.arguments import ArgumentRefused, Duration
from server.operating.game_actions import OperationError
from server.views.operator_status import status_document
from tests.support.games import logs_in
from tests.support.operator import operate

from .test_database import result
from .test_operations import WallClock, db, queue, restart_after_crash, setup, start_desk, url  # noqa: F401

pytestmark = pytest.mark.timeout(60)


def add(database, game_id, name):
    request = queue(
        database, game_id, "add_player", {"username": name, "password_hash": hash_password("pw", n=16)}
    )
    return request


def notices(game, player=1):
    return [m.message.body for m in game.snapshot.board(player) if m.message.subject == "Game settings"]


def test_a_running_server_pauses_extends_resumes_and_sets(url, db):  # noqa: F811
    game_id = db.create_game(setup("one", timer=TimerSettings("basic", turn_length=100)))
    clock = Clock()
    clock.advance(1_000)
    store, desk, directory, _ = start_desk(url, clock=clock)
    game = directory.find("one")
    add(db, game_id, "ann"), add(db, game_id, "bob")
    result(desk.poll())
    pushed = []
    game.subscribe(lambda s: s.announcement and pushed.append(s.announcement.seconds))
    clock.advance(40)

    pause = queue(db, game_id, "pause")
    result(desk.poll())
    assert db.requests.get(pause).result == "game 'one' paused (60 s left in turn 0); players were told"
    assert pushed[-1] == -1 and game.paused
    clock.advance(10_000)
    assert game.state.turn == 0, "the deadline stopped"

    extend = queue(db, game_id, "extend", {"seconds": 3600})
    result(desk.poll())
    assert db.requests.get(extend).status == "done" and game.snapshot.paused_left == 3660
    resume = queue(db, game_id, "resume")
    result(desk.poll())
    assert (
        db.requests.get(resume).result == "game 'one' resumed (turn 0 ends in 1 h 1 min); players were told"
    )
    assert pushed[-1] == 3660 and game.timer.seconds_left() == 3660
    assert len(notices(game, 1)) == 3 and len(notices(game, 2)) == 3
    assert "paused the game during turn 0" in notices(game)[0] and "1 h 1 min" in notices(game)[-1]

    bad = queue(db, game_id, "set", {"key": "max_players", "value": "1"})
    good = queue(db, game_id, "set", {"key": "turn_length", "value": "2h"})
    result(desk.poll())
    assert db.requests.get(bad).status == "failed" and "has 2 players already" in db.requests.get(bad).result
    assert db.requests.get(good).status == "done"
    assert game.setup.timer.turn_length == 7200 and game.timer.seconds_left() == 7200

    # a stop and a crash later, the pause and the settings are still there
    pause = queue(db, game_id, "pause")
    result(desk.poll())
    clock.advance(3)
    later = Clock()
    later.advance(50_000)
    _, desk2, directory2, _ = restart_after_crash(url, clock=later)
    again = directory2.find("one")
    assert again.paused and again.snapshot.paused_left == pytest.approx(7200, abs=1)
    assert again.setup.timer.turn_length == 7200
    assert notices(again) == notices(game), "the boards come back in the order they were posted"
    assert [m.index for m in again.snapshot.board(1)] == [m.index for m in game.snapshot.board(1)]
    status = operations.game_status(db, "one", wallclock=time.time)
    assert status.snapshot.paused and status.snapshot.paused_left == pytest.approx(7200, abs=1)
    result(defer.ensureDeferred(desk2.stop()))


def test_without_a_server_the_controls_change_the_database(url, db):  # noqa: F811
    wall = WallClock(1_800_000_000.0)
    db.create_game(setup("g", timer=TimerSettings("basic", turn_length=600)))
    for name in ("ann", "bob"):
        operate(db, "add-player", "g", name, "password", wallclock=wall)
    # the server set a deadline before it stopped
    game_id = db.load_games()[0].game_id
    db.set_deadline(game_id, 1, wall.now + 600)

    def control(kind, *words):
        return operate(db, kind, "g", *words, wallclock=wall).text

    assert control("pause") == "game 'g' paused (10 min left in turn 0); players were told"
    assert control("pause") == "game 'g' is paused already"
    assert control("extend", "1h").startswith("turn 0 of game 'g' extended by 1 h")
    wall.now += 5_000
    assert control("resume") == "game 'g' resumed (turn 0 ends in 1 h 10 min); players were told"
    assert db.load_games()[0].deadline == (1, wall.now + 4200)
    with pytest.raises(OperationError, match="no setting 'colour'"):
        control("set", "colour", "red")
    with pytest.raises(OperationError, match="calendar timer needs a schedule"):
        control("set", "timer", "calendar")
    assert "turns end Mon,Wed,Fri 20:00 (UTC)" in control("set", "schedule", "mon,wed,fri 20:00")
    control("set", "timer", "calendar")
    control("set", "time_zone", "Europe/Berlin")
    stored = db.load_games()[0]
    assert (stored.setup.timer.kind, stored.setup.timer.time_zone) == ("calendar", "Europe/Berlin")
    listing = operations.list_games(db)[0]
    assert listing.timer_brief == "calendar Mon,Wed,Fri 20:00 (Europe/Berlin)"

    operate(db, "remove-player", "g", "bob", wallclock=wall)
    status = operations.game_status(db, "g", wallclock=wall)
    assert [p.state for p in status.players] == ["waiting", "removed"]
    assert control("reinstate", "bob") == "player 'bob' (player 2) reinstated in game 'g'"
    assert control("reinstate", "bob").endswith("was not removed")
    with pytest.raises(OperationError, match="has no player named 'carl'"):
        control("reinstate", "carl")

    # the server that starts now has it all, and bob logs in again
    clock = Clock()
    clock.advance(wall.now)
    _, desk, directory, _ = start_desk(url, clock=clock, wallclock=WallClock(wall.now))
    game = directory.find("g")
    assert game.setup.timer.kind == "calendar" and not game.paused and game.removed_players == set()
    assert logs_in(game, "bob", "password") == 2
    assert len(notices(game, 2)) == len(notices(game, 1)) == 8  # the removal and reinstatement too
    result(defer.ensureDeferred(desk.stop()))


def test_a_removed_player_hears_why_the_login_fails_and_can_be_reinstated():
    from server.game.game import Game
    from server.model.memory_store import MemoryStore
    from server.model.refusals import REMOVED_LOGIN, Refused
    from server.model.store import GameSetup
    from tests.support.deferreds import failureResultOf

    store = MemoryStore()
    game_setup = GameSetup("tae", timer=TimerSettings(turn_length=0))
    game = Game(store.create_game(game_setup), game_setup, Game.initial_state(game_setup), store, Clock())
    for name in ("ann", "bob"):
        result(game.create_account(name, "password"))
    result(game.remove_player("bob"))
    refused = failureResultOf(game.authenticate("bob", "password"), Refused).value
    assert refused.problem == REMOVED_LOGIN and int(refused.problem.code) == 5  # Permission Denied
    assert "removed from the game by its operator" in refused.message
    assert result(game.reinstate_player("bob")) == (2, True)
    assert result(game.authenticate("bob", "password")) == 2
    assert game.waiting_for() == [1, 2]


@pytest.mark.parametrize(
    ("text", "seconds"), [("90m", 5400), ("2h", 7200), ("1d", 86400), ("1h30m", 5400), ("45", 45)]
)
def test_durations(text, seconds):
    assert Duration("turn_length").parse(text) == seconds


@pytest.mark.parametrize("text", ["", "soon", "2 weeks", "1x", "-5m", "400d"])
def test_bad_durations_are_one_line(text):
    with pytest.raises(ArgumentRefused) as caught:
        Duration("turn_length").parse(text)
    assert "\n" not in str(caught.value)


def test_the_command_line_refuses_a_bad_duration_as_a_usage_error(capsys):
    from server.cli import main

    with pytest.raises(SystemExit) as done:
        main(["extend", "g", "soon", "--database", "sqlite://"])
    assert done.value.code == 2
    assert (
        "the extension must be a duration like 90m, 2h, 1d, 1h30m or 3600, not 'soon'"
        in capsys.readouterr().err
    )


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["extend", "g", "-1h"], 2, "the extension must be longer than 0 s, not '-1h'"),
        (["extend", "g", "--wait", "1", "-90m"], 2, "the extension must be longer than 0 s"),
        (["set", "g", "turn_length", "-5"], 2, "turn_length cannot be negative, not '-5'"),
        (["set", "g", "max_players", "-1"], 2, "max_players cannot be negative"),
        (["set", "g", "--wait", "2", "turn_length", "-1h"], 2, "turn_length cannot be negative"),
        (["set", "g", "-5", "turn_length"], 2, "no setting '-5'"),  # the arguments keep their order
        (["extend", "g", "1h", "--wait", "-3"], 2, "'--wait': -3.0 is not in the range"),
    ],
)
def test_a_negative_value_gets_its_own_message_not_no_such_option(capsys, tmp_path, args, code, message):
    from server.cli import main

    database = f"sqlite:///{tmp_path / 'tae.db'}"
    main(["create-game", "g", "--seed", "1", "--database", database])
    capsys.readouterr()
    with pytest.raises(SystemExit) as done:
        main([*args, "--database", database])
    err = capsys.readouterr().err
    assert done.value.code == code, err
    assert message in err and "No such option" not in err and len(err.splitlines()) == 1


def test_a_timer_change_to_no_deadline_clears_the_stored_one_and_status_agrees(url, db):  # noqa: F811
    wall = WallClock(1_800_000_000.0)
    db.create_game(setup("autumn", timer=TimerSettings("basic", turn_length=86400)))
    for name in ("ann", "bob"):
        operate(db, "add-player", "autumn", name, "password", wallclock=wall)
    game_id = db.load_games()[0].game_id
    db.set_deadline(game_id, 1, wall.now + 104_219)
    assert operations.game_status(db, "autumn", wallclock=wall).deadline == wall.now + 104_219
    text = operate(db, "set", "autumn", "timer", "threshold", wallclock=wall).text
    assert "no deadline" in text
    assert db.load_games()[0].deadline is None
    status = operations.game_status(db, "autumn", wallclock=wall)
    assert status.deadline is None and status_document(status)["seconds_left"] == -1


def test_a_basic_timer_says_that_turn_length_0_means_60_s(url, db):  # noqa: F811
    wall = WallClock()
    db.create_game(setup("g9", timer=TimerSettings("basic", turn_length=0)))
    zero = "basic turns last 60 s when turn_length is 0"
    assert TimerSettings("basic", turn_length=0).describe() == f"basic, 60 s turns ({zero})"
    assert TimerSettings("basic", turn_length=90).describe() == "basic, 90 s turns"
    assert operations.list_games(db)[0].timer_description.endswith(f"({zero})")

    def set_it(key, value):
        return operate(db, "set", "g9", key, value, wallclock=wall).text

    set_it("turn_length", "5m")
    assert f"turn_length is now 0: {zero}" in set_it("turn_length", "0")
    set_it("timer", "playersfinished")
    assert f"the timer is now basic ({zero})" in set_it("timer", "basic")


def test_a_stored_request_out_of_bounds_is_refused_by_the_desk_in_the_same_words(url, db):  # noqa: F811
    """A request queued by an older version (its admin `extend` took any u32) meets the table's
    bounds when the running server carries it out; the game keeps its deadline."""
    game_id = db.create_game(setup("one", timer=TimerSettings("basic", turn_length=100)))
    _, desk, directory, _ = start_desk(url)
    add(db, game_id, "ann"), add(db, game_id, "bob")
    result(desk.poll())
    game = directory.find("one")
    deadline = game.timer.deadline
    wrapped = queue(db, game_id, "extend", {"seconds": 2**32 - 5})
    negative = queue(db, game_id, "extend", {"seconds": -5})
    bad_value = queue(db, game_id, "set", {"key": "turn_length", "value": "4294967291"})
    result(desk.poll())
    assert (db.requests.get(wrapped).status, db.requests.get(wrapped).result) == (
        "failed",
        "the extension must be at most a year (366 d), not '4294967291'",
    )
    assert db.requests.get(negative).result == "the extension must be longer than 0 s, not '-5'"
    assert db.requests.get(bad_value).result == "turn_length must be at most a year (366 d), not '4294967291'"
    assert game.timer.deadline == deadline
    result(defer.ensureDeferred(desk.stop()))


def test_ending_a_turn_is_told_to_every_player_like_every_other_operator_change(url, db):  # noqa: F811
    game_id = db.create_game(setup("told", timer=TimerSettings("basic", turn_length=600)))
    clock = Clock()
    clock.advance(1_000)
    store, desk, directory, _ = start_desk(url, clock=clock)
    game = directory.find("told")
    add(db, game_id, "ann"), add(db, game_id, "bob")
    result(desk.poll())
    end = queue(db, game_id, "end_turn", {"open_turn": 0})
    result(desk.poll())
    assert db.requests.get(end).status == "done" and game.state.turn == 1
    for player in (1, 2):
        (told,) = notices(game, player)
        assert told.startswith("The operator ended turn 0 now")
    later = Clock()
    later.advance(5_000)
    _, _, directory2, _ = restart_after_crash(url, clock=later)
    assert notices(directory2.find("told")) == [told]  # stored: a restart shows it too
