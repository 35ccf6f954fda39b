"""What an operator types, read as they typed it: durations in TOML as on the command line, errors
that name the flag or the key, the PostgreSQL driver's install command, PostgreSQL's own
databases refused unless asked for, and no 5,000-character value echoed back whole."""

from __future__ import annotations

import importlib.util

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.config.database_url import check_driver, check_not_system_database, system_database
from server.config.errors import ConfigError
from server.config.file import load_config
from server.model.durations import duration_seconds
from server.model.refusals import LONGEST_ECHOED_WORD, clip_words

from .test_cli import one_line_error, run


@pytest.mark.parametrize(
    "written, seconds",
    [("300", 300), ('"90m"', 5400), ('"4h"', 14400), ('"1d"', 86400), ('"1h30m"', 5400), ("0", 0)],
)
def test_a_duration_in_toml_reads_as_on_the_command_line(tmp_path, written, seconds):
    path = tmp_path / "tae.toml"
    path.write_text(f"[game]\nturn_length = {written}\nturn_length_over_threshold = {written}\n")
    timer = load_config(str(path)).game.timer
    assert timer.turn_length == seconds and timer.turn_length_over_threshold == seconds


def test_a_bad_duration_in_toml_names_the_key_and_the_value(tmp_path):
    path = tmp_path / "tae.toml"
    path.write_text('[game]\nturn_length = "soon"\n')
    with pytest.raises(
        ConfigError, match=r"^game\.turn_length: expected a duration like 90m, .*, not 'soon'$"
    ):
        load_config(str(path))


@given(st.integers(min_value=0, max_value=366 * 86400))
def test_the_file_and_the_command_line_read_one_duration_alike(seconds):
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    assert duration_seconds(f"{days}d{hours}h{minutes}m{secs}s") == seconds
    assert duration_seconds(str(seconds)) == seconds


def test_a_refused_flag_value_names_the_flag(capsys, tmp_path):
    code, _, err = run(
        capsys, "create-game", "g", "--turn-length", "-5", "--database", f"sqlite:///{tmp_path}/t.db"
    )
    assert code == 2
    assert one_line_error(err) == "tae-server: --turn-length: turn_length cannot be negative, not '-5'"


def test_a_missing_postgres_driver_names_the_extra_to_install(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "psycopg" else real(name, *a)
    )
    with pytest.raises(ConfigError, match=r"pip install 'tpserver-tae\[postgres\]'"):
        check_driver("postgresql+psycopg://tae@db.example/tae")
    check_driver("sqlite:///tae.db")  # SQLite needs nothing more


def test_postgresqls_own_databases_are_refused_unless_asked_for(capsys):
    for name in ("postgres", "template0", "template1"):
        url = f"postgresql+psycopg://postgres@127.0.0.1:1/{name}"
        assert system_database(url) == name
        with pytest.raises(ConfigError, match="--allow-system-database"):
            check_not_system_database(url, "--database", allow=False)
        check_not_system_database(url, "--database", allow=True)
    assert system_database("postgresql+psycopg://postgres@127.0.0.1/tae") is None
    assert system_database("sqlite:///postgres") is None
    code, _, err = run(
        capsys, "list-games", "--database", "postgresql+psycopg://postgres@127.0.0.1:1/postgres"
    )
    assert code == 2 and "'postgres' is one of PostgreSQL's own databases" in err
    code, _, err = run(
        capsys,
        "list-games",
        "--allow-system-database",
        "--database",
        "postgresql+psycopg://postgres@127.0.0.1:1/postgres",
    )
    assert code == 1 and "own databases" not in err  # allowed: it goes on (and finds no server at port 1)


def test_a_long_value_is_not_echoed_back_whole(capsys, tmp_path):
    name = "n" * 5000
    code, _, err = run(capsys, "create-game", name, "--database", f"sqlite:///{tmp_path}/t.db")
    assert code == 2 and len(err) < 400, err
    assert clip_words(f"account {name} not created") == f"account {'n' * LONGEST_ECHOED_WORD}… not created"
