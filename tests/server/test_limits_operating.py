"""Operating a hardened server, in process: the [limits] settings and --limit flags, flat JSON
log lines, stopping once however many signals come, consistent backups of SQLite, read-only
databases, and the set-password and backup commands."""

from __future__ import annotations

import io
import json
import os
import shutil
import sqlite3

import pytest
from twisted.logger import Logger, LogLevel

from server.cli import main
from server.cli.logs import FlatJSONObserver, flat_event, observer_for
from server.cli.runner import Runner
from server.config.errors import ConfigError
from server.config.file import load_config
from server.config.limits import Limits, apply_limits, limit_names, parse_limit_flag
from server.database import SyncDatabase, upgrade
from server.database.engine import is_read_only_sqlite, readable_url
from server.model.store import GameSetup, OrderEntry
from server.operating.backup import backup
from server.operating.game_actions import OperationError
from tests.server.test_cli import one_line_error, run

# -- [limits] ---------------------------------------------------------------------------------


def write(tmp_path, text):
    path = tmp_path / "tae.toml"
    path.write_text(text)
    return str(path)


def test_every_limit_is_a_setting_with_a_generous_default(tmp_path):
    defaults = Limits()
    assert defaults.connections_per_address >= 7000
    text = "[limits]\n" + "".join(f"{name} = {getattr(defaults, name) * 2}\n" for name in limit_names())
    text = text.replace(f"password_hash_cost = {defaults.password_hash_cost * 2}", "password_hash_cost = 15")
    share = f"tp_descriptor_share = {defaults.tp_descriptor_share * 2}"
    text = text.replace(share, "tp_descriptor_share = 0.75")  # a share is below 1
    config = load_config(write(tmp_path, text))
    assert config.limits.connections_per_address == 20_000 and config.limits.password_hash_cost == 15
    assert config.limits.login_failure_delay == 2.0


@pytest.mark.parametrize(
    "text, words",
    [
        ("[limits]\nconections_per_address = 5\n", "conections_per_address"),
        ("[limits]\nframes_per_second = 'fast'\n", "limits.frames_per_second"),
        ("[limits]\nconnections_per_address = 1.5\n", "limits.connections_per_address"),
        ("[limits]\nlogin_idle_seconds = -1\n", "limits.login_idle_seconds cannot be negative"),
        ("[limits]\nhashing_threads = 0\n", "limits.hashing_threads must be at least 1"),
        ("[limits]\npassword_min_length = 0\n", "an empty password is never allowed"),
        ("[limits]\npassword_hash_cost = 30\n", "password_hash_cost must be 10 to 20"),
    ],
)
def test_a_bad_limit_names_the_setting(tmp_path, text, words):
    with pytest.raises(ConfigError, match=words):
        load_config(write(tmp_path, text))


def test_limit_flags():
    assert parse_limit_flag("connections_per_address=100") == ("connections_per_address", 100)
    assert parse_limit_flag("login-failure-delay=0.5") == ("login_failure_delay", 0.5)
    for bad, words in (
        ("nonsense", "NAME=VALUE"),
        ("speed=1", "unknown limit"),
        ("frame_burst=x", "integer"),
    ):
        with pytest.raises(ValueError, match=words):
            parse_limit_flag(bad)
    assert apply_limits(Limits(), {"frame_burst": 7}).frame_burst == 7
    with pytest.raises(ValueError, match="an integer"):
        apply_limits(Limits(), {"frame_burst": True})


def test_the_sample_configuration_lists_every_limit_at_its_default():
    import tomllib

    from tests.packaging.test_deploy import commented_section

    table = tomllib.loads(commented_section("limits"))["limits"]
    assert set(table) == set(limit_names())
    assert apply_limits(Limits(), table) == Limits()


def test_serve_refuses_a_bad_limit_flag_before_starting(capsys, tmp_path):
    code, _, err = run(
        capsys, "serve", "--database", f"sqlite:///{tmp_path}/t.db", "--limit", "hashing_threads=0"
    )
    assert code == 2 and one_line_error(err) == "tae-server: --limit hashing_threads must be at least 1"
    assert not (tmp_path / "t.db").exists()


# -- JSON logs --------------------------------------------------------------------------------


def test_a_json_log_line_is_one_flat_object(tmp_path):
    path = tmp_path / "log.jsonl"
    with path.open("w") as stream:
        log = Logger(namespace="server.example", observer=FlatJSONObserver(stream))
        log.info("listening on {host}:{port}", host="127.0.0.1", port=6923)
        log.warn("odd {thing}", thing=object(), time="an own field called time", nested={"a": (1, 2)})
        try:
            raise ValueError("broken\nin two lines")
        except ValueError:
            log.failure("handler failed for {message}", message="Login")
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    first, second, third = lines
    assert first == {
        "time": first["time"],
        "level": "info",
        "logger": "server.example",
        "message": "listening on 127.0.0.1:6923",
        "host": "127.0.0.1",
        "port": 6923,
    }
    assert first["time"].endswith("+00:00") and "T" in first["time"]
    assert second["level"] == "warn" and second["message"].startswith("odd <object")
    assert second["event_time"] == "an own field called time" and second["nested"] == {"a": [1, 2]}
    assert third["level"] == "critical" and third["error"] == "broken in two lines"
    assert "Traceback" in third["traceback"] and third["event_message"] == "Login"
    assert all(not key.startswith("log_") for line in lines for key in line)


def test_a_legacy_twisted_event_is_flattened_too():
    event = {
        "message": ("Main loop terminated.",),
        "isError": 0,
        "system": "-",
        "time": 1.0,
        "log_time": 1.0,
        "log_level": LogLevel.info,
        "log_namespace": "log_legacy",
        "log_format": "{log_text}",
        "log_text": "Main loop terminated.",
    }
    assert flat_event(event) == {
        "time": "1970-01-01T00:00:01+00:00",
        "level": "info",
        "logger": "log_legacy",
        "message": "Main loop terminated.",
    }


def test_the_ports_own_lines_are_left_out_of_the_log():
    def legacy(text: str) -> dict:
        return {
            "message": (text,),
            "isError": 0,
            "system": "-",
            "log_time": 1.0,
            "log_level": LogLevel.info,
            "log_namespace": "log_legacy",
            "log_format": "{log_text}",
            "log_text": text,
        }

    stream = io.StringIO()
    observer = observer_for("json", stream)
    for text in (
        "TPFactory starting on 6923",
        "LateFactory (TLS) starting on 6924",
        "LateFactory starting on '/run/tae.sock'",
        "(TCP Port 6923 Closed)",
        "(TLS Port 6924 Closed)",
        "(UNIX Port /run/tae.sock Closed)",
        "Main loop terminated.",
        "something else starting on a Monday",
    ):
        observer(legacy(text))
    kept = [json.loads(line)["message"] for line in stream.getvalue().splitlines()]
    assert kept == ["Main loop terminated.", "something else starting on a Monday"]


# -- signals ----------------------------------------------------------------------------------


class FakeReactor:
    running = True

    def __init__(self):
        self.stops = 0
        self.later = []

    def stop(self):
        if self.stops:
            raise AssertionError("the reactor was stopped twice")
        self.stops += 1

    def callFromThread(self, fn, *args):
        fn(*args)


def test_the_runner_stops_once_whatever_the_signals(capsys):
    from server.config.file import ServerConfig

    reactor = FakeReactor()
    runner = Runner(ServerConfig(), reactor)
    runner._signalled(15, None)
    runner._signalled(2, None)
    runner._signalled(15, None)
    assert reactor.stops == 1 and runner.stopping


# -- backups ----------------------------------------------------------------------------------


def game_with_orders(url: str, orders: int) -> SyncDatabase:
    upgrade(url)
    db = SyncDatabase(url)
    game_id = db.create_game(GameSetup("g", seed=3))
    for seq in range(1, orders + 1):
        db.record_order(game_id, OrderEntry(seq, 1, 1, 10 + seq, 0, 2, 0))
    return db


def test_a_backup_is_the_database_as_committed_while_it_is_in_use(tmp_path):
    url = f"sqlite:///{tmp_path / 'tae.db'}"
    db = game_with_orders(url, 3)
    # a reader holds the write-ahead log open, as a running server does: the newest commits
    # stay in tae.db-wal, and a plain copy of tae.db misses them
    reader = sqlite3.connect(tmp_path / "tae.db")
    reader.execute("SELECT count(*) FROM games").fetchone()
    db.record_order(1, OrderEntry(4, 1, 1, 14, 0, 2, 0))
    shutil.copy(tmp_path / "tae.db", tmp_path / "copied.db")
    done = backup(url, tmp_path / "backup.db")
    assert done.games == 1 and done.revision is not None and done.size > 0
    assert not (tmp_path / "backup.db-wal").exists()
    with SyncDatabase(f"sqlite:///{tmp_path / 'backup.db'}") as copy:
        assert [o.seq for o in copy.load_games()[0].orders] == [1, 2, 3, 4]
    plain = sqlite3.connect(tmp_path / "copied.db")
    try:
        copied_orders = plain.execute("SELECT count(*) FROM orders").fetchone()[0]
    except sqlite3.DatabaseError:
        copied_orders = None
    plain.close()
    assert copied_orders != 4, "a plain copy of a database in use lacks the newest commits"
    reader.close()
    db.close()


def test_backup_refusals(tmp_path):
    url = f"sqlite:///{tmp_path / 'tae.db'}"
    game_with_orders(url, 1).close()
    (tmp_path / "taken.db").write_text("keep me")
    with pytest.raises(OperationError, match="exists \\(use --force"):
        backup(url, tmp_path / "taken.db")
    assert (tmp_path / "taken.db").read_text() == "keep me"
    assert backup(url, tmp_path / "taken.db", force=True).games == 1
    with pytest.raises(OperationError, match="is the database itself"):
        backup(url, tmp_path / "tae.db", force=True)
    with pytest.raises(OperationError, match="no such file"):
        backup(f"sqlite:///{tmp_path / 'none.db'}", tmp_path / "x.db")
    with pytest.raises(OperationError, match="in-memory"):
        backup("sqlite://", tmp_path / "x.db")
    with pytest.raises(
        OperationError, match="pg_dump --format=custom --file=tae.dump postgresql://u:\\*\\*\\*@db/tae"
    ):
        backup("postgresql+psycopg://u:secret@db/tae", tmp_path / "x.db")
    assert not any(p.name.startswith(".x.db") for p in tmp_path.iterdir())


def test_backup_and_set_password_commands(capsys, tmp_path):
    url = f"sqlite:///{tmp_path / 'tae.db'}"
    assert run(capsys, "create-game", "g", "--database", url)[0] == 0
    assert run(capsys, "add-player", "g", "ann", "--password", "ann-password", "--database", url)[0] == 0
    code, out, _ = run(capsys, "set-password", "g", "ann", "--password", "new-password", "--database", url)
    assert (code, out) == (0, "password of player 'ann' (player 1) of game 'g' changed\n")
    code, _, err = run(capsys, "set-password", "g", "ann", "--password", "abc", "--database", url)
    assert code == 2 and "A password must have at least 6 characters." in one_line_error(err)
    code, out, _ = run(capsys, "backup", str(tmp_path / "copy.db"), "--database", url)
    assert code == 0 and out.startswith(f"backed up {url} to {tmp_path / 'copy.db'} (1 game, ")
    code, _, err = run(capsys, "backup", str(tmp_path / "copy.db"), "--database", url)
    assert (
        code == 1
        and one_line_error(err) == f"tae-server: {tmp_path / 'copy.db'} exists (use --force to replace it)"
    )
    copy = f"sqlite:///{tmp_path / 'copy.db'}"
    code, out, _ = run(capsys, "status", "g", "--database", copy)
    assert code == 0 and "ann" in out


# -- read-only databases ------------------------------------------------------------------------


def test_a_file_this_process_cannot_write_is_opened_read_only(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'tae.db'}"
    game_with_orders(url, 2).close()
    assert readable_url(url) == url  # writable: as it is
    real_access = os.access

    def no_writing(path, mode, **kwargs):
        if mode & os.W_OK and str(path).startswith(str(tmp_path)):
            return False
        return real_access(path, mode, **kwargs)

    monkeypatch.setattr(os, "access", no_writing)
    readable = readable_url(url)
    from sqlalchemy.engine import make_url

    assert is_read_only_sqlite(make_url(readable)) and "immutable=1" in readable
    with SyncDatabase(readable) as db:
        assert [o.seq for o in db.load_games()[0].orders] == [1, 2]
        with pytest.raises(Exception, match="readonly|read-only"):
            db.record_order(1, OrderEntry(3, 1, 1, 13, 0, 2, 0))
    code = None
    try:
        main(["status", "g", "--database", url])
    except SystemExit as exit_:
        code = exit_.code
    assert code in (None, 0)
