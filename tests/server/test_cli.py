"""`tae-server` subcommands: their output and exit status, and one-line errors for every kind of
mistake (exit 2 for usage and configuration, 1 for operations that fail). In process through
`server.cli.main`, except where the reactor runs (`serve`), which runs as a subprocess.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

from server.cli import main
from server.database import SyncDatabase, head_revision, upgrade
from tests.integration.server_process import ROOT, ServerProcess, tae_server
from tests.support.json_schemas import json_answer

pytestmark = pytest.mark.timeout(60)


def run(capsys, *args: str) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of `tae-server ARGS`."""
    try:
        main(list(args))
        code = 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("tae-server: "), err
    assert "Traceback" not in err
    return lines[0]


@pytest.fixture
def url(tmp_path):
    return f"sqlite:///{tmp_path / 'tae.db'}"


def test_without_a_command_the_help_goes_to_stderr_and_it_is_a_usage_error(capsys):
    code, out, err = run(capsys)
    assert code == 2 and out == ""
    assert "Commands:" in err and "a command is needed" in err


def test_version(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.startswith("tae-server ") and out.split()[1][0].isdigit()


def test_help_lists_every_command(capsys):
    code, out, _ = run(capsys, "--help")
    assert code == 0
    for command in (
        "serve",
        "create-game",
        "list-games",
        "status",
        "add-player",
        "remove-player",
        "end-turn",
        "upgrade-db",
    ):
        assert command in out
    code, out, _ = run(capsys, "create-game", "--help")
    assert code == 0 and "--max-players" in out and "--threshold" in out


def test_create_list_and_status(capsys, url, tmp_path):
    map_file = tmp_path / "map.txt"
    map_file.write_text("A..M\n....\n.M.A\n")
    code, out, err = run(
        capsys,
        "create-game",
        "small",
        "--database",
        url,
        "--map",
        str(map_file),
        "--seed",
        "42",
        "--max-players",
        "3",
        "--timer",
        "threshold",
        "--turn-length",
        "600",
        "--threshold",
        "50",
        "--over",
        "60",
        "--under",
        "0",
        "--no-account-creation",
    )
    assert (code, err) == (0, "")
    assert out.startswith("game 'small' created (id 1, seed 42); no server is running")
    code, out, _ = run(capsys, "create-game", "big", "--database", url, "--auto-add")
    assert code == 0 and "game 'big' created (id 2, seed " in out

    code, out, _ = run(capsys, "list-games", "--database", url)
    assert code == 0
    assert "2 games" in out and "small" in out and "big" in out and "custom 4×3" in out
    assert "threshold" in out and "closed" in out and "auto" in out and "server: not running" in out
    code, out, _ = run(capsys, "list-games", "--database", url, "--json")
    games = json_answer(out)["games"]
    assert [(g["name"], g["seed"], g["max_players"], g["timer"], g["turn"]) for g in games] == [
        ("small", 42, 3, "threshold", 0),
        ("big", games[1]["seed"], 8, "playersfinished", 0),  # DEFAULT_MAX_PLAYERS
    ]

    assert run(capsys, "add-player", "small", "ann", "--password", "ann-password", "--database", url)[0] == 0
    code, out, _ = run(capsys, "status", "small", "--database", url)
    assert code == 0
    assert "game 'small' (id 1): turn 0 open (normal turn)" in out
    assert "custom 4×3, seed 42" in out and "ann" in out and "waiting" in out
    assert "server: not running" in out
    code, out, _ = run(capsys, "status", "small", "--database", url, "--json")
    data = json_answer(out)
    assert data["players"][0]["name"] == "ann" and data["waiting_for"] == ["ann"]
    assert data["server"] is None and data["turn"] == 0 and data["phase"] == "normal"


def test_players_and_turns_offline(capsys, url):
    run(capsys, "create-game", "g", "--database", url, "--seed", "1")
    code, out, err = run(
        capsys,
        "add-player",
        "g",
        "ann",
        "--password",
        "ann-pass",
        "--database",
        url,
        "--email",
        "ann@example.org",
    )
    assert (code, out, err) == (0, "player 'ann' added to game 'g' as player 1\n", "")
    assert run(capsys, "add-player", "g", "bob", "--password", "bob-pass", "--database", url)[0] == 0
    code, _, err = run(capsys, "add-player", "g", "ann", "--password", "other-pass", "--database", url)
    assert code == 1 and one_line_error(err) == "tae-server: game 'g' already has a player named 'ann'"
    code, out, _ = run(capsys, "remove-player", "g", "bob", "--database", url)
    assert (code, out) == (0, "player 'bob' (player 2) removed from game 'g'\n")
    code, _, err = run(capsys, "remove-player", "g", "zed", "--database", url)
    assert code == 1 and "no player named 'zed'" in one_line_error(err)
    code, out, _ = run(capsys, "end-turn", "g", "--database", url)
    assert code == 0 and out.startswith("queued as request #1: no server is running; turn 0 of game 'g'")
    with SyncDatabase(url) as db:
        stored = db.load_games()[0]
        assert [a.username for a in stored.accounts] == ["ann", "bob"] and stored.removed_players == {2}
        assert db.requests.get(1).status == "pending"


@pytest.mark.parametrize("command", ["add-player", "set-password"])
def test_without_a_terminal_a_password_must_be_given(capsys, url, monkeypatch, command):
    monkeypatch.setattr("server.cli.password_prompt.terminal_available", lambda: False)
    run(capsys, "create-game", "g", "--database", url, "--seed", "1")
    run(capsys, "add-player", "g", "ann", "--password", "ann-pass", "--database", url)
    code, out, err = run(capsys, command, "g", "ann", "--database", url)
    assert code == 2 and out == ""
    assert one_line_error(err) == (
        "tae-server: no terminal to ask for the password on: give --password (or run on a terminal)"
    )


def test_the_database_from_the_config_file_and_flags_over_it(capsys, tmp_path, url):
    config = tmp_path / "tae.toml"
    config.write_text(f'database = "{url}"\n[game]\ntimer = "basic"\nturn_length = 90\n')
    code, out, _ = run(capsys, "create-game", "g", "--config", str(config))
    assert code == 0
    code, out, _ = run(capsys, "list-games", "--config", str(config), "--json")
    assert (
        json_answer(out)["games"][0]["timer"] == "basic" and json_answer(out)["games"][0]["turn_length"] == 90
    )
    other = f"sqlite:///{tmp_path / 'other.db'}"
    assert run(capsys, "create-game", "h", "--config", str(config), "--database", other)[0] == 0
    _, out, _ = run(capsys, "list-games", "--database", other, "--json")
    assert [g["name"] for g in json_answer(out)["games"]] == ["h"]


def test_upgrade_db(capsys, tmp_path):
    url = f"sqlite:///{tmp_path / 'new.db'}"
    code, out, _ = run(capsys, "upgrade-db", "--database", url)
    assert (code, out) == (
        0,
        f"database {url} upgraded from revision none to {head_revision()} (the newest)\n",
    )
    code, out, _ = run(capsys, "upgrade-db", "--database", url)
    assert (code, out) == (0, f"database {url} is at revision {head_revision()} (the newest)\n")
    old = f"sqlite:///{tmp_path / 'old.db'}"
    upgrade(old, "0001")
    code, _, err = run(capsys, "list-games", "--database", old)
    assert code == 1 and "run `tae-server upgrade-db` first" in one_line_error(err)
    code, out, _ = run(capsys, "upgrade-db", "--database", old)
    assert code == 0 and f"from revision 0001 to {head_revision()}" in out


@pytest.mark.parametrize(
    "args, words",
    [
        (["create-game"], "Missing argument 'NAME'"),
        (["create-game", "g", "--seed", "x"], "the seed must be a whole number, not 'x'"),
        (
            ["create-game", "g", "--timer", "hourly"],
            "timer must be one of basic, playersfinished, threshold, calendar, not 'hourly'",
        ),
        (["create-game", "g", "--turn-length", "-5"], "turn_length cannot be negative, not '-5'"),
        (["create-game", "g", "--threshold", "150"], "turn_player_threshold must be at most 100, not '150'"),
        (["create-game", "a@b"], "'a@b' is not a usable game name"),
        (["create-game", "g", "--map", "/nonexistent/map.txt"], "map: cannot read /nonexistent/map.txt"),
        (["list-games", "--colour"], "No such option '--colour'"),
        (["status"], "Missing argument 'GAME'"),
        (["add-player", "g"], "Missing argument 'NAME'"),
        (["remove-player", "g", "x", "--wait", "-1"], "Invalid value for '--wait'"),
        (["end-turn"], "Missing argument 'GAME'"),
        (["upgrade-db", "extra"], "Got unexpected extra argument"),
        (["serve", "--listen"], "Option '--listen' requires an argument"),
        (["serve", "--log-format", "xml"], "Invalid value for '--log-format'"),
        (
            ["serve", "--timer", "threshold", "--turn-length", "-1"],
            "turn_length cannot be negative, not '-1'",
        ),
        (["frobnicate"], "No such command 'frobnicate'"),
    ],
)
def test_bad_arguments_are_one_line_and_exit_2(capsys, url, args, words):
    code, out, err = run(
        capsys,
        *args,
        *(
            ["--database", url]
            if args[0] != "frobnicate" and "serve" not in args and "--database" not in args
            else []
        ),
    )
    assert code == 2, (out, err)
    assert words in one_line_error(err)


def test_a_bad_map_file_is_a_configuration_error(capsys, url, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("AXM\n")
    code, _, err = run(capsys, "create-game", "g", "--map", str(bad), "--database", url)
    assert code == 2 and f"map {bad}" in one_line_error(err)
    code, _, err = run(capsys, "serve", "--map", str(bad), "--database", url)
    assert code == 2 and f"map {bad}" in one_line_error(err)


@pytest.mark.parametrize(
    "text, words",
    [
        ("colour = 1\n", "unknown setting 'colour'"),
        ("database = 5\n", "database: expected str"),
        ("[game]\nseed = 'x'\n", "game.seed"),
        ("[game]\ntimer = 'daily'\n", "timer"),
        ("[game]\nturn_player_threshold = 300\n", "percentage"),
        ("log_format = 'xml'\n", "log_format"),
        ("listen = [\n", "not valid TOML"),
        ("listen = []\n", "listen"),
    ],
)
@pytest.mark.parametrize(
    "command",
    [["serve"], ["list-games"], ["create-game", "g"], ["status", "g"], ["end-turn", "g"], ["upgrade-db"]],
)
def test_bad_configuration_is_one_line_and_exit_2(capsys, tmp_path, text, words, command):
    config = tmp_path / "tae.toml"
    config.write_text(text)
    code, _, err = run(capsys, *command, "--config", str(config))
    assert code == 2
    assert words in one_line_error(err)


def test_a_missing_configuration_file(capsys):
    code, _, err = run(capsys, "list-games", "--config", "/nonexistent/tae.toml")
    assert code == 2 and "cannot read configuration /nonexistent/tae.toml" in one_line_error(err)


def test_operational_failures_are_one_line_and_exit_1(capsys, url, tmp_path):
    code, _, err = run(capsys, "list-games", "--database", url)
    assert code == 1 and "no such file" in one_line_error(err)
    run(capsys, "create-game", "g", "--database", url)
    for args in (
        ["status", "nope"],
        ["end-turn", "nope"],
        ["add-player", "nope", "a", "--password", "a-password"],
        ["remove-player", "nope", "a"],
    ):
        code, _, err = run(capsys, *args, "--database", url)
        assert code == 1 and "no game named 'nope' (games: g)" in one_line_error(err), args
    code, _, err = run(capsys, "create-game", "g", "--database", url)
    assert code == 1 and one_line_error(err) == "tae-server: a game named 'g' exists"
    code, _, err = run(capsys, "list-games", "--database", "mysql://nobody@127.0.0.1:1/x")
    assert code == 1 and one_line_error(err).startswith("tae-server: database: cannot")
    code, _, err = run(capsys, "upgrade-db", "--database", f"sqlite:///{tmp_path}/no/such/dir/x.db")
    assert code == 1 and "cannot" in one_line_error(err)


# -- serve, as a process ------------------------------------------------------------------------


def test_serve_refuses_a_bad_endpoint_in_one_line(tmp_path):
    done = tae_server(
        "serve", "--database", f"sqlite:///{tmp_path / 'tae.db'}", "--listen", "carrier-pigeon:1"
    )
    assert done.returncode == 2
    assert "listen: 'carrier-pigeon:1' is not a usable endpoint" in one_line_error(done.stderr)


def test_serve_logs_json_lines_and_stops_on_sigterm(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'tae.db'}"
    server = ServerProcess(url, "--game-name", "open")
    try:
        port = server.start()
        assert port > 0
        server.wait_for(lambda e: e.get("message", "").startswith("game 'open'") and e.get("name") == "open")
        assert all({"time", "level", "logger", "message"} <= set(e) for e in server.events)
        # a second server on the same database is refused while the first runs
        second = tae_server("serve", "--database", url, "--listen", "tcp:0:interface=127.0.0.1")
        assert second.returncode == 1
        assert "another server is using this database" in one_line_error(second.stderr)
        # the CLI sees the running server
        code, out, _ = run(capsys, "list-games", "--database", url)
        assert code == 0 and "server: running (pid" in out
        assert server.terminate() == 0
        assert server.stderr == ""
        assert all(json_line for json_line in server.lines if json.loads(json_line))
        code, out, _ = run(capsys, "list-games", "--database", url)
        assert "server: not running" in out
    finally:
        server.kill()


def test_serve_text_logs_say_where_to_connect_first(tmp_path):
    """What `make run` shows: the first lines say where the server listens and how to connect."""
    command = [
        sys.executable,
        "-m",
        "server.cli",
        "serve",
        "--listen",
        "tcp:0:interface=127.0.0.1",
        "--database",
        f"sqlite:///{tmp_path / 'tae.db'}",
    ]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines: list[str] = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not any("log in as <name>@tae" in line for line in lines):
            line = process.stdout.readline()
            if not line:
                break
            lines.append(line)
        assert any("listening on 127.0.0.1:" in line for line in lines[:3]), lines
        assert any("Connect a Thousand Parsec client to localhost:" in line for line in lines[:4]), lines
        process.send_signal(signal.SIGINT)
        assert process.wait(30) == 0
        assert process.stderr.read() == ""
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)


def test_turn_lengths_are_durations(tmp_path):
    from click.testing import CliRunner

    from server.cli import cli

    url = f"sqlite:///{tmp_path / 'd.db'}"
    made = CliRunner().invoke(cli, ["create-game", "weekly", "--turn-length", "1d", "--database", url])
    assert made.exit_code == 0, made.output
    listed = CliRunner().invoke(cli, ["list-games", "--json", "--database", url])
    assert '"turn_length": 86400' in listed.output
    bad = CliRunner().invoke(cli, ["create-game", "other", "--turn-length", "soon", "--database", url])
    assert bad.exit_code == 2 and "turn_length must be a duration like 90m" in bad.output


def test_a_database_of_another_kind_is_named_as_unsupported(capsys):
    code, _, err = run(capsys, "list-games", "--database", "mysql://tae@localhost/tae")
    assert code != 0 and "SQLite (sqlite:///FILE) or PostgreSQL" in err and "not mysql" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
