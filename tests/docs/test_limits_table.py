"""README's "Security and limits" table and `server.config.limits` in step: every limit is in the
table once, with its default, and the table names no setting that does not exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from server.config.limits import Limits, limit_names

README = Path(__file__).resolve().parents[2] / "README.md"
HEADER = "| setting | default | listener | what |"
UNITS = {"": 1, "s": 1, "KiB": 2**10, "MiB": 2**20}


def table_rows(text: str) -> list[list[str]]:
    """The rows of the limits table: lists of cells."""
    start = text.index(HEADER)
    rows = []
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def documented(text: str) -> dict[str, tuple[str, str]]:
    """setting -> (its default as written, its listener)."""
    found: dict[str, tuple[str, str]] = {}
    for setting, default, listener, _ in table_rows(text):
        names = re.findall(r"`([a-z_0-9]+)`", setting)
        if not names:
            continue  # a limit that is not a setting: "(per route)", "(JSON)"
        defaults = [part.strip() for part in default.split(",")]
        assert len(defaults) == len(names), (setting, default)
        for name, value in zip(names, defaults, strict=True):
            assert name not in found, f"{name} is in the table twice"
            found[name] = (value, listener)
    return found


def value_of(written: str) -> float:
    match = re.fullmatch(r"([0-9.]+)\s*([A-Za-z]*)", written)
    assert match and match.group(2) in UNITS, written
    return float(match.group(1)) * UNITS[match.group(2)]


def test_every_limit_is_in_the_table_and_nothing_else():
    assert set(documented(README.read_text())) == set(limit_names())


@pytest.mark.parametrize("name", limit_names())
def test_the_table_gives_each_limit_its_default(name):
    written, listener = documented(README.read_text())[name]
    assert value_of(written) == getattr(Limits(), name), (name, written)
    assert listener, name


def test_the_check_sees_a_stale_table():
    text = README.read_text().replace("| `admin_login_seconds` | 30 |", "| `admin_login_seconds` | 45 |")
    assert value_of(documented(text)["admin_login_seconds"][0]) != Limits().admin_login_seconds
    shorter = README.read_text().replace("| `admin_idle_seconds` |", "| `admin_idle` |")
    assert set(documented(shorter)) != set(limit_names())
