"""`tae-client bot` hands its arguments to the bot runner, with tae-client's connection settings."""

import socket

from click.testing import CliRunner

from clients.cli import cli


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_bot_uses_the_settings_and_reports_a_server_that_is_down():
    port = closed_port()
    result = CliRunner().invoke(
        cli, ["--host", "127.0.0.1", "--port", str(port), "bot", "-n", "2", "--timeout", "2", "--json"]
    )
    assert result.exit_code == 1
    assert f"127.0.0.1:{port}" in result.output and result.output.count("ConnectFailed") == 2


def test_bot_usage_errors_exit_2():
    result = CliRunner().invoke(cli, ["bot", "--count", "many"])
    assert result.exit_code == 2
