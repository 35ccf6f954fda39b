"""The admin listener in memory: the conversation tpadmin-cpp has (spec/admin-protocol.md §3,
§5), every command against real in-memory games, and the log stream."""

from __future__ import annotations

import pytest
from twisted.internet import defer
from twisted.logger import Logger, LogLevel, formatEvent, globalLogPublisher

import protocol as tp
from protocol import Connect, Fail, FailCode, Login, Okay, Sequence, Version
from protocol.admin import (
    AdminLogLevel,
    Command,
    CommandDesc,
    CommandResult,
    CommandTypesList,
    GetCommandDesc,
    GetCommandTypes,
    LogMessage,
    encode_admin,
)
from server.admin.backend import CommandFailed
from server.admin.commands import COMMANDS
from server.admin.session import BAD_LOGIN, INTERNAL_ERROR, MAX_LOGIN_FAILURES, WANTED_CONNECT, WANTED_LOGIN
from server.model.timer_settings import TimerSettings
from tests.server.wire import Wire, make_directory

from .wire import ADMIN, PASSWORD, AdminWire, make_factory

BY_NAME = {command.name: command.id for command in COMMANDS}


def run(wire: AdminWire, name: str, *arguments) -> CommandResult:
    reply = wire.one(Command(BY_NAME[name], tuple(arguments)))
    assert isinstance(reply, CommandResult), reply
    return reply


@pytest.fixture
def served():
    directory, game = make_directory()
    factory = make_factory(directory, game)
    wire = AdminWire(factory)
    wire.login()
    return wire, directory, game


def join(directory, name: str, password: str = "pw") -> Wire:
    player = Wire(directory)
    player.login(name, password)
    return player


# -- connecting and logging in ---------------------------------------------------------------


def test_connect_and_login_as_tpadmin_cpp_does():
    wire = AdminWire(make_factory())
    okay = wire.one(Connect("libtpproto-cpp/0.1.9 tpadmin-cpp/0.1.0 (admin)"))
    assert okay.message.startswith("Protocol check ok, continue! Welcome to tpserver-tae")
    assert wire.one(Login(ADMIN, PASSWORD)) == Okay("Welcome")


def test_a_bad_login_fails_with_code_1_and_the_connection_waits_for_another():
    wire = AdminWire(make_factory())
    wire.one(Connect("x"))
    assert wire.one(Login(ADMIN, "wrong")) == Fail(FailCode.FRAME, BAD_LOGIN)
    assert wire.one(Login("nobody", PASSWORD)) == Fail(FailCode.FRAME, BAD_LOGIN)
    assert not wire.transport.disconnecting
    assert wire.one(Login(ADMIN, PASSWORD)) == Okay("Welcome")


def test_a_player_account_is_no_admin_account():
    directory, game = make_directory()
    join(directory, "alice", "pw")
    wire = AdminWire(make_factory(directory, game))
    wire.one(Connect("x"))
    assert wire.one(Login("alice", "pw")) == Fail(FailCode.FRAME, BAD_LOGIN)


def test_the_game_part_of_a_login_name_is_ignored():
    wire = AdminWire(make_factory())
    wire.one(Connect("x"))
    assert wire.one(Login(f"{ADMIN}@tae", PASSWORD)) == Okay("Welcome")


def test_empty_names_are_refused():
    wire = AdminWire(make_factory())
    wire.one(Connect("x"))
    assert wire.one(Login("", "")).message == "Admin Login Error - no username or password"


def test_too_many_bad_logins_close_the_connection():
    factory = make_factory()
    wire = AdminWire(factory)
    wire.one(Connect("x"))
    for _ in range(MAX_LOGIN_FAILURES):
        assert wire.one(Login(ADMIN, "guess")) == Fail(FailCode.FRAME, BAD_LOGIN)
    factory.reactor.advance(0)
    assert wire.transport.disconnecting


def test_frames_out_of_order_are_refused_until_login():
    wire = AdminWire(make_factory())
    assert wire.one(Login(ADMIN, PASSWORD)) == Fail(FailCode.FRAME, WANTED_CONNECT)
    wire.one(Connect("x"))
    assert wire.one(GetCommandTypes(-1, 0, 8737, -1)) == Fail(FailCode.FRAME, WANTED_LOGIN)
    assert wire.one(Command(0)) == Fail(FailCode.FRAME, WANTED_LOGIN)
    assert wire.one(Login(ADMIN, PASSWORD)) == Okay("Welcome")


def test_after_login_other_frames_are_not_understood(served):
    wire, _, _ = served
    assert wire.one(Login(ADMIN, PASSWORD)) == Fail(FailCode.PROTOCOL, "Did not understand that frame type.")
    wire.sequence += 1
    replies = wire.raw(tp.encode(tp.GetGames(), Version.TP04, wire.sequence))
    assert replies == [(wire.sequence, Fail(FailCode.PROTOCOL, "Did not understand that frame type."))]


def test_header_and_body_may_arrive_apart():
    wire = AdminWire(make_factory())
    data = encode_admin(Connect("x"), 1)
    assert wire.raw(data[:16]) == []
    assert wire.raw(data[16:])[0][1].message.startswith("Protocol check ok")


def test_a_tp03_client_is_told_and_disconnected():
    wire = AdminWire(make_factory())
    wire.connection.dataReceived(tp.encode(Connect("x"), Version.TP03, 1))
    assert wire.transport.value().startswith(b"TP03")
    assert wire.transport.disconnecting


def test_bytes_that_are_not_tp_close_the_connection():
    wire = AdminWire(make_factory())
    wire.connection.dataReceived(b"GET / HTTP/1.0\r\n\r\n")
    assert wire.transport.value() == b"You are not running the correct protocol\n"
    assert wire.transport.disconnecting


# -- the command list ------------------------------------------------------------------------


def test_command_types_as_tpadmin_cpp_asks_for_them(served):
    wire, _, _ = served
    reply = wire.one(GetCommandTypes(-1, 0, 8737, -1))
    assert isinstance(reply, CommandTypesList)
    assert [entry.id for entry in reply.ids] == [command.id for command in COMMANDS]
    assert reply.remaining == 0 and reply.since == -1 and reply.key != -1
    assert {entry.modtime for entry in reply.ids} == {wire.factory.descriptions[0].modtime}


def test_command_types_in_batches_and_stale_keys(served):
    wire, _, _ = served
    first = wire.one(GetCommandTypes(-1, 0, 4, -1))
    assert len(first.ids) == 4 and first.remaining == len(COMMANDS) - 4
    rest = wire.one(GetCommandTypes(first.key, 4, -1, -1))
    assert len(rest.ids) == len(COMMANDS) - 4 and rest.remaining == 0
    assert wire.one(GetCommandTypes(first.key + 7, 0, 1, -1)) == Fail(
        FailCode.UNAVAILABLE_TEMPORARILY, "Invalid Sequence Key"
    )
    assert wire.one(GetCommandTypes(-1, 99, 1, -1)).code == FailCode.FRAME
    newer = wire.one(GetCommandTypes(-1, 0, -1, wire.factory.descriptions[0].modtime))
    assert newer.ids == ()


def test_pipelined_descriptions_each_come_after_a_sequence_of_one(served):
    """tpadmin-cpp sends one GetCommandDesc per id without waiting; the answers keep order."""
    wire, _, _ = served
    first = wire.sequence + 1
    replies = wire.send(*(GetCommandDesc((command.id,)) for command in COMMANDS))
    assert len(replies) == 2 * len(COMMANDS)
    for index, command in enumerate(COMMANDS):
        (seq_a, sequence), (seq_b, desc) = replies[2 * index : 2 * index + 2]
        assert seq_a == seq_b == first + index
        assert sequence == Sequence(1)
        assert isinstance(desc, CommandDesc)
        assert (desc.id, desc.name, desc.params) == (command.id, command.name, command.params)


def test_command_names_are_callable_from_tpadmin_cpp():
    names = [command.name for command in COMMANDS]
    assert len(set(names)) == len(names)
    for name in names:
        assert name == name.lower() and " " not in name
        assert name not in {"open", "login", "close", "debug", "quit", "exit"}
    assert {"list-games", "status", "create-game", "add-player", "remove-player", "reinstate"} <= set(names)
    assert {"end-turn", "pause", "resume", "extend", "set"} <= set(names)


def test_unknown_and_missing_descriptions(served):
    wire, _, _ = served
    assert [m for _, m in wire.send(GetCommandDesc((999,)))] == [
        Sequence(1),
        Fail(FailCode.NO_SUCH_THING, "Command type does not exist"),
    ]
    replies = [m for _, m in wire.send(GetCommandDesc(()))]
    assert replies[0] == Sequence(0)
    assert replies[1].code == FailCode.NO_SUCH_THING


def test_an_unknown_command_is_fail_4_and_a_malformed_one_fail_1(served):
    wire, _, _ = served
    assert wire.one(Command(999)) == Fail(FailCode.NO_SUCH_THING, "Command type does not exist")
    wire.sequence += 1
    body = (BY_NAME["status"]).to_bytes(4, "big")  # the game parameter is missing
    replies = wire.raw(tp.frame_bytes(Version.TP04, wire.sequence, 1006, body))
    assert replies[0][1].code == FailCode.FRAME


# -- the commands, on real games -------------------------------------------------------------


def test_list_games(served):
    wire, directory, _ = served
    join(directory, "alice")
    result = run(wire, "list-games")
    assert result.status == 0
    assert result.text.splitlines() == [
        "1 game:",
        "    1  tae: turn 0 open (normal), 1 player, playersfinished timer, no turn length",
    ]


def test_status_of_a_game(served):
    wire, directory, game = served
    alice = join(directory, "alice")
    join(directory, "bob")
    alice.one(tp.FinishedTurn())
    result = run(wire, "status", "tae")
    assert result.status == 0
    lines = result.text.splitlines()
    assert lines[0] == "game 'tae' (id 1): turn 0 open (normal turn)"
    assert "  players: 2; players may create accounts" in lines
    assert any("alice" in line and line.endswith("finished") for line in lines)
    assert any("bob" in line and line.endswith("waiting") for line in lines)
    assert "  waiting for: bob" in lines
    assert "  time left: no deadline" in lines
    assert result.text.endswith("\n")
    assert run(wire, "status", "-").text == result.text


def test_status_shows_nothing_secret(served):
    """Colonist types and scores stay private until the game is over."""
    wire, directory, game = served
    join(directory, "alice")
    join(directory, "bob")
    text = run(wire, "status", "tae").text.lower()
    for word in ("score", "settler", "merchant", "farmer", "priest", "colonist"):
        assert word not in text


def test_status_of_an_unknown_game(served):
    wire, _, _ = served
    result = run(wire, "status", "nope")
    assert result == CommandResult(1, "no game named 'nope' (games: tae)")


def test_create_game_makes_a_game_players_can_join(served):
    wire, directory, _ = served
    result = run(wire, "create-game", "second")
    assert result == CommandResult(
        0, "game 'second' created (id 2, seed 42); players join it as <name>@second"
    )
    assert directory.find("second").setup.seed == 42
    carol = Wire(directory)
    carol.login("carol@second")
    assert directory.find("second").player_id("carol") == 1
    assert "second" in run(wire, "list-games").text


@pytest.mark.parametrize("name", ["tae", "a@b", " padded", "-"])
def test_create_game_refuses_names_in_use_or_unusable(served, name):
    wire, directory, _ = served
    result = run(wire, "create-game", name)
    assert result.status == 1
    assert len(directory.games) == 1


def test_add_player_then_they_log_in(served):
    wire, directory, game = served
    result = run(wire, "add-player", "tae", "dave", "hunter2")
    assert result == CommandResult(0, "player 'dave' added to game 'tae' as player 1")
    dave = Wire(directory)
    dave.login("dave", "hunter2", create=False)
    assert game.snapshot.board(1), "dave got the Welcome messages"
    again = run(wire, "add-player", "tae", "dave", "other")
    assert again == CommandResult(1, "game 'tae' already has a player named 'dave'")


def test_add_player_into_a_closed_game():
    directory, game = make_directory(account_creation=False)
    wire = AdminWire(make_factory(directory, game))
    wire.login()
    assert run(wire, "add-player", "-", "erin", "pw").status == 0
    assert game.player_id("erin") == 1


def test_the_password_of_add_player_is_not_logged(served):
    wire, _, _ = served
    events = []
    globalLogPublisher.addObserver(events.append)
    try:
        run(wire, "add-player", "tae", "frank", "topsecretword")
    finally:
        globalLogPublisher.removeObserver(events.append)
    texts = [formatEvent(e) for e in events]
    assert any("add-player tae frank ***" in text for text in texts)
    assert not any("topsecretword" in text for text in texts)


def test_remove_player(served):
    wire, directory, game = served
    join(directory, "alice")
    result = run(wire, "remove-player", "tae", "alice")
    assert result == CommandResult(0, "player 'alice' (player 1) removed from game 'tae'")
    assert 1 in game.removed_players
    again = Wire(directory)
    again.one(tp.Connect("x"))
    assert isinstance(again.one(tp.Login("alice", "pw")), tp.Fail)
    assert run(wire, "remove-player", "tae", "nobody") == CommandResult(
        1, "game 'tae' has no player named 'nobody'"
    )


def test_end_turn(served):
    wire, directory, game = served
    join(directory, "alice")
    join(directory, "bob")
    assert run(wire, "end-turn", "tae") == CommandResult(0, "turn 0 of game 'tae' ended; turn 1 begins")
    assert game.state.turn == 1
    assert "turn 1 open" in run(wire, "status", "tae").text


def test_end_turn_without_players_is_refused(served):
    """tpserver-cpp dies of a division by zero here (spec §6); this server says no."""
    wire, _, game = served
    result = run(wire, "end-turn", "tae")
    assert result == CommandResult(1, "game 'tae' has no players yet: there is no turn to end")
    assert game.state.turn == 0


def test_a_game_that_is_over():
    """A map with two artifacts: the first turn ends the game (R12)."""
    directory, game = make_directory(map_text="A.A\n...\n...\n", timer=TimerSettings(turn_length=0))
    wire = AdminWire(make_factory(directory, game))
    wire.login()
    join(directory, "alice")
    join(directory, "bob")
    assert run(wire, "end-turn", "tae") == CommandResult(0, "turn 0 of game 'tae' ended and the game is over")
    assert run(wire, "end-turn", "tae") == CommandResult(1, "game 'tae' is over")
    text = run(wire, "status", "tae").text
    assert "over at turn 1" in text
    assert "  winners: alice, bob" in text
    assert "time left" not in text
    assert "not playing this turn" not in text
    assert "alice" in text and "shared rank 1 of 2 (winner), final score 0" in text
    assert "after artifacts: Money 0, Technology 0, People 0, Raw Materials 0" in text


def test_pause_set_extend_resume_and_reinstate_go_through_the_game_service(served):
    wire, directory, game = served
    join(directory, "alice")
    join(directory, "bob")
    assert run(wire, "pause", "tae").text == "game 'tae' paused (the turn has no deadline); players were told"
    assert game.paused and game.snapshot.boards[1][-1].message.subject == "Game settings"
    assert run(wire, "extend", "tae", "600") == CommandResult(
        1,
        "game 'tae': the open turn has no deadline to extend (give it one with `tae-server set tae "
        "turn_length DURATION`)",
    )
    assert run(wire, "set", "tae", "turn_length", "1h").status == 0
    assert game.snapshot.paused_left == 3600 and game.timer.deadline is None
    assert run(wire, "extend", "tae", "10m").status == 0
    assert game.snapshot.paused_left == 4200
    assert "  time left: paused by an operator, 4200 s left when resumed" in run(wire, "status", "tae").text
    assert (
        run(wire, "resume", "tae").text == "game 'tae' resumed (turn 0 ends in 1 h 10 min); players were told"
    )
    assert game.timer.seconds_left() == 4200
    assert run(wire, "set", "tae", "colour", "red").text.startswith("no setting 'colour'")
    assert run(wire, "remove-player", "tae", "bob").status == 0
    assert run(wire, "reinstate", "tae", "bob") == CommandResult(
        0, "player 'bob' (player 2) reinstated in game 'tae'"
    )
    assert 2 not in game.removed_players
    back = Wire(directory)
    assert isinstance(back.one(tp.Connect("x")), tp.Okay)
    assert isinstance(back.one(tp.Login("bob", "pw")), tp.Okay)  # logs in again
    for name, arguments in (("pause", ()), ("resume", ()), ("extend", ("60",)), ("set", ("timer", "basic"))):
        assert run(wire, name, "nope", *arguments).text.startswith("no game named 'nope'")


class BrokenBackend:
    """A backend whose every command fails with a bug, and one that refuses."""

    async def list_games(self):
        raise RuntimeError("a bug")

    async def game_status(self, game):
        raise CommandFailed(f"refused {game}")


def test_a_command_that_breaks_is_an_internal_error_not_a_dropped_connection():
    wire = AdminWire(make_factory(backend=BrokenBackend()))
    wire.login()
    assert run(wire, "list-games") == CommandResult(1, INTERNAL_ERROR)
    assert run(wire, "status", "x") == CommandResult(1, "refused x")


def test_commands_are_answered_in_order_while_one_waits():
    """A command that waits (for the store) holds back the answers after it, not before."""
    gate = defer.Deferred()

    class SlowBackend:
        async def list_games(self):
            await gate
            return []

        async def game_status(self, game):
            raise CommandFailed("second")

    wire = AdminWire(make_factory(backend=SlowBackend()))
    wire.login()
    assert wire.send(Command(BY_NAME["list-games"]), Command(BY_NAME["status"], ("x",))) == []
    gate.callback(None)
    replies = wire.read()
    assert [m for _, m in replies] == [
        CommandResult(0, "There are no games on this server.\n"),
        CommandResult(1, "second"),
    ]
    assert [s for s, _ in replies] == [wire.sequence - 1, wire.sequence]


# -- the log stream --------------------------------------------------------------------------


def emit(factory, text: str, level=LogLevel.info) -> None:
    Logger(namespace="test", observer=factory.publisher).emit(level, text)


def test_log_lines_stream_to_logged_in_admins_with_sequence_0():
    factory = make_factory()
    wire = AdminWire(factory)
    emit(factory, "before login")
    wire.one(Connect("x"))
    emit(factory, "still before login")
    assert wire.one(Login(ADMIN, PASSWORD)) == Okay("Welcome")
    emit(factory, "turn 3 resolved")
    emit(factory, "careful", LogLevel.warn)
    emit(factory, "broken", LogLevel.critical)
    emit(factory, "chatter", LogLevel.debug)
    frames = wire.read()
    assert [sequence for sequence, _ in frames] == [0, 0, 0]
    messages = [message for _, message in frames]
    assert [(m.level, m.text) for m in messages] == [
        (AdminLogLevel.INFO, "turn 3 resolved"),
        (AdminLogLevel.WARNING, "careful"),
        (AdminLogLevel.ERROR, "broken"),
    ]
    assert all(isinstance(m, LogMessage) and m.time > 1_000_000_000 for m in messages)


def test_debug_lines_when_configured():
    factory = make_factory(log_level="debug")
    wire = AdminWire(factory)
    wire.login()
    emit(factory, "chatter", LogLevel.debug)
    assert [(m.level, m.text) for _, m in wire.read()] == [(AdminLogLevel.DEBUG, "chatter")]


def test_a_failure_sends_its_traceback():
    factory = make_factory()
    wire = AdminWire(factory)
    wire.login()
    try:
        raise ZeroDivisionError("division by zero")
    except ZeroDivisionError:
        Logger(observer=factory.publisher).failure("resolving failed")
    (_, message), *_ = wire.read()
    assert message.level == AdminLogLevel.ERROR
    assert message.text.startswith("resolving failed\n")
    assert "ZeroDivisionError" in message.text


def test_a_disconnected_admin_gets_nothing_and_breaks_nothing():
    factory = make_factory()
    first, second = AdminWire(factory), AdminWire(factory)
    first.login()
    second.login()
    first.connection.connectionLost(None)
    first.transport.clear()
    emit(factory, "after the first left")
    assert first.transport.value() == b""
    assert [m.text for _, m in second.read()] == ["after the first left"]


def test_a_slow_admin_loses_log_lines_and_is_told_how_many():
    factory = make_factory()
    wire = AdminWire(factory)
    wire.login()
    wire.connection.pauseProducing()  # what the transport does when its buffer is full
    for index in range(3):
        emit(factory, f"line {index}")
    assert wire.read() == []
    wire.connection.resumeProducing()
    emit(factory, "line 3")
    texts = [m.text for _, m in wire.read()]
    assert texts == ["3 log messages were not sent: this admin connection was not reading", "line 3"]


def test_stopping_the_factory_ends_the_stream_and_the_connections():
    factory = make_factory()
    wire = AdminWire(factory)
    wire.login()
    factory.doStop()
    assert wire.transport.disconnecting
    emit(factory, "after the stop")
    assert wire.read() == []
