"""The operator command table (`server.operating.commands`) and its argument types
(`server.operating.arguments`): what every channel relies on, as pure values."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from twisted.internet import defer

from server.database.operator_requests import KINDS
from server.game.passwords import InlineHasher
from server.model.timer_settings import LONGEST_WAIT_S
from server.operating.arguments import (
    LARGEST_NUMBER,
    LONGEST_DURATION_S,
    ArgumentRefused,
    Duration,
    NewGameName,
    WholeNumber,
    YesNo,
)
from server.operating.command_declaration import Changes, WithoutServer
from server.operating.commands import BY_NAME, BY_REQUEST, COMMANDS
from server.operating.game_settings import SETTINGS, setting_named
from tests.support.deferreds import successResultOf

EXTENSION = BY_NAME["extend"].arguments[1].type


def test_every_command_is_declared_once_with_names_tpadmin_cpp_can_type():
    names = [command.name for command in COMMANDS]
    assert len(set(names)) == len(names)
    ids = [command.admin_id for command in COMMANDS if command.admin_id is not None]
    assert len(set(ids)) == len(ids)
    for command in COMMANDS:
        assert command.name == command.name.lower() and " " not in command.name
        assert command.name not in {"open", "login", "close", "debug", "quit", "exit"}
        for argument in command.arguments:
            assert argument.name == argument.name.lower() and argument.name.isidentifier()
        assert command.summary.endswith(".")
        assert (command.action is not None) == (command.changes is Changes.THE_GAME)


def test_every_request_kind_is_one_the_database_takes():
    assert set(BY_REQUEST) <= set(KINDS)
    assert {c.name for c in COMMANDS if c.changes in (Changes.THE_GAME, Changes.WHERE_IT_RUNS)} == {
        c.name for c in BY_REQUEST.values()
    }
    assert BY_NAME["end-turn"].without_server is WithoutServer.WAITS_FOR_THE_SERVER
    assert BY_NAME["end-turn"].pins_the_turn


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90m", 5400),
        ("2h", 7200),
        ("1d", 86400),
        ("1h30m", 5400),
        ("3600", 3600),
        ("1.5h", 5400),
        ("366d", 31622400),
    ],
)
def test_durations(text, seconds):
    assert EXTENSION.parse(text) == seconds
    assert EXTENSION.check(seconds) == seconds


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("0", "the extension must be longer than 0 s, not '0'"),
        ("-5", "the extension must be longer than 0 s, not '-5'"),
        ("-1h", "the extension must be longer than 0 s, not '-1h'"),
        ("4294967291", "the extension must be at most a year (366 d), not '4294967291'"),
        ("2147483648", "the extension must be at most a year (366 d), not '2147483648'"),
        ("367d", "the extension must be at most a year (366 d), not '367d'"),
        ("abc", "the extension must be a duration like 90m, 2h, 1d, 1h30m or 3600, not 'abc'"),
        ("", "the extension must be a duration like 90m, 2h, 1d, 1h30m or 3600, not ''"),
        ("1e9", "the extension must be a duration like 90m, 2h, 1d, 1h30m or 3600, not '1e9'"),
        ("٣", "the extension must be a duration like 90m, 2h, 1d, 1h30m or 3600, not '٣'"),
    ],
)
def test_durations_refused(text, words):
    with pytest.raises(ArgumentRefused) as refused:
        EXTENSION.parse(text)
    assert str(refused.value) == words


@given(st.text(max_size=30))
def test_a_duration_is_refused_in_one_line_or_within_its_bounds(text):
    for kind in (EXTENSION, Duration("turn_length")):
        try:
            seconds = kind.parse(text)
        except ArgumentRefused as refused:
            assert "\n" not in str(refused) and len(str(refused)) < 200
        else:
            assert kind.minimum <= seconds <= LONGEST_DURATION_S <= LONGEST_WAIT_S


@given(st.integers(min_value=-(2**40), max_value=2**40))
def test_a_number_typed_or_stored_is_read_alike(number):
    for kind in (WholeNumber("max_players"), Duration("turn_length"), EXTENSION):
        typed: object
        stored: object
        try:
            typed = kind.parse(str(number))
        except ArgumentRefused as refused:
            typed = str(refused)
        try:
            stored = kind.check(number)
        except ArgumentRefused as refused:
            stored = str(refused)
        assert typed == stored
        if isinstance(typed, int):
            assert 0 <= typed <= LARGEST_NUMBER


def test_stored_values_are_checked_again():
    """A request queued by another version (or written by hand) meets the same bounds."""
    extend = BY_NAME["extend"]
    for stored in (-5, 0, 4294967291, True, "3600", float("nan")):
        with pytest.raises(ArgumentRefused):
            extend.checked({"seconds": stored})
    assert extend.checked({"seconds": 3600}) == {"seconds": 3600}
    with pytest.raises(ArgumentRefused, match="turn_length cannot be negative"):
        BY_NAME["set"].checked({"key": "turn_length", "value": "-1"})
    with pytest.raises(ArgumentRefused, match="the set request has no value"):
        BY_NAME["set"].checked({"key": "turn_length"})


def test_the_admin_words_and_the_command_line_words_are_read_by_one_function():
    values = BY_NAME["set"].read(["g", "Turn-Length", "2h"])
    assert values == {"game": "g", "key": "Turn-Length", "value": "2h"}
    with pytest.raises(ArgumentRefused, match="takes GAME KEY VALUE, not 2 words"):
        BY_NAME["set"].read(["g", "timer"])
    with pytest.raises(
        ArgumentRefused, match="timer must be one of basic, playersfinished, threshold, calendar"
    ):
        BY_NAME["set"].read(["g", "timer", "hourly"])


def test_secrets_are_hashed_by_the_policy_of_the_channel():
    add = BY_NAME["add-player"]
    values = add.read(["g", "ann", "hunter22"])
    payload = successResultOf(defer.ensureDeferred(add.payload(values, InlineHasher(n=16))))
    assert payload["username"] == "ann" and payload["password_hash"].startswith("scrypt$")
    assert "hunter22" not in str(payload) and payload["email"] == "" and payload["comment"] == ""


def test_switches_names_and_settings():
    assert [YesNo("x").parse(word) for word in ("yes", "ON", "1", "no", "false", "0")] == [True] * 3 + [
        False
    ] * 3
    for bad in ("", "-", "a@b", " padded", "x" * 201, "tab\there"):
        with pytest.raises(ArgumentRefused, match="is not a usable game name"):
            NewGameName().parse(bad)
    assert NewGameName().parse("autumn league") == "autumn league"
    assert setting_named("Turn-Length").key == "turn_length"
    assert {setting.key for setting in SETTINGS} >= {"turn_length", "timer", "max_players", "schedule"}
    with pytest.raises(ArgumentRefused, match="no setting 'colour'"):
        setting_named("colour")
