"""The [admin] configuration section, `tae-server admin-user`, and starting the listener."""

from __future__ import annotations

import tomllib

import pytest
from click.testing import CliRunner
from twisted.internet.task import Clock

from server.admin.listener import build_factory
from server.cli.admin_user import admin_user
from server.config.admin import AdminSettings, parse_admin_settings
from server.config.errors import ConfigError
from server.game.passwords import InlineHasher, verify_password

HASH = "scrypt$16384$8$1$00ff$aabb"


def test_a_full_section():
    settings = parse_admin_settings(
        {"listen": "tcp:6925:interface=127.0.0.1", "log_level": "debug", "users": {"tpadm": HASH}}
    )
    assert settings.listen == ("tcp:6925:interface=127.0.0.1",)
    assert settings.log_level == "debug"
    assert dict(settings.users) == {"tpadm": HASH}
    assert settings.with_listen(["ssl:6926"]).listen == ("ssl:6926",)


def test_defaults_are_no_listener_and_info():
    settings = parse_admin_settings({})
    assert settings == AdminSettings()
    assert settings.listen == () and settings.log_level == "info" and not settings.users


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"port": 6925}, "admin: unknown setting 'port'"),
        ({"listen": 6925}, "admin.listen: expected str | array, not int"),
        ({"log_level": "loud"}, "admin.log_level: expected one of debug, info, warn, error, critical"),
        ({"users": ["tpadm"]}, "admin.users: expected object, not array"),
        ({"users": {"TpAdm": HASH}}, "admin.users.TpAdm: an admin name must be lower case"),
        ({"users": {"tpadm": "secret7"}}, "admin.users.tpadm: expected a password hash made by"),
        ("yes", "admin: expected object, not str"),
        ({"listen": [""]}, "admin.listen: an endpoint string cannot be empty"),
    ],
)
def test_mistakes_are_one_line_naming_the_key(table, message):
    with pytest.raises(ConfigError) as caught:
        parse_admin_settings(table)
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


def test_a_listener_without_accounts_is_a_configuration_error():
    with pytest.raises(ConfigError, match="admin-user NAME"):
        build_factory(AdminSettings(listen=("tcp:0",)), object(), Clock(), InlineHasher())


def test_admin_user_prints_a_line_that_parses_and_verifies():
    result = CliRunner().invoke(admin_user, ["tpadm", "--password", "secret7"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "[admin.users]"
    section = tomllib.loads(result.stdout)["admin"]
    settings = parse_admin_settings(section)
    assert verify_password("secret7", settings.users["tpadm"])
    assert "add this line under [admin.users]" in result.stderr


def test_admin_user_asks_twice_for_the_password(monkeypatch):
    monkeypatch.setattr("server.cli.password_prompt.terminal_available", lambda: True)
    result = CliRunner().invoke(admin_user, ["tpadm"], input="secret7\nsecret7\n")
    assert result.exit_code == 0, result.output
    assert 'tpadm = "scrypt$' in result.stdout


def test_admin_user_without_a_terminal_asks_for_password_in_one_line(monkeypatch):
    monkeypatch.setattr("server.cli.password_prompt.terminal_available", lambda: False)
    result = CliRunner().invoke(admin_user, ["tpadm"], input="secret7\nsecret7\n")
    assert result.exit_code == 2
    assert "give --password (or run on a terminal)" in result.output
    assert "Password:" not in result.output


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["TpAdm", "--password", "secret7"], "lower case"),
        (["tpadm", "--password", "Secret7"], "lower-cases what is typed"),
        (["tpadm", "--password", ""], "empty"),
        (["a@b", "--password", "x"], "'@'"),
    ],
)
def test_admin_user_refuses_what_tpadmin_cpp_could_never_send(args, problem):
    result = CliRunner().invoke(admin_user, args)
    assert result.exit_code == 2
    assert problem in result.output
