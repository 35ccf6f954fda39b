"""One turn number everywhere: the TP Universe's turn counter (what every TP client shows) is
the open turn's number in TimeRemaining, `tae-server status` and `end-turn`, the admin
protocol, the log and the board messages the turn's end posts; a removed player is visible as
such on the wire ("Removed" race) and gets a Permission Denied login."""

from __future__ import annotations

from twisted.internet import defer
from twisted.logger import formatEvent, globalLogPublisher

from protocol import FailCode, Version
from protocol import messages as tp
from server.model.timer_settings import TimerSettings
from server.operating.game_actions import end_turn_of
from server.views.operator_status import status_of, status_text
from server.views.tp.games import turn_title

from .test_database import result
from .wire import Wire, make_directory


def universe_turn(wire: Wire) -> int:
    universe = wire.items(tp.GetObjectsByID((0,)))[0]
    return universe.groups[1][0].value


def test_the_tp_counter_time_remaining_status_end_turn_and_logs_agree():
    directory, game = make_directory(timer=TimerSettings(turn_length=0))
    ann, bob = Wire(directory, Version.TP04), Wire(directory, Version.TP04)
    ann.login("ann")
    bob.login("bob")
    assert universe_turn(ann) == 0
    remaining = ann.one(tp.GetTimeRemaining())
    assert (remaining.turn, remaining.turn_name) == (0, "Turn 0")
    assert "turn 0 open (normal turn)" in status_text(status_of(game.snapshot, 0, server="this server"))

    events: list = []
    globalLogPublisher.addObserver(events.append)
    try:
        text = result(defer.ensureDeferred(end_turn_of(game)))
    finally:
        globalLogPublisher.removeObserver(events.append)
    assert text == "turn 0 of game 'tae' ended; turn 1 begins"
    assert any(formatEvent(e) == "game tae: turn 0 ended; turn 1 (normal) begins" for e in events)
    assert universe_turn(ann) == 1
    assert "turn 1 open (normal turn)" in status_text(status_of(game.snapshot, 0, server="this server"))
    remaining = ann.one(tp.GetTimeRemaining())
    assert (remaining.turn, remaining.turn_name) == (1, turn_title(game.snapshot)) == (1, "Turn 1")
    # the messages the end of turn 0 posted arrive in turn 1, as the TP clients count
    posted = game.snapshot.last_turn_messages
    assert posted and {m.turn for m in posted} == {1}
    assert {m.message.turn for m in game.snapshot.board(1)} == {0, 1}  # joined in turn 0


def test_a_removed_player_is_removed_on_the_wire_and_at_login():
    directory, game = make_directory()
    ann = Wire(directory, Version.TP04)
    ann.login("ann")
    Wire(directory, Version.TP04).login("bob")
    result(game.remove_player("bob"))
    bob = ann.items(tp.GetPlayer((2,)))[0]
    assert bob.race == "Removed"
    again = Wire(directory, Version.TP04)
    assert isinstance(again.one(tp.Connect("x")), tp.Okay)
    refused = again.one(tp.Login("bob", "pw"))
    assert refused.code == FailCode.PERMISSION_DENIED
    assert refused.message.startswith("Login Error - this account was removed from the game")
    result(game.reinstate_player("bob"))
    assert ann.items(tp.GetPlayer((2,)))[0].race == "Human"
    assert isinstance(again.one(tp.Login("bob", "pw")), tp.Okay)
