"""Absent players, vacations and resigning (`server.model.attendance`, `server.game.game.Game`), over a
memory store and the SQLite/PostgreSQL stores, on a task.Clock."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from twisted.internet.task import Clock

from ruleset import Order, Phase, check_order
from server.game.game import Game
from server.model.attendance import DAY_S, Attendance, Presence, after_turn
from server.model.memory_store import MemoryStore
from server.model.refusals import (
    GAME_ENDED,
    NO_VACATIONS,
    NOT_AWAY,
    NOT_ON_VACATION,
    REMOVED,
    RESIGNED,
    Refused,
)
from server.model.timer_settings import TimerSettings
from server.views.board import absence_notices
from tests.support.deferreds import failureResultOf, successResultOf
from tests.support.games import legal_orders, new_game
from tests.support.json_schemas import json_answer

result = successResultOf
TURN = 60


def refusal(d) -> Refused:
    return failureResultOf(d, Refused).value


def four_players(clock: Clock, **setup) -> tuple[MemoryStore, Game]:
    setup.setdefault("timer", TimerSettings(turn_length=TURN))
    store, game = new_game(clock=clock, seed=17, **setup)
    for name in ("ann", "bob", "cy", "di"):
        result(game.create_account(name, "secret"))
    return store, game


def everyone_but(game: Game, away: int) -> None:
    """Every acting player except `away` finishes the turn."""
    for player in game.snapshot.acting_players():
        if player != away:
            game.finish_turn(player)


def play_turn_without(game: Game, clock: Clock, away: int) -> None:
    turn = game.state.turn
    everyone_but(game, away)
    if game.state.turn == turn:  # the turn waits for `away`: its deadline ends it
        clock.advance(TURN)
    assert game.state.turn == turn + 1


# -- the bookkeeping ---------------------------------------------------------------------------


def test_missed_turns_count_in_a_row_and_mark_absent_at_the_setting():
    table: dict[int, Attendance] = {}
    first = after_turn(table, [1, 2], acted={1}, absent_after=2)
    assert first.changed == (Attendance(2, missed=1),) and first.became_absent == ()
    table = {a.player: a for a in first.changed}
    second = after_turn(table, [1, 2], acted={1}, absent_after=2)
    assert second.changed == (Attendance(2, Presence.ABSENT, 2),) and second.became_absent == (2,)
    # acting again resets the count; 0 never marks anyone absent
    assert after_turn({2: Attendance(2, missed=1)}, [2], acted={2}, absent_after=2).changed == (
        Attendance(2),
    )
    never = after_turn({2: Attendance(2, missed=9)}, [2], acted=set(), absent_after=0)
    assert never.changed == (Attendance(2, missed=10),) and never.became_absent == ()


# -- absent players ------------------------------------------------------------------------------


def test_a_player_who_misses_turns_is_played_by_the_stand_in_until_they_say_they_are_back():
    clock = Clock()
    store, game = four_players(clock)
    play_turn_without(game, clock, 3)
    assert game.snapshot.presence(3) is Presence.PLAYING and game.attendance(3).missed == 1
    play_turn_without(game, clock, 3)
    assert game.snapshot.presence(3) is Presence.ABSENT
    assert game.snapshot.seat_label(3) == "absent"
    # everyone is told, on every board, once
    for player in (1, 2, 3, 4):
        subjects = [m.message.subject for m in game.snapshot.board(player)]
        assert subjects.count(absence_notices.ABSENT) == 1
    # the turn no longer waits for them: the others finishing ends it, and the stand-in's
    # orders for their seat are in the order log like anyone's, each accepted by the ruleset
    assert 3 not in game.snapshot.acting_players()
    turn = game.state.turn
    state = game.state
    logged = len(store.games[game.id].orders)
    everyone_but(game, 3)
    assert game.state.turn == turn + 1
    theirs = [e for e in store.games[game.id].orders[logged:] if e.player == 3]
    assert theirs and all(e.turn == turn + 1 for e in theirs)
    accepted: list = []
    for entry in theirs:
        order = Order(entry.player, entry.object_id, entry.type, entry.target)
        assert check_order(state, order, accepted) is None
        accepted.append(order)
    # logging in is reading: the seat stays with the stand-in, and nobody is told
    assert result(game.authenticate("cy", "secret")) == 3
    assert game.snapshot.presence(3) is Presence.ABSENT
    # "I am back" takes it back; everyone is told, once
    assert result(game.come_back(3)).presence is Presence.PLAYING
    assert game.snapshot.presence(3) is Presence.PLAYING
    assert 3 in game.snapshot.acting_players()
    for player in (1, 2, 3, 4):
        subjects = [m.message.subject for m in game.snapshot.board(player)]
        assert subjects[-1] == absence_notices.BACK and subjects.count(absence_notices.BACK) == 1
    assert game.attendance(3).missed == 0
    # saying it again changes nothing and tells nobody
    assert refusal(game.come_back(3)).problem == NOT_AWAY
    assert [m.message.subject for m in game.snapshot.board(1)].count(absence_notices.BACK) == 1


def test_an_absent_player_who_finishes_a_turn_plays_again():
    clock = Clock()
    _, game = four_players(clock, absent_after_missed_turns=1)
    play_turn_without(game, clock, 2)
    assert game.snapshot.presence(2) is Presence.ABSENT
    result(game.finish_turn(2))
    assert game.snapshot.presence(2) is Presence.PLAYING
    assert 2 in game.snapshot.finished
    assert [m.message.subject for m in game.snapshot.board(3)].count(absence_notices.BACK) == 1


def test_an_absent_player_who_gives_an_order_plays_again_and_everyone_is_told_once():
    clock = Clock()
    _, game = four_players(clock, absent_after_missed_turns=1)
    play_turn_without(game, clock, 2)
    assert game.snapshot.presence(2) is Presence.ABSENT
    first, second = legal_orders(game, 2)[:2]
    result(game.insert_order(2, first[0], -1, first[1], first[2]))
    assert game.snapshot.presence(2) is Presence.PLAYING
    # a second order: the seat is theirs already
    result(game.insert_order(2, second[0], -1, second[1], second[2]))
    for player in (1, 2, 3, 4):
        assert [m.message.subject for m in game.snapshot.board(player)].count(absence_notices.BACK) == 1


def test_a_refused_order_leaves_the_seat_with_the_stand_in():
    clock = Clock()
    _, game = four_players(clock, absent_after_missed_turns=1)
    play_turn_without(game, clock, 2)
    fleet = next(iter(game.state.fleets_of(2))).id
    failureResultOf(game.insert_order(2, fleet, 7, 99, -5), Refused)
    assert game.snapshot.presence(2) is Presence.ABSENT


def test_saying_back_is_refused_for_a_removed_player_and_after_the_game():
    clock = Clock()
    _, game = four_players(clock, absent_after_missed_turns=1)
    play_turn_without(game, clock, 2)
    result(game.remove_player("bob"))
    assert refusal(game.come_back(2)).problem == REMOVED
    # cy stops playing, ann resigns, di plays on alone to the end of the game
    result(game.resign(1))
    for _ in range(300):
        if game.snapshot.over:
            break
        turn = game.state.turn
        everyone_but(game, 3)
        if game.state.turn == turn:
            clock.advance(TURN)
    assert game.snapshot.over and game.snapshot.presence(3) is Presence.ABSENT
    assert refusal(game.come_back(3)).problem == GAME_ENDED
    assert game.snapshot.presence(3) is Presence.ABSENT


STEPS = ("read", "back", "order", "finish", "miss")


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(STEPS), max_size=10))
def test_only_playing_takes_a_seat_back_and_everyone_is_told_each_time_it_changes_hands(steps):
    """Whatever cy does in whatever order, logging in never moves her seat; an order, a finish
    or "back" that the game takes brings an absent cy back; and every board holds exactly one
    "is back" per time the seat went from the stand-in back to her."""
    clock = Clock()
    _, game = four_players(clock, absent_after_missed_turns=1)
    came_back = 0
    for step in steps:
        before = game.snapshot.presence(3)
        taken = True
        if step == "read":
            result(game.authenticate("cy", "secret"))
        elif step == "miss":
            play_turn_without(game, clock, 3)
        else:
            if step == "back":
                d = game.come_back(3)
            elif step == "finish":
                d = game.finish_turn(3)
            else:
                orders = legal_orders(game, 3)
                if not orders:
                    continue
                fleet, order_type, target = orders[0]
                d = game.insert_order(3, fleet, -1, order_type, target)
            outcome: list = []
            d.addBoth(outcome.append)
            taken = not (outcome and hasattr(outcome[0], "check") and outcome[0].check(Refused))
        after = game.snapshot.presence(3)
        if step == "read" or not taken:
            assert after is before, step
        elif step != "miss" and before is Presence.ABSENT:
            assert after is Presence.PLAYING, step
        came_back += before is Presence.ABSENT and after is Presence.PLAYING
        for player in (1, 2, 3, 4):
            subjects = [m.message.subject for m in game.snapshot.board(player)]
            assert subjects.count(absence_notices.BACK) == came_back, (steps, player)


def test_absent_after_zero_never_marks_anyone():
    clock = Clock()
    _, game = four_players(clock, absent_after_missed_turns=0)
    for _ in range(3):
        play_turn_without(game, clock, 4)
    assert game.snapshot.presence(4) is Presence.PLAYING and game.attendance(4).missed == 3


def test_a_turn_only_stand_ins_act_in_ends_at_once_while_others_play():
    clock = Clock()
    _, game = four_players(clock)
    for player in (1, 2, 3):
        result(game.resign(player))
    only_stand_ins = 0
    for _ in range(200):
        if game.snapshot.over:
            break
        turn = game.state.turn
        acting = game.snapshot.acting_players()
        if acting:
            for player in acting:
                game.finish_turn(player)
        else:  # a combat between resigned seats: nothing for player 4 to do, no waiting
            only_stand_ins += 1
            clock.advance(0)
        assert game.state.turn == turn + 1
    assert game.snapshot.over and only_stand_ins > 0


def test_a_game_nobody_plays_goes_on_at_its_deadline_only():
    clock = Clock()
    _, game = four_players(clock)
    for player in (1, 2, 3, 4):
        result(game.resign(player))
    turn = game.state.turn
    clock.advance(0)
    assert game.state.turn == turn
    clock.advance(TURN)
    assert game.state.turn == turn + 1


# -- vacations and resigning -------------------------------------------------------------------


def test_a_vacation_lets_the_stand_in_play_until_its_end_date():
    clock = Clock()
    clock.advance(1_000_000)
    store, game = four_players(clock, timer=TimerSettings(turn_length=0))
    attendance = result(game.start_vacation(2, 3))
    assert attendance.presence is Presence.VACATION and attendance.until == clock.seconds() + 3 * DAY_S
    assert game.snapshot.seat_label(2) == "on vacation"
    assert [m.message.subject for m in game.snapshot.board(4)][-1] == absence_notices.VACATION
    # the others finish: the turn ends, the stand-in played seat 2
    turn = game.state.turn
    everyone_but(game, 2)
    assert game.state.turn == turn + 1
    assert any(e.player == 2 for e in store.games[game.id].orders)
    # missed turns are not counted while on vacation
    assert game.attendance(2).missed == 0
    clock.advance(3 * DAY_S)
    assert game.snapshot.presence(2) is Presence.PLAYING
    assert [m.message.subject for m in game.snapshot.board(1)][-1] == absence_notices.BACK


def test_a_vacation_can_be_cancelled_and_has_limits():
    clock = Clock()
    _, game = four_players(clock, vacation_days_max=5)
    assert refusal(game.start_vacation(1, 6)).message == "A vacation lasts 1 to 5 whole days."
    assert refusal(game.start_vacation(1, 0)).code == 1
    assert refusal(game.end_vacation(1)).problem == NOT_ON_VACATION
    result(game.start_vacation(1, 5))
    result(game.start_vacation(1, 2))  # a new end date, no second notice
    subjects = [m.message.subject for m in game.snapshot.board(1)]
    assert subjects.count(absence_notices.VACATION) == 1
    assert result(game.end_vacation(1)).presence is Presence.PLAYING
    # logging in does not end a vacation; saying "I am back" does, as ending it would
    result(game.start_vacation(1, 1))
    result(game.authenticate("ann", "secret"))
    assert game.snapshot.presence(1) is Presence.VACATION
    assert result(game.come_back(1)).presence is Presence.PLAYING
    assert [m.message.subject for m in game.snapshot.board(2)][-1] == absence_notices.BACK
    assert refusal(game.come_back(1)).problem == NOT_AWAY
    _, closed = four_players(Clock(), vacation_days_max=0)
    assert refusal(closed.start_vacation(1, 1)).problem == NO_VACATIONS


def test_resigning_is_for_good():
    clock = Clock()
    _, game = four_players(clock)
    assert result(game.resign(4)).presence is Presence.RESIGNED
    assert result(game.resign(4)).presence is Presence.RESIGNED  # twice is no error
    assert [m.message.subject for m in game.snapshot.board(2)].count(absence_notices.RESIGNED) == 1
    assert result(game.authenticate("di", "secret")) == 4  # they still read their game
    assert refusal(game.start_vacation(4, 1)).problem == RESIGNED
    assert refusal(game.finish_turn(4)).problem == RESIGNED
    assert refusal(game.come_back(4)).problem == RESIGNED
    assert game.snapshot.presence(4) is Presence.RESIGNED
    assert game.snapshot.seat_label(4) == "resigned" and 4 not in game.snapshot.acting_players()


def test_the_others_all_finished_when_a_player_leaves_ends_the_turn():
    clock = Clock()
    _, game = four_players(clock, timer=TimerSettings(turn_length=0))
    turn = game.state.turn
    everyone_but(game, 1)
    assert game.state.turn == turn
    result(game.start_vacation(1, 1))
    assert game.state.turn == turn + 1


# -- stored -------------------------------------------------------------------------------------


def test_attendance_and_notices_survive_a_restart_on_the_memory_store():
    clock = Clock()
    store, game = four_players(clock, absent_after_missed_turns=1)
    play_turn_without(game, clock, 3)
    result(game.start_vacation(1, 2))
    game.close()
    again = Game.restore(store.load_games()[0], store, clock)
    assert again.snapshot.attendance == game.snapshot.attendance
    assert again.snapshot.boards == game.snapshot.boards


@pytest.fixture
def db_store(database_url):
    from server.database import SyncDatabase

    db = SyncDatabase(database_url)
    db.upgrade()
    yield db
    db.close()


def test_attendance_survives_a_restart_on_the_database(db_store):
    from server.model.store import GameSetup

    clock = Clock()
    clock.advance(5_000_000)
    setup = GameSetup(
        "absence",
        seed=3,
        timer=TimerSettings(turn_length=TURN),
        absent_after_missed_turns=1,
        vacation_days_max=9,
    )
    game_id = db_store.create_game(setup)
    game = Game(game_id, setup, setup.initial_state(), db_store, clock)
    for name in ("ann", "bob", "cy", "di"):
        result(game.create_account(name, "secret"))
    play_turn_without(game, clock, 2)  # 2 is absent (one missed turn)
    result(game.start_vacation(3, 4))
    result(game.resign(4))
    play_turn_without(game, clock, 2)  # the stand-in plays 2, 3 and 4
    game.close()  # the server stops
    stored = db_store.load_games([game_id])[0]
    assert stored.setup.absent_after_missed_turns == 1 and stored.setup.vacation_days_max == 9
    again = Game.restore(stored, db_store, clock)
    again.resume(stored.deadline)
    assert dict(again.snapshot.attendance) == dict(game.snapshot.attendance)
    assert again.snapshot.boards == game.snapshot.boards
    assert {p: again.snapshot.seat_label(p) for p in (1, 2, 3, 4)} == {
        1: "playing",
        2: "absent",
        3: "on vacation",
        4: "resigned",
    }
    # the vacation's end is kept too: it ends on time after the restart
    clock.advance(4 * DAY_S)
    assert again.snapshot.presence(3) is Presence.PLAYING
    assert again.state.phase is not Phase.OVER


# -- settings: the configuration file, create-game and status --------------------------------


def test_the_settings_come_from_the_config_file_and_are_checked(tmp_path):
    from server.config.errors import ConfigError
    from server.config.file import load_config

    path = tmp_path / "tae.toml"
    path.write_text("[game]\nabsent_after_missed_turns = 0\nvacation_days_max = 30\n")
    game = load_config(str(path)).game
    assert (game.absent_after_missed_turns, game.vacation_days_max) == (0, 30)
    setup = game.setup(ctime=0)
    assert (setup.absent_after_missed_turns, setup.vacation_days_max) == (0, 30)
    path.write_text("[game]\nvacation_days_max = -1\n")
    with pytest.raises(ConfigError, match="game.vacation_days_max cannot be negative"):
        load_config(str(path))
    path.write_text("[game]\nabsent_after_missed_turns = 'two'\n")
    with pytest.raises(ConfigError, match="absent_after_missed_turns"):
        load_config(str(path))


def test_create_game_flags_and_status_show_the_settings_and_seats(tmp_path, capsys):
    from server.cli import main
    from server.database import SyncDatabase
    from server.database import games as q

    url = f"sqlite:///{tmp_path / 'tae.db'}"

    def run(*args: str) -> tuple[int, str]:
        try:
            main(list(args))
            code = 0
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else 0
        return code, capsys.readouterr().out

    code, _ = run("create-game", "g", "--database", url, "--absent-after", "3", "--vacation-days-max", "0")
    assert code == 0
    for name in ("ann", "bob"):
        assert run("add-player", "g", name, "--password", "secret-password", "--database", url)[0] == 0
    # bob resigns (as the JSON API would, here on the stored game)
    db = SyncDatabase(url)
    try:
        db.run(q.thd_record_attendance, 1, (Attendance(2, Presence.RESIGNED),), ())
    finally:
        db.close()
    code, out = run("status", "g", "--database", url)
    assert code == 0
    assert "the stand-in plays after 3 missed turns; vacations: none" in out
    assert "resigned: the stand-in plays" in out
    code, out = run("status", "g", "--database", url, "--json")
    data = json_answer(out)
    assert [p["seat"] for p in data["players"]] == ["playing", "resigned"]
    assert data["absent_after_missed_turns"] == 3 and data["vacation_days_max"] == 0
    assert data["waiting_for"] == ["ann"]
