"""The calendar timer (server.model.calendar_schedule, server.game.timer) on task.Clock, across the
daylight-saving changes of Europe/Berlin; the operator's clock controls of TurnTimer and the game;
serve's flags an existing game did not take."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from twisted.internet import defer
from twisted.internet.task import Clock

from server.config.errors import ConfigError
from server.config.file import GameConfig, ServerConfig, apply_game_settings, validate
from server.game.timer import TurnTimer
from server.model.calendar_schedule import CalendarSchedule, ScheduleError
from server.model.timer_settings import (
    ALL_FINISHED,
    END_OF_TURN_STARTED,
    REQUESTED,
    NoDeadline,
    TimerSettings,
    TimerSettingsError,
)
from server.operating.commands import SET
from tests.support.games import new_game

from .test_database import result

BERLIN = ZoneInfo("Europe/Berlin")


def at(*fields: int) -> float:
    """Unix time of a Berlin wall-clock time (fold 0)."""
    return datetime(*fields, tzinfo=BERLIN).timestamp()


def berlin(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, BERLIN).strftime("%a %Y-%m-%d %H:%M %Z")


def timer_at(start: float, **settings):
    clock = Clock()
    clock.advance(start)
    ended: list[int] = []
    announced: list[tuple[int, int]] = []
    settings.setdefault("kind", "calendar")
    settings.setdefault("time_zone", "Europe/Berlin")
    settings.setdefault("turn_length", 0)
    timer = TurnTimer(clock, TimerSettings(**settings), ended.append, lambda s, r: announced.append((s, r)))
    return clock, timer, ended, announced


def run_turns(clock: Clock, timer: TurnTimer, ended: list[int], turns: int) -> list[str]:
    """Start `turns` turns one after the other, each ending by its deadline; their ends."""
    ends = []
    for _ in range(turns):
        timer.start_turn(2)
        deadline = timer.deadline
        assert deadline is not None
        clock.advance(deadline - clock.seconds())
        assert ended[-1] == END_OF_TURN_STARTED
        ends.append(berlin(clock.seconds()))
    return ends


def test_turns_end_at_the_scheduled_wall_clock_times_across_the_spring_change():
    # Clocks go forward on Sunday 2026-03-29 at 02:00 (CET → CEST).
    clock, timer, ended, _ = timer_at(at(2026, 3, 26, 12, 0), schedule="Mon,Wed,Fri 20:00")
    ends = run_turns(clock, timer, ended, 4)
    assert ends == [
        "Fri 2026-03-27 20:00 CET",
        "Mon 2026-03-30 20:00 CEST",
        "Wed 2026-04-01 20:00 CEST",
        "Fri 2026-04-03 20:00 CEST",
    ]
    # The turn across the change is an hour shorter by the clock, the wall time stays.
    assert at(2026, 3, 30, 20, 0) - at(2026, 3, 27, 20, 0) == 3 * 86400 - 3600


def test_turns_end_at_the_scheduled_wall_clock_times_across_the_autumn_change():
    # Clocks go back on Sunday 2026-10-25 at 03:00 (CEST → CET).
    clock, timer, ended, _ = timer_at(at(2026, 10, 23, 21, 0), schedule="daily 20:00")
    ends = run_turns(clock, timer, ended, 3)
    assert ends == [
        "Sat 2026-10-24 20:00 CEST",
        "Sun 2026-10-25 20:00 CET",
        "Mon 2026-10-26 20:00 CET",
    ]
    assert at(2026, 10, 25, 20, 0) - at(2026, 10, 24, 20, 0) == 86400 + 3600


def test_a_time_the_spring_change_skips_ends_the_turn_as_much_later_as_the_gap_is_long():
    clock, timer, ended, _ = timer_at(at(2026, 3, 28, 12, 0), schedule="Sun 02:30")
    assert run_turns(clock, timer, ended, 2) == ["Sun 2026-03-29 03:30 CEST", "Sun 2026-04-05 02:30 CEST"]


def test_a_time_the_autumn_change_repeats_ends_the_turn_once_at_the_first_of_the_two():
    clock, timer, ended, _ = timer_at(at(2026, 10, 24, 12, 0), schedule="Sun 02:30")
    first, second = run_turns(clock, timer, ended, 2)
    assert first == "Sun 2026-10-25 02:30 CEST" and second == "Sun 2026-11-01 02:30 CET"


def test_several_times_a_day_and_the_shortest_turn():
    schedule = "Mon-Fri 08:00,20:00; Sat 12:00"
    clock, timer, ended, _ = timer_at(at(2026, 12, 4, 19, 58), schedule=schedule, turn_length=600)
    # 20:00 is two minutes away, sooner than the 10 minutes a turn lasts at least: skipped.
    assert run_turns(clock, timer, ended, 3) == [
        "Sat 2026-12-05 12:00 CET",
        "Mon 2026-12-07 08:00 CET",
        "Mon 2026-12-07 20:00 CET",
    ]


def test_everyone_finished_ends_a_calendar_turn_early_unless_told_not_to():
    clock, timer, ended, _ = timer_at(at(2026, 12, 1, 12, 0), schedule="20:00")
    timer.start_turn(2)
    timer.player_finished(1, 2, 2)
    assert ended == []
    timer.player_finished(2, 2, 2)
    assert ended == [ALL_FINISHED]

    clock, timer, ended, _ = timer_at(at(2026, 12, 1, 12, 0), schedule="20:00", finish_early=False)
    timer.start_turn(2)
    timer.player_finished(2, 2, 2)
    assert ended == [] and timer.seconds_left() == 8 * 3600


@pytest.mark.parametrize(
    ("schedule", "zone", "message"),
    [
        ("", "UTC", "schedule: the calendar timer needs one"),
        ("Moo 20:00", "UTC", "schedule: entry 'Moo 20:00': 'Moo' is not a day"),
        ("Mon 25:00", "UTC", "schedule: entry 'Mon 25:00': '25:00' is not a time HH:MM"),
        ("Mon 20:00 extra", "UTC", "schedule: entry 'Mon 20:00 extra': expected DAYS TIMES"),
        ("Mon 20:00", "Mars/Olympus", "time_zone: unknown time zone 'Mars/Olympus'"),
    ],
)
def test_a_bad_schedule_or_zone_is_one_line(schedule, zone, message):
    settings = TimerSettings(kind="calendar", schedule=schedule, time_zone=zone)
    with pytest.raises(TimerSettingsError) as caught:
        settings.validate()
    text = str(caught.value)
    assert (text.startswith(message) or message in text) and "\n" not in text
    if not schedule:
        assert "needs one" in text


def test_the_config_and_its_flags_carry_the_calendar_settings():
    game = apply_game_settings(
        GameConfig(),
        {"timer": "calendar", "schedule": "mon,wed,fri 20:00", "time_zone": "Europe/Berlin"},
        "game.",
    )
    assert game.timer.brief() == "calendar Mon,Wed,Fri 20:00 (Europe/Berlin)"
    with pytest.raises(ConfigError, match=r"^game\.time_zone: unknown time zone 'Nowhere'"):
        validate(ServerConfig(game=apply_game_settings(game, {"time_zone": "Nowhere"})))
    with pytest.raises(ConfigError, match=r"^game\.finish_early: expected bool"):
        apply_game_settings(game, {"finish_early": "yes"}, "game.")


def test_normal_form_and_full_day_names():
    schedule = CalendarSchedule.parse("friday-monday 9:05, 18:00".replace(", ", ","), "UTC")
    assert schedule.describe() == "Mon,Fri-Sun 09:05,18:00 (UTC)"
    with pytest.raises(ScheduleError):
        CalendarSchedule.parse("Mon-Tue-Wed 10:00", "UTC")


# -- pause, resume, extend ---------------------------------------------------------------------


def basic_timer(length: int = 100):
    clock = Clock()
    ended: list[int] = []
    announced: list[tuple[int, int]] = []
    timer = TurnTimer(
        clock, TimerSettings("basic", turn_length=length), ended.append, lambda s, r: announced.append((s, r))
    )
    return clock, timer, ended, announced


def test_pause_stops_the_deadline_and_resume_gives_back_the_time_that_was_left():
    clock, timer, ended, announced = basic_timer(100)
    timer.start_turn(2)
    clock.advance(30)
    timer.pause()
    assert announced[-1] == (-1, REQUESTED) and timer.deadline is None and timer.paused_left == 70
    clock.advance(10_000)
    timer.player_finished(2, 2, 2)
    assert ended == [], "nothing ends a paused turn by itself"
    timer.resume()
    assert timer.seconds_left() == 70 and announced[-1][0] == 70
    clock.advance(69)
    assert ended == []
    clock.advance(1)
    assert ended == [END_OF_TURN_STARTED]


def test_extend_moves_the_deadline_also_while_paused():
    clock, timer, ended, _ = basic_timer(100)
    timer.start_turn(2)
    clock.advance(40)
    timer.extend(3600)
    assert timer.seconds_left() == 3660
    timer.pause()
    timer.extend(40)
    assert timer.paused_left == 3700
    timer.resume()
    clock.advance(3699)
    assert ended == []
    clock.advance(1)
    assert ended == [END_OF_TURN_STARTED]


def test_extend_without_a_deadline_says_so_and_a_paused_clock_waits_across_turns():
    clock = Clock()
    ended: list[int] = []
    timer = TurnTimer(clock, TimerSettings(turn_length=0), ended.append, lambda s, r: None)
    timer.start_turn(2)
    with pytest.raises(NoDeadline):
        timer.extend(60)
    timer.change_settings(TimerSettings(turn_length=500))
    assert timer.seconds_left() == 500
    timer.pause()
    timer.force_end()  # an operator's end of turn works while paused
    timer.start_turn(2)
    assert timer.paused and timer.deadline is None and timer.paused_left == 500
    clock.advance(1_000)
    assert ended == [END_OF_TURN_STARTED]
    timer.resume()
    assert timer.seconds_left() == 500


# -- serve's game flags on an existing game --------------------------------------------------


def test_serve_says_which_game_flags_an_existing_game_did_not_take():
    from server.cli.serve_flags import unapplied_flags
    from server.model.store import GameSetup

    game = GameSetup("tae", seed=99, timer=TimerSettings(turn_length=300))
    wanted = GameSetup("tae", map_text="..M\n", seed=5, timer=TimerSettings("basic", turn_length=300))
    lines = unapplied_flags(
        {"seed": 5, "turn_length": 300, "timer": "basic", "map": "m.txt"}, wanted, game, "tae"
    )
    assert lines == [
        "--seed 5 not applied: game 'tae' exists with seed 99 and a game's seed never changes "
        "(a new game: tae-server create-game NAME --seed 5)",
        "--timer basic not applied: game 'tae' exists with timer playersfinished; to change it: "
        "tae-server set tae timer basic",
        "--map m.txt not applied: game 'tae' exists with the standard map and a game's map never changes "
        "(a new game: tae-server create-game NAME --map m.txt)",
    ]
    assert unapplied_flags({"seed": 5}, wanted, None, "tae")[0].startswith(
        "--seed 5 not applied: the database has games but none named 'tae'"
    )


# -- the game service ------------------------------------------------------------------------


def test_a_timer_set_before_the_game_starts_arms_nothing_until_it_does():
    clock = Clock()
    _, game = new_game(clock=clock, timer=TimerSettings(turn_length=0))
    result(game.create_account("ann", "password"))
    result(defer_of(set_setting_of(game, "turn_length", "10m")))
    assert game.timer.deadline is None and game.setup.timer.turn_length == 600
    clock.advance(3600)
    assert game.state.turn == 0
    result(game.create_account("bob", "password"))  # two players: the first turn starts
    assert game.timer.seconds_left() == 600
    result(defer_of(set_setting_of(game, "timer", "basic")))
    clock.advance(300)
    result(defer_of(set_setting_of(game, "turn_length", "20m")))  # starts the clock again, from now
    assert game.timer.seconds_left() == 1200
    clock.advance(1200)
    assert game.state.turn == 1


def defer_of(coroutine):
    return defer.ensureDeferred(coroutine)


def set_setting_of(game, key: str, value: str):
    """`tae-server set` carried out on a live game, as a running server's desk does it."""
    return SET.carry_out(game, {"key": key, "value": value})


def test_the_game_frame_period_of_a_calendar_is_its_mean_gap():
    from server.views.tp.games import turn_period

    now = 1_790_000_000.0
    three_a_week = TimerSettings(kind="calendar", schedule="Mon,Wed,Fri 20:00", time_zone="Europe/Berlin")
    assert turn_period(three_a_week, now) == 7 * 86400 // 3
    assert turn_period(TimerSettings(kind="calendar", schedule="12:00", turn_length=0), now) == 86400
    assert turn_period(TimerSettings(kind="basic", turn_length=600), now) == 600
