"""Every operator command through every channel, with the same boundary values: the same
acceptance and the same refusal words everywhere, and the game still answers TP afterwards.

The channels (spec: the operator command table, `server.operating.commands`):

* `tae-server` without a server: `main([...])` on a database no server runs;
* `tae-server` with a running server: `main([...])` on the database of an in-process server
  (its lease, its desk; the command line's wait between two looks at its request runs the
  desk's poll instead of sleeping);
* the admin protocol: Command frames through an admin connection of another in-process server,
  every parameter a string as tpadmin-cpp sends what the operator typed ("-5" stays "-5"; an
  integer parameter would have carried tpadmin-cpp's unsigned wrap of it, 4294967291).

Each channel has a database of its own with the same game, so every command meets the same
game on every channel; what a running server answers to a change is the same text through the
command line and the admin protocol.

The JSON API offers no operator command, so it is not a channel here.

After every command, GetTimeRemaining is answered with a TimeRemaining on TP03 and on TP04 by
the running server, and by a server started on the database the command line changed without
one; every TimeRemaining pushed to logged-in players meanwhile decoded, and nothing was logged
as a failure (an unencodable deadline used to be logged as critical, and every GetTimeRemaining
answered Fail until the turn ended).
"""

from __future__ import annotations

import time

import pytest
from twisted.internet.task import Clock
from twisted.logger import LogLevel, globalLogPublisher

import protocol as tp
from protocol import Version
from protocol.admin import Command, CommandResult
from server.admin.commands import BY_ID
from server.admin.live import LiveBackend
from server.cli import main
from server.config.file import GameConfig, ServerConfig
from server.database import SyncDatabase, upgrade
from server.game.passwords import InlineHasher, PasswordPolicy
from server.model.store import GameSetup
from server.model.timer_settings import TimerSettings
from server.operating import on_database
from server.operating.commands import BY_NAME
from server.services.games import load_games

from ..admin.wire import AdminWire, make_factory
from .test_database import result
from .test_operations import server_store, start_desk
from .wire import Wire

pytestmark = pytest.mark.timeout(300)

#: The boundary values every argument gets: zero, negative, tpadmin-cpp's wrap of -5, 2**31,
#: huge, not numbers, empty, and one that is fine for a duration.
VALUES = ("0", "-5", "4294967291", "2147483648", "99999999999999999999999", "abc", "1e9", "", "90m")

SETTING_KEYS = (
    "turn_length",
    "turn_length_over_threshold",
    "turn_players_min",
    "turn_player_threshold",
    "max_players",
    "finish_early",
    "account_creation",
    "timer",
)

PASSWORD = "a-long-password"


def cases() -> list[tuple[str, ...]]:
    """(command, words...) to give every channel."""
    found: list[tuple[str, ...]] = [("list-games",)]
    for value in VALUES:
        found += [
            ("extend", "g", value),
            ("status", value),
            ("pause", value),
            ("resume", value),
            ("end-turn", value),
            ("remove-player", "g", value),
            ("reinstate", "g", value),
            ("create-game", value),
            ("add-player", "g", value, PASSWORD),
            ("add-player", "g", "newcomer", value),
            ("set-password", "g", "ann", value),
        ]
        found += [("set", "g", key, value) for key in SETTING_KEYS]
    found += [
        ("set", "g", "colour", "red"),
        ("set", "g", "timer", "calendar"),
        ("set", "g", "max_players", "1"),
        ("set", "g", "turn_length", "366d"),
        ("set", "g", "turn_length", "367d"),
        ("extend", "g", "366d"),
        ("extend", "g", "367d"),
        ("extend", "-", "2h"),
        ("status", "-"),
        ("status", "g"),
        ("pause", "g"),
        ("extend", "g", "1d"),
        ("resume", "g"),
        ("create-game", "a@b"),
        ("create-game", " padded"),
        ("create-game", "x" * 201),
        ("remove-player", "g", "bob"),
        ("reinstate", "g", "bob"),
        ("remove-player", "g", "x" * 65),
        ("set-password", "g", "ann", "short"),
        ("set-password", "g", "ann", PASSWORD),
        ("end-turn", "g"),
    ]
    return found


def command_line(database: str, words: tuple[str, ...], capsys) -> tuple[bool, str]:
    """(accepted, what it said) of `tae-server WORDS --database DATABASE`."""
    command = BY_NAME[words[0]]
    secret = next((i for i, a in enumerate(command.arguments, 1) if a.secret), None)
    args = list(words)
    if secret is not None:  # a password is an option on the command line, asked for on a terminal
        password = args.pop(secret)
        args += ["--password", password]
    try:
        main([*args, "--database", database])
        code = 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 1
    out, err = capsys.readouterr()
    if code == 0:
        return True, out
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert err.startswith("tae-server: "), err
    assert code in (1, 2), (code, err)
    return False, err.removeprefix("tae-server: ").rstrip("\n")


def admin(wire: AdminWire, words: tuple[str, ...]) -> tuple[bool, str]:
    """(accepted, what it said) of the admin command WORDS, as tpadmin-cpp sends it."""
    command = BY_NAME[words[0]]
    reply = wire.one(Command(command.admin_id, tuple(words[1:])))
    assert isinstance(reply, CommandResult), reply
    return reply.status == 0, " ".join(reply.text.split()) if reply.status else reply.text


def answers_time_remaining(directory) -> None:
    for version in (Version.TP03, Version.TP04):
        client = Wire(directory, version)
        assert isinstance(client.one(tp.Connect("test")), tp.Okay)
        answer = client.one(tp.GetTimeRemaining())
        assert isinstance(answer, tp.TimeRemaining), answer
        assert answer.time == -1 or 0 <= answer.time <= 2**31 - 1


def prepared(url: str, now: float) -> None:
    """The game "g": a basic timer with an hour's turns, ann and bob, and the deadline a server
    that ran would have recorded."""
    upgrade(url)
    with SyncDatabase(url) as db:
        setup = GameSetup("g", seed=7, ctime=1_700_000_000, timer=TimerSettings("basic", turn_length=3600))
        game_id = db.create_game(setup)
        for player in ("ann", "bob"):
            on_database.operate(
                db,
                BY_NAME["add-player"],
                BY_NAME["add-player"].read(["g", player, PASSWORD]),
                hasher=InlineHasher(n=16),
                wallclock=lambda: now,
            )
        db.set_deadline(game_id, 1, now + 3600)


def served(url: str, now: float):
    """An in-process server of the database: (its desk, its games)."""
    _, desk, directory, _ = start_desk(url, clock=_clock_at(now), wallclock=time.time)
    return desk, directory


@pytest.fixture
def channels(tmp_path, monkeypatch):
    """Three databases with the same game: one no server runs, one an in-process server runs
    for the command line, one another in-process server runs with an admin listener. On both
    servers a TP03 and a TP04 player are logged in."""
    now = time.time()
    urls = {name: f"sqlite:///{tmp_path / name}.db" for name in ("alone", "served", "admin")}
    for url in urls.values():
        prepared(url, now)
    desk, directory = served(urls["served"], now)
    monkeypatch.setattr(on_database, "pause_between_looks", lambda seconds: result(desk.poll()))
    admin_desk, admin_directory = served(urls["admin"], now)
    hasher = InlineHasher(policy=PasswordPolicy.with_cost(6, 4))  # the command line's policy, cheaper
    backend = LiveBackend(
        admin_directory,
        admin_desk.store,
        admin_desk.clock,
        GameConfig(timer=TimerSettings(turn_length=0)),
        desk=admin_desk,
        hasher=hasher,
        new_seed=lambda: 7,
    )
    wire = AdminWire(make_factory(directory=admin_directory, backend=backend))
    wire.login()
    players = []
    for games in (directory, admin_directory):
        for version in (Version.TP03, Version.TP04):
            player = Wire(games, version)
            assert isinstance(player.one(tp.Connect("test")), tp.Okay)
            assert isinstance(player.one(tp.Login("ann@g", PASSWORD)), tp.Okay)
            players.append(player)
    return urls["alone"], urls["served"], (directory, admin_directory), wire, players


def test_every_command_is_accepted_and_refused_alike_on_every_channel(channels, capsys):
    alone, served_url, directories, wire, players = channels
    problems: list[str] = []
    logged: list[dict] = []

    def failures(event: dict) -> None:
        if event.get("log_level") in (LogLevel.critical, LogLevel.error) or "log_failure" in event:
            logged.append(event)

    globalLogPublisher.addObserver(failures)
    try:
        for words in cases():
            answers = {
                "without a server": command_line(alone, words, capsys),
                "with a server": command_line(served_url, words, capsys),
                "admin": admin(wire, words),
            }
            accepted = {channel: answer[0] for channel, answer in answers.items()}
            refusals = {answer[1] for answer in answers.values() if not answer[0]}
            if len(set(accepted.values())) != 1 or len(refusals) > 1:
                problems.append(f"{words}: {answers}")
            if BY_NAME[words[0]].action is not None and answers["admin"][0]:
                said = answers["with a server"][1].rstrip("\n")
                if said != answers["admin"][1]:  # a running server answers alike
                    problems.append(f"{words}: {said!r} != {answers['admin'][1]!r}")
            for directory in directories:
                answers_time_remaining(directory)
            for player in players:
                for frame in player.read() + player.pushed:
                    assert isinstance(frame, tp.TimeRemaining), frame
                player.pushed.clear()
            if answers["without a server"][0]:  # the stored game changed: a server starting on it answers
                store = server_store(alone)
                started = load_games(ServerConfig(), store, _clock_at(time.time()), None)
                answers_time_remaining(result(started))
                result(store.close())
    finally:
        globalLogPublisher.removeObserver(failures)
    assert not problems, "\n".join(problems)
    assert not logged, logged


def _clock_at(now: float) -> Clock:
    clock = Clock()
    clock.advance(now)
    return clock


def test_the_words_of_the_refusals(channels, capsys):
    """What the operator reads, the same on every channel."""
    alone, served, _, wire, _ = channels
    expected = {
        ("extend", "g", "-5"): "the extension must be longer than 0 s, not '-5'",
        ("extend", "g", "0"): "the extension must be longer than 0 s, not '0'",
        ("extend", "g", "4294967291"): "the extension must be at most a year (366 d), not '4294967291'",
        ("extend", "g", "abc"): "the extension must be a duration like 90m, 2h, 1d, 1h30m or 3600, not 'abc'",
        ("set", "g", "turn_length", "-5"): "turn_length cannot be negative, not '-5'",
        ("set", "g", "max_players", "2147483648"): "max_players must be at most 2147483647, not '2147483648'",
        ("set", "g", "turn_player_threshold", "101"): "turn_player_threshold must be at most 100, not '101'",
        ("set", "g", "max_players", "1"): "max_players cannot be 1: the game has 2 players already",
        ("pause", "nope"): "no game named 'nope' (games: g)",
        ("remove-player", "g", "zed"): "game 'g' has no player named 'zed'",
        ("create-game", "a@b"): (
            "'a@b' is not a usable game name "
            "(1 to 200 printable characters, no '@', no spaces around it, not '-')"
        ),
        ("set-password", "g", "ann", "short"): "A password must have at least 6 characters.",
    }
    for words, text in expected.items():
        for answer in (
            command_line(alone, words, capsys),
            command_line(served, words, capsys),
            admin(wire, words),
        ):
            assert answer == (False, text), (words, answer)


def test_admin_parameters_are_strings_read_by_the_tables_types(channels):
    _, _, (_, directory), wire, _ = channels
    extend = BY_ID[BY_NAME["extend"].admin_id]
    assert [param.type for param in extend.params] == [0, 0]  # strings: "2h" works, "-5" stays "-5"
    game = directory.find("g")
    before = game.timer.deadline
    assert admin(wire, ("extend", "g", "2h"))[0]
    assert game.timer.deadline == pytest.approx(before + 7200)
