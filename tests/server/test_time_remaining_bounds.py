"""Every TimeRemaining frame encodes, on TP03 and TP04, whatever the operators do to the clock.

A deadline is made in one place (`server.game.timer.TurnTimer._arm`) and never lies more than
`LONGEST_WAIT_S` ahead; the frame (`server.views.tp.games.time_remaining`) cuts what it is given
as well. Hypothesis drives a game of every timer kind through pause, resume, extend, setting
changes, a restored deadline and the passing of time, with values far beyond what the operator
commands accept (they refuse those; the game must stay answerable anyway), and encodes every
frame a client could get: each pushed announcement, the answer to GetTimeRemaining and the Game
frame of GetGames.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from twisted.internet.task import Clock

import protocol as tp
from protocol import Version
from server.game.timer import TurnTimer
from server.model.timer_settings import LONGEST_WAIT_S, DeadlineTooFar, NoDeadline, TimerSettings
from server.views.tp.games import game_frame, time_remaining, wire_seconds
from tests.support.deferreds import successResultOf
from tests.support.games import new_game

HUGE = st.one_of(
    st.integers(min_value=0, max_value=400 * 86400),
    st.sampled_from([2**31 - 1, 2**31, 2**32 - 5, 2**32 - 1, 2**32, 2**40, 10**15]),
)

TIMERS = st.one_of(
    st.builds(TimerSettings, kind=st.just("basic"), turn_length=HUGE),
    st.builds(TimerSettings, kind=st.just("playersfinished"), turn_length=HUGE),
    st.builds(
        TimerSettings,
        kind=st.just("threshold"),
        turn_length=HUGE,
        turn_player_threshold=st.integers(0, 100),
        turn_length_over_threshold=HUGE,
        turn_length_under_threshold=HUGE,
    ),
    st.builds(
        TimerSettings,
        kind=st.just("calendar"),
        turn_length=HUGE,
        schedule=st.sampled_from(["Mon,Wed,Fri 20:00", "12:00", "Mon-Fri 08:00,20:00; Sat 12:00"]),
        time_zone=st.sampled_from(["UTC", "Europe/Berlin", "Pacific/Kiritimati"]),
        finish_early=st.booleans(),
    ),
)

STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("pause")),
        st.tuples(st.just("resume")),
        st.tuples(st.just("extend"), HUGE),
        st.tuples(st.just("set"), TIMERS),
        st.tuples(st.just("advance"), st.integers(0, 10 * 86400)),
        st.tuples(st.just("finish"), st.integers(1, 2)),
        st.tuples(st.just("restored deadline"), HUGE),
    ),
    max_size=12,
)


def encodes_everywhere(game) -> None:
    """What a client of either version could be sent now encodes."""
    snapshot = game.snapshot
    now = game.clock.seconds()
    for version in (Version.TP03, Version.TP04):
        asked = time_remaining(snapshot, version, snapshot.seconds_left(now), 0)
        tp.encode(asked, version, 1)
        if snapshot.announcement is not None:
            news = snapshot.announcement
            tp.encode(time_remaining(snapshot, version, news.seconds, news.reason), version, 0)
    tp.encode(game_frame(snapshot, "localhost", 6923, now), Version.TP04, 1)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(timer=TIMERS, steps=STEPS, start=st.integers(0, 2_000_000_000))
def test_every_time_remaining_encodes_whatever_the_controls_do(timer, steps, start):
    clock = Clock()
    clock.advance(start)
    _, game = new_game(clock=clock, timer=timer)
    frames: list = []
    game.subscribe(lambda snapshot: frames.append(snapshot))
    for name in ("ann", "bob"):
        successResultOf(game.create_account(name, "x"))
    game.start()
    encodes_everywhere(game)
    for step in steps:
        kind = step[0]
        if kind == "pause":
            successResultOf(game.pause())
        elif kind == "resume":
            successResultOf(game.resume_clock())
        elif kind == "extend":
            d = game.extend(step[1])
            d.addErrback(lambda failure: failure.trap(NoDeadline, DeadlineTooFar))
            successResultOf(d)
        elif kind == "set":
            successResultOf(game.change_setup(replace(game.setup, timer=step[1]), "a new timer"))
        elif kind == "advance":
            clock.advance(step[1])
        elif kind == "finish":
            game.finish_turn(step[1])
        else:
            game.restore_clock((game.state.turn + 1, clock.seconds() + step[1]))
        encodes_everywhere(game)
        assert game.snapshot.seconds_left(clock.seconds()) <= LONGEST_WAIT_S
        left = game.snapshot.paused_left
        assert left is None or 0 <= left <= LONGEST_WAIT_S
    for snapshot in frames:
        if snapshot.announcement is not None:
            for version in (Version.TP03, Version.TP04):
                frame = time_remaining(snapshot, version, snapshot.announcement.seconds, 0)
                tp.encode(frame, version, 0)


def test_a_deadline_is_never_armed_beyond_what_the_wire_carries():
    clock = Clock()
    clock.advance(1_800_000_000)
    announced: list[int] = []
    settings = TimerSettings("basic", turn_length=2**40)
    timer = TurnTimer(clock, settings, lambda reason: None, lambda seconds, reason: announced.append(seconds))
    timer.start_turn(2)
    assert timer.seconds_left() == LONGEST_WAIT_S == announced[-1]
    timer.extend(0)
    try:
        timer.extend(1)
    except DeadlineTooFar:
        pass
    else:
        raise AssertionError("an extension past the bound was accepted")
    assert timer.seconds_left() == LONGEST_WAIT_S
    timer.pause()
    timer.restore_pause(2**33)
    assert timer.paused_left == LONGEST_WAIT_S


def test_the_frame_cuts_what_it_is_given():
    assert [wire_seconds(s) for s in (-7, -1, 0, 5, 2**31 - 1, 2**31, 2**32 - 5, 2**40)] == [
        -1,
        -1,
        0,
        5,
        2**31 - 1,
        2**31 - 1,
        2**31 - 1,
        2**31 - 1,
    ]
