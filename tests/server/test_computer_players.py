"""Computer players (`Game.add_computer_player`, `server.model.attendance.Presence.COMPUTER`): a
seat the computer plays from the start, every turn, at its own level, with the stand-in's
machinery; turns do not wait for it, nobody logs in to it, everyone reads it as a computer seat,
and it is stored like any seat."""

from __future__ import annotations

import pytest
from twisted.internet.task import Clock

from ruleset.ai import Level, ai_rng, decide
from ruleset.seat import seat_view
from server.game.directory import GameDirectory
from server.game.game import Game
from server.model.attendance import Attendance, Presence, computer_seat
from server.model.refusals import ACCOUNT_EXISTS, BAD_LOGIN, Refused
from server.model.stand_in import StandInSettings
from server.model.timer_settings import TimerSettings
from tests.support.deferreds import failureResultOf, successResultOf
from tests.support.games import new_game

from .test_stand_in_level import Recording

result = successResultOf
TURN = 60


def two_people_two_computers(clock: Clock, stand_in: Recording) -> Game:
    _, game = new_game(clock=clock, seed=17, timer=TimerSettings(turn_length=TURN))
    GameDirectory(stand_in=stand_in).add(game)
    result(game.create_account("ann", "secret"))
    assert result(game.add_computer_player(Level.EASY)) == 2
    result(game.create_account("bob", "secret"))
    assert result(game.add_computer_player(Level.NORMAL, "hal")) == 4
    return game


def test_computer_seats_play_every_turn_at_their_level_and_turns_do_not_wait_for_them():
    clock = Clock()
    stand_in = Recording(StandInSettings(Level.HARD))  # the stand-in's level is not theirs
    game = two_people_two_computers(clock, stand_in)
    assert game.snapshot.stand_ins() == {2, 4}
    assert game.snapshot.acting_players() == (1, 3)  # the turn waits for the people only
    for _ in range(3):
        state = game.state
        expected = [
            decide(seat_view(state, player, ()), level, ai_rng(17, state.turn + 1, player))
            for player, level in ((2, Level.EASY), (4, Level.NORMAL))
        ]
        stand_in.given.clear()
        game.finish_turn(1)
        game.finish_turn(3)  # both people finished: the turn ends at once, no deadline needed
        assert game.state.turn == state.turn + 1
        assert stand_in.given == expected and all(expected)
    # a computer seat is never marked absent nor taken back
    assert game.snapshot.attendance[2] == computer_seat(2, Level.EASY)


def test_a_computer_seat_is_named_and_labelled_as_one_and_nobody_logs_in_to_it():
    clock = Clock()
    game = two_people_two_computers(clock, Recording(StandInSettings()))
    assert game.snapshot.usernames[2] == "computer-easy"
    assert result(game.add_computer_player(Level.EASY)) == 5
    assert game.snapshot.usernames[5] == "computer-easy-2"
    labels = [game.snapshot.seat_label(p) for p in (1, 2, 4)]
    assert labels == ["playing", "computer (easy)", "computer (normal)"]
    for name in ("computer-easy", "hal"):
        assert failureResultOf(game.authenticate(name, ""), Refused).value.problem is BAD_LOGIN
    taken = failureResultOf(game.add_computer_player(Level.HARD, "ann"), Refused).value
    assert taken.problem is ACCOUNT_EXISTS


def test_a_computer_seat_survives_a_restart_on_the_memory_store():
    clock = Clock()
    store, game = new_game(clock=clock, seed=5, timer=TimerSettings(turn_length=TURN))
    result(game.create_account("ann", "secret"))
    result(game.add_computer_player(Level.HARD))
    game.close()
    again = Game.restore(store.load_games()[0], store, clock)
    assert again.snapshot.attendance[2] == computer_seat(2, Level.HARD)
    assert again.snapshot.seat_label(2) == "computer (hard)"


@pytest.mark.parametrize(
    "seat",
    [Attendance(1), Attendance(2, Presence.ABSENT, 3), computer_seat(3, Level.NORMAL)],
)
def test_the_presence_column_keeps_a_computer_players_level(seat):
    assert Attendance.stored(seat.player, seat.stored_presence, seat.missed, seat.until) == seat
    assert len(seat.stored_presence) <= 16  # the column's width


def test_a_computer_seat_survives_a_restart_on_the_database(database_url):
    from server.database import SyncDatabase
    from server.model.store import GameSetup

    db = SyncDatabase(database_url)
    db.upgrade()
    try:
        clock = Clock()
        setup = GameSetup("against-the-computer", seed=3, timer=TimerSettings(turn_length=TURN))
        game_id = db.create_game(setup)
        game = Game(game_id, setup, setup.initial_state(), db, clock)
        result(game.create_account("ann", "secret"))
        result(game.add_computer_player(Level.HARD))
        game.close()
        stored = db.load_games([game_id])[0]
        again = Game.restore(stored, db, clock)
        assert again.snapshot.attendance[2] == computer_seat(2, Level.HARD)
        assert again.accounts["computer-hard"].player_id == 2
    finally:
        db.close()


def test_the_operator_adds_computer_players_with_or_without_a_server(database_url, monkeypatch):
    """`tae-server add-computer GAME [--level LEVEL] [--name NAME]`: on the stored game when no
    server runs, else through the running server's request desk; `status` shows the seat."""
    import time

    from twisted.internet import defer

    import server.operating.on_database as operations
    from server.database import SyncDatabase, upgrade
    from server.operating.game_actions import OperationError
    from tests.support.operator import operate

    from .test_operations import setup, start_desk

    upgrade(database_url)
    db = SyncDatabase(database_url)
    try:
        operations.create_game(db, setup("one"), wallclock=time.time)
        added = operate(db, "add-computer", "one", wallclock=time.time, level="hard")
        assert added.text == "computer player 'computer-hard' (hard) added to game 'one' as player 1"
        with pytest.raises(OperationError, match="the level must be one of easy, normal, hard"):
            operate(db, "add-computer", "one", wallclock=time.time, level="expert")
        status = operations.game_status(db, "one", wallclock=time.time)
        assert [(p.name, p.seat) for p in status.players] == [("computer-hard", "computer (hard)")]

        store, desk, directory, _ = start_desk(database_url, wallclock=time.time)

        def wait_and_poll(database, request_id, timeout, wallclock, poll=0.1):
            result(desk.poll())
            return database.requests.get(request_id)

        monkeypatch.setattr(operations, "wait_for", wait_and_poll)
        named = operate(db, "add-computer", "one", wallclock=time.time, username="deep-thought")
        assert named.text.endswith("'deep-thought' (normal) added to game 'one' as player 2")
        game = directory.find("one")
        assert game.snapshot.seat_label(1) == "computer (hard)"
        assert game.snapshot.stand_ins() == {1, 2}
        with pytest.raises(OperationError, match="already has a player named|is taken|exists"):
            operate(db, "add-computer", "one", wallclock=time.time, username="deep-thought")
        result(defer.ensureDeferred(desk.stop()))
    finally:
        db.close()
