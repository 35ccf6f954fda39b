"""The three tpserver-cpp turn timers, driven by a fake clock."""

import pytest
from twisted.internet.task import Clock

from server.game.timer import TurnTimer
from server.model.timer_settings import (
    ALL_FINISHED,
    END_OF_TURN_STARTED,
    THRESHOLD_TIMER_STARTED,
    TIMER_STARTED,
    TIMER_WARNING,
    TimerSettings,
    TimerSettingsError,
)


def make(**settings):
    clock = Clock()
    ended, announced = [], []
    timer = TurnTimer(
        clock,
        TimerSettings(**settings),
        ended.append,
        lambda seconds, reason: announced.append((seconds, reason)),
    )
    return clock, timer, ended, announced


def test_players_finished_ends_when_everyone_is_done():
    clock, timer, ended, announced = make(kind="playersfinished", turn_length=300)
    timer.start_turn(players=2)
    assert announced == [(300, TIMER_STARTED)]
    clock.advance(10)
    timer.player_finished(1, 2, 2)
    assert announced[-1] == (290, TIMER_WARNING) and ended == []
    timer.player_finished(2, 2, 2)
    assert ended == [ALL_FINISHED] and announced[-1] == (0, ALL_FINISHED)
    clock.advance(1000)
    assert ended == [ALL_FINISHED]  # the deadline was cancelled


def test_players_finished_deadline_and_minimum_players():
    clock, timer, ended, _ = make(kind="playersfinished", turn_length=60, turn_players_min=3)
    timer.start_turn(players=2)
    timer.player_finished(2, 2, 2)
    assert ended == []  # fewer than turn_players_min players in the game
    clock.advance(60)
    assert ended == [END_OF_TURN_STARTED]


def test_players_finished_without_length_waits_forever():
    clock, timer, ended, announced = make(kind="playersfinished", turn_length=0)
    timer.start_turn(players=2)
    assert announced == [(-1, TIMER_STARTED)] and timer.seconds_left() == -1
    clock.advance(10**6)
    assert ended == []


def test_basic_timer_ignores_finished_players():
    clock, timer, ended, _ = make(kind="basic", turn_length=0)
    timer.start_turn(players=2)
    timer.player_finished(2, 2, 2)
    assert ended == []
    clock.advance(59)
    assert ended == []
    clock.advance(1)
    assert ended == [END_OF_TURN_STARTED]


def test_threshold_shortens_the_turn():
    clock, timer, ended, announced = make(
        kind="threshold",
        turn_player_threshold=50,
        turn_length_under_threshold=1000,
        turn_length_over_threshold=30,
    )
    timer.start_turn(players=4)
    timer.player_finished(1, 4, 4)
    assert announced[-1] == (1000, TIMER_WARNING)
    timer.player_finished(2, 4, 4)
    assert announced[-1] == (30, THRESHOLD_TIMER_STARTED)
    clock.advance(30)
    assert ended == [END_OF_TURN_STARTED]


def test_threshold_with_zero_over_length_ends_at_once():
    clock, timer, ended, _ = make(kind="threshold", turn_player_threshold=50, turn_length_over_threshold=0)
    timer.start_turn(players=2)
    timer.player_finished(1, 2, 2)
    assert ended == [ALL_FINISHED]


@pytest.mark.parametrize(
    "settings", [dict(kind="daily"), dict(turn_length=-1), dict(turn_player_threshold=101)]
)
def test_bad_settings_are_refused(settings):
    with pytest.raises(TimerSettingsError):
        TimerSettings(**settings).validate()
