"""Connection settings: flags > environment > config file > defaults; bad settings exit 2;
passwords never shown."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from clients.cli import EXIT_CODES, cli
from clients.cli_settings import SettingsError, default_config_path, resolve_settings
from protocol import Version
from tests.support.json_schemas import json_answer

NO_FLAGS = dict.fromkeys(("host", "port", "user", "password", "protocol", "timeout"))


def write_config(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_defaults_without_anything(tmp_path):
    settings = resolve_settings(NO_FLAGS, {"XDG_CONFIG_HOME": str(tmp_path)})
    assert (settings.host, settings.port, settings.user, settings.password) == ("localhost", 6923, None, None)
    assert settings.version == Version.TP04 and settings.timeout == 30.0
    assert set(settings.sources.values()) == {"default"} and settings.config_path is None


def test_flags_beat_environment_beat_file_beat_defaults(tmp_path):
    config = write_config(
        tmp_path / "c.toml",
        'host = "file-host"\nport = 1111\nuser = "file"\npassword = "file-pw"\nprotocol = "tp03"\n',
    )
    environ = {"TAE_PORT": "2222", "TAE_USER": "env@tae", "TAE_CLIENT_CONFIG": str(config)}
    flags = dict(NO_FLAGS, user="flag")
    settings = resolve_settings(flags, environ)
    assert settings.host == "file-host" and settings.sources["host"] == "file"
    assert settings.port == 2222 and settings.sources["port"] == "env"
    assert settings.user == "flag" and settings.sources["user"] == "flag"
    assert settings.password == "file-pw" and settings.version == Version.TP03
    assert settings.timeout == 30.0 and settings.sources["timeout"] == "default"
    assert settings.config_path == config
    # --config beats $TAE_CLIENT_CONFIG
    other = write_config(tmp_path / "other.toml", 'host = "other"\n')
    assert resolve_settings(NO_FLAGS, environ, other).host == "other"


def test_the_default_config_file_is_read_if_present(tmp_path):
    environ = {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    assert resolve_settings(NO_FLAGS, environ).config_path is None
    path = write_config(default_config_path(environ), 'user = "carol@tae"\n')
    settings = resolve_settings(NO_FLAGS, environ)
    assert (settings.user, settings.username, settings.game) == ("carol@tae", "carol", "tae")
    assert settings.config_path == path
    home = {"HOME": str(tmp_path / "home")}
    assert default_config_path(home) == tmp_path / "home" / ".config" / "tae-client" / "config.toml"


@pytest.mark.parametrize(
    ("flags", "environ", "config", "message"),
    [
        ({"port": "http"}, {}, None, "--port: the port must be a number from 1 to 65535"),
        ({}, {"TAE_PORT": "70000"}, None, "$TAE_PORT: the port must be a number"),
        ({}, {"TAE_PROTOCOL": "tp05"}, None, "the protocol must be tp03 or tp04, not 'tp05'"),
        ({"timeout": "-1"}, {}, None, "--timeout: the timeout must be a positive number"),
        ({"user": "@tae"}, {}, None, "the user must be NAME or NAME@GAME"),
        ({}, {}, "port = true\n", "c.toml: port: the port must be a number"),
        ({}, {}, "password = 12\n", "c.toml: password: must be a string"),
        ({}, {}, "hots = 'x'\n", "unknown key 'hots'"),
        ({}, {}, "host = \n", "is not valid TOML"),
    ],
)
def test_bad_settings(tmp_path, flags, environ, config, message):
    path = write_config(tmp_path / "c.toml", config) if config is not None else None
    with pytest.raises(SettingsError, match=re.escape(message)):
        resolve_settings(dict(NO_FLAGS, **flags), environ, path)


def test_a_named_config_file_must_exist(tmp_path):
    with pytest.raises(SettingsError, match="does not exist"):
        resolve_settings(NO_FLAGS, {}, tmp_path / "missing.toml")
    with pytest.raises(SettingsError, match="does not exist"):
        resolve_settings(NO_FLAGS, {"TAE_CLIENT_CONFIG": str(tmp_path / "missing.toml")})


def test_settings_command_masks_the_password(tmp_path, monkeypatch):
    config = write_config(tmp_path / "c.toml", 'password = "s3cret-pw"\nhost = "h"\n')
    monkeypatch.setenv("TAE_USER", "alice")
    result = CliRunner().invoke(cli, ["--config", str(config), "--port", "7000", "--json", "settings"])
    assert result.exit_code == 0, result.output
    data = json_answer(result.stdout)
    assert data["password"] == "********" and "s3cret-pw" not in result.output
    assert data["sources"] == {
        "host": "file",
        "port": "flag",
        "user": "env",
        "password": "file",
        "protocol": "default",
        "timeout": "default",
        "web_url": "default",
    }
    text = CliRunner().invoke(cli, ["--config", str(config), "settings"]).stdout
    assert "password  ********  (file)" in text and "s3cret-pw" not in text


def test_bad_config_exits_2_with_one_line(tmp_path):
    config = write_config(tmp_path / "c.toml", "port = 'x'\n")
    result = CliRunner().invoke(cli, ["--config", str(config), "status"])
    assert result.exit_code == 2
    assert result.stderr == f"tae-client: {config}: port: the port must be a number from 1 to 65535\n"


def test_missing_credentials_exit_2_without_prompting():
    result = CliRunner().invoke(cli, ["--user", "alice", "status"])
    assert result.exit_code == 2
    assert result.stderr.startswith("tae-client: no password: give --password")
    result = CliRunner().invoke(cli, ["status"])
    assert result.exit_code == 2 and "no user" in result.stderr


def test_usage_errors_are_one_line_with_exit_2():
    result = CliRunner().invoke(cli, ["--frobnicate", "status"])
    assert result.exit_code == 2
    assert result.stderr == ("tae-client: No such option '--frobnicate'. (see 'tae-client --help')\n")
    assert result.stderr.count("\n") == 1
    result = CliRunner().invoke(cli, ["order", "insert"])
    assert result.exit_code == 2 and "Missing argument 'FLEET'" in result.stderr
    result = CliRunner().invoke(cli, ["conquer"])
    assert result.exit_code == 2 and "No such command 'conquer'" in result.stderr


def test_help_documents_exit_codes_and_settings():
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    for code, text in EXIT_CODES.items():
        assert f"{code:<3} {text}" in result.stdout
    assert "TAE_PASSWORD" in result.stdout and "config.toml" in result.stdout
    for command in (
        "create-account",
        "status",
        "board",
        "fleets",
        "messages",
        "orders",
        "order",
        "submit",
        "finish",
        "wait",
        "play",
        "settings",
    ):
        assert command in result.stdout


def test_a_password_file_others_can_read_gets_a_warning(tmp_path):
    config = write_config(tmp_path / "c.toml", 'password = "s3cret-pw"\nuser = "alice"\n')
    config.chmod(0o644)
    settings = resolve_settings(NO_FLAGS, {}, config)
    assert settings.warnings == (
        f"warning: config file {config} holds a password and everyone can read it (mode 0644); "
        f"run: chmod 600 {config}",
    )
    config.chmod(0o640)
    assert "its group can read it (mode 0640)" in resolve_settings(NO_FLAGS, {}, config).warnings[0]
    result = CliRunner().invoke(cli, ["--config", str(config), "settings"])
    assert result.exit_code == 0
    assert result.stderr.startswith(f"tae-client: warning: config file {config} holds a password")
    assert "s3cret-pw" not in result.output
    config.chmod(0o600)
    assert resolve_settings(NO_FLAGS, {}, config).warnings == ()
    public = write_config(tmp_path / "public.toml", 'host = "h"\n')
    public.chmod(0o644)
    assert resolve_settings(NO_FLAGS, {}, public).warnings == ()  # no password, nothing to hide


def test_tls_settings_from_every_source(tmp_path):
    config = write_config(tmp_path / "c.toml", 'tls = true\nca_file = "/etc/tae/ca.pem"\n')
    settings = resolve_settings(NO_FLAGS, {}, config)
    assert (settings.tls, settings.ca_file, settings.insecure, settings.port) == (
        True,
        "/etc/tae/ca.pem",
        False,
        6924,
    )
    assert settings.sources["port"] == "default"
    settings = resolve_settings(dict(NO_FLAGS, tls=False), {"TAE_INSECURE": "yes"}, config)
    assert (settings.tls, settings.insecure, settings.port) == (False, True, 6923)
    with pytest.raises(SettingsError, match=re.escape("$TAE_TLS: must be true or false")):
        resolve_settings(NO_FLAGS, {"TAE_TLS": "maybe"})
    data = json_answer(CliRunner().invoke(cli, ["--config", str(config), "--json", "settings"]).stdout)
    assert data["tls"] == {
        "enabled": True,
        "ca_file": "/etc/tae/ca.pem",
        "insecure": False,
        "sources": {"tls": "file", "ca_file": "file", "insecure": "default"},
    }


def test_a_missing_command_is_a_one_line_usage_error():
    result = CliRunner().invoke(cli, [])
    assert (result.exit_code, result.stderr) == (2, "tae-client: missing command (see 'tae-client --help')\n")
    result = CliRunner().invoke(cli, ["order"])
    assert (result.exit_code, result.stderr) == (
        2,
        "tae-client: missing command (see 'tae-client order --help')\n",
    )


def test_settings_text_shows_the_web_address():
    result = CliRunner().invoke(cli, ["--host", "tae.example.org", "settings"], env={"TAE_CLIENT_CONFIG": ""})
    assert "web_url   http://tae.example.org:8080  (default)" in result.stdout
    given = CliRunner().invoke(
        cli, ["--web-url", "https://w.example.org", "settings"], env={"TAE_CLIENT_CONFIG": ""}
    )
    assert "web_url   https://w.example.org  (flag)" in given.stdout
