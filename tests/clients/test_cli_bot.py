"""`tae-client bot`: a click command like the others, with tae-client's connection settings,
its help (the default password) and its exit codes."""

from click.testing import CliRunner

from clients.cli import cli
from tests.support.json_schemas import json_answer


def test_bot_uses_the_settings_and_a_server_that_is_down_is_exit_3(closed_port):
    port = closed_port
    result = CliRunner().invoke(
        cli, ["--host", "127.0.0.1", "--port", str(port), "--timeout", "2", "--json", "bot", "-n", "2"]
    )
    assert result.exit_code == 3, result.output
    data = json_answer(result.stdout)
    assert [bot["name"] for bot in data["bots"]] == ["bot1", "bot2"]
    assert all(bot["failure"] == "connection" and not bot["ok"] for bot in data["bots"])
    assert all(f"127.0.0.1:{port}" in bot["error"] for bot in data["bots"])
    assert result.stderr.startswith("tae-client: 2 of 2 bots did not finish; bot1: ConnectFailed")
    assert result.stderr.count("\n") == 1


def test_the_table_names_every_bot(closed_port):
    port = closed_port
    result = CliRunner().invoke(cli, ["--port", str(port), "--timeout", "1", "bot", "ann", "bob"])
    assert result.exit_code == 3
    assert "ann" in result.stdout and "bob" in result.stdout and "ERROR" in result.stdout
    assert "2 bots in" in result.stdout


def test_bot_usage_errors_exit_2():
    for args in (
        ["bot", "--count", "many"],
        ["bot", "--count", "0"],
        ["bot", "x", "x"],
        ["bot", "--strategy", "x"],
    ):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 2, (args, result.output)
        assert result.stderr.startswith("tae-client: ") and result.stderr.count("\n") == 1
    result = CliRunner().invoke(cli, ["--protocol", "tp05", "bot"])
    assert result.exit_code == 2 and "tp03 or tp04" in result.stderr


def test_bot_help_documents_the_password_and_the_exit_codes():
    result = CliRunner().invoke(cli, ["bot", "--help"])
    assert result.exit_code == 0
    text = " ".join(result.stdout.split())
    assert "Password of the bots' accounts (created if new). [default: bot-password]" in text
    assert "--count" in text and "--deadline" in text and "--json" in text
    assert "3 connection lost or refused" in text and "5 the deadline" in text
    assert "bot" in CliRunner().invoke(cli, ["--help"]).stdout


def test_version_comes_from_the_installed_distribution():
    from importlib.metadata import version

    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert result.stdout.strip() == f"tae-client {version('tpserver-tae')}"
