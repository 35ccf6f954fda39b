"""Malformed scenario files (scenario-format.md): exit status 2, exactly one line on stderr that
names the offending key or line, and never a traceback.

Each case is a small file built from a valid base position; `names` is a regular expression the
one-line message must match (the offending key, value or a line number).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

MAP = '''map = """
A.A.A..
.......
..M....
.......
.......
"""'''

PLAYERS = """
[[players]]
name = "P1"
hand = ["merchant", "scientist"]

[[players]]
name = "P2"
hand = ["settler", "mining"]
"""


def base(extra: str = "", head: str = "", players: str = PLAYERS, map_: str = MAP) -> str:
    return f"{head}\n{map_}\n{players}\n{extra}\n"


def colony(x, y, kind="scientist") -> str:
    return f'[[colonies]]\nat = [{x}, {y}]\nkind = "{kind}"\n'


def leader(owner, kind, x, y) -> str:
    return f'[[leaders]]\nowner = "{owner}"\nkind = "{kind}"\nat = [{x}, {y}]\n'


def turn(*orders: str) -> str:
    return "[[turns]]\norders = [\n" + "".join(f"  {o},\n" for o in orders) + "]\n"


LINE = r"line\s*\d+"
CASES = {
    # unknown keys, at every level
    "unknown_top_level_key": (base(head='colour = "red"'), r"colour"),
    "unknown_player_key": (base(players=PLAYERS.replace('name = "P2"', 'name = "P2"\nhandd = []')), r"handd"),
    "unknown_order_key": (
        base(turn('{ player = "P1", order = "Colonize", fleet = "merchant", target = [1, 1], speed = 3 }')),
        r"speed",
    ),
    "unknown_pool_key": (base("[pool]\nmerchant = 1\npirate = 3\n"), r"pirate"),
    "unknown_scores_key": (
        base(players=PLAYERS.replace('name = "P2"', 'name = "P2"\nscores = { gold = 1 }')),
        r"gold",
    ),
    "unknown_colony_key": (base('[[colonies]]\nat = [1, 1]\nkind = "scientist"\nowner = "P1"\n'), r"owner"),
    # coordinates
    "coordinate_one_number": (
        base('[[colonies]]\nat = [1]\nkind = "scientist"\n'),
        r"\bat\b|colonies|" + LINE,
    ),
    "coordinate_not_numbers": (
        base('[[leaders]]\nowner = "P1"\nkind = "merchant"\nat = ["a", 1]\n'),
        r"\bat\b|leaders|" + LINE,
    ),
    "coordinate_off_board_x": (base(colony(7, 0)), r"\bat\b|colonies|7, ?0|" + LINE),
    "coordinate_off_board_y": (base(leader("P1", "merchant", 0, 5)), r"\bat\b|leaders|0, ?5|" + LINE),
    "coordinate_negative": (base(colony(-1, 0)), r"\bat\b|colonies|-1|" + LINE),
    "destroyed_off_board": (base(head="destroyed = [[0, 9]]"), r"destroyed|0, ?9|" + LINE),
    "default_map_off_board": (base(colony(16, 0), map_=""), r"\bat\b|colonies|16, ?0|" + LINE),
    # impossible positions
    "leader_on_M_system": (
        base(colony(1, 2) + leader("P1", "merchant", 2, 2)),
        r"\bat\b|leaders|2, ?2|" + LINE,
    ),
    "leader_on_M_default_map": (
        base(leader("P1", "merchant", 0, 7), map_=""),
        r"\bat\b|leaders|0, ?7|" + LINE,
    ),
    "colony_on_destroyed": (
        base(colony(3, 0), head="destroyed = [[3, 0]]"),
        r"\bat\b|colonies|destroyed|3, ?0|" + LINE,
    ),
    "leader_on_destroyed": (
        base(colony(1, 1) + leader("P1", "merchant", 1, 0), head="destroyed = [[1, 0]]"),
        r"\bat\b|leaders|destroyed|1, ?0|" + LINE,
    ),
    "colony_on_artifact_system": (base(colony(2, 4)), r"\bat\b|colonies|2, ?4|" + LINE),
    "leader_on_colony": (
        base(colony(1, 1) + leader("P1", "merchant", 1, 1)),
        r"\bat\b|leaders|colonies|1, ?1|" + LINE,
    ),
    "two_colonies_on_one_system": (
        base(colony(1, 1) + colony(1, 1, "merchant")),
        r"\bat\b|colonies|1, ?1|" + LINE,
    ),
    "two_leaders_on_one_system": (
        base(colony(1, 1) + leader("P1", "merchant", 1, 0) + leader("P2", "settler", 1, 0)),
        r"\bat\b|leaders|1, ?0|" + LINE,
    ),
    "leader_on_artifact_system": (base(leader("P1", "merchant", 0, 4)), r"\bat\b|leaders|0, ?4|" + LINE),
    # hands and pool
    "hand_of_seven": (
        base(players=PLAYERS.replace('["merchant", "scientist"]', '["merchant"' + ', "merchant"' * 6 + "]")),
        r"hand",
    ),
    "hand_unknown_kind": (base(players=PLAYERS.replace('"scientist"]', '"pirate"]')), r"hand|pirate"),
    "pool_below_zero": (
        base("[pool]\nmerchant = -1\nscientist = 5\nsettler = 5\nmining = 5\n"),
        r"pool|merchant|-1",
    ),
    "pool_too_small_to_deal": (
        base(
            "[pool]\nmerchant = 1\nscientist = 1\nsettler = 1\nmining = 1\n",
            players=PLAYERS + '\n[[players]]\nname = "P3"\n',
        ),
        r"pool|hand|P3",
    ),
    # names
    "order_unknown_player": (
        base(turn('{ player = "P9", order = "Colonize", fleet = "merchant", target = [1, 1] }')),
        r"P9|player",
    ),
    "leader_unknown_owner": (base(colony(1, 1) + leader("P9", "merchant", 1, 0)), r"P9|owner"),
    "first_unknown_player": (base(head='first = "P9"'), r"P9|first"),
    "colony_unknown_kind": (base(colony(1, 1, "pirate")), r"pirate|kind"),
    "leader_unknown_kind": (base(colony(1, 1) + leader("P1", "pilot", 1, 0)), r"pilot|kind"),
    "order_unknown_type": (
        base(turn('{ player = "P1", order = "Fly", fleet = "merchant", target = [1, 1] }')),
        r"Fly|order",
    ),
    "order_unknown_fleet_kind": (
        base(turn('{ player = "P1", order = "Colonize", fleet = "pirate", target = [1, 1] }')),
        r"pirate|fleet",
    ),
    # syntax and types
    "toml_syntax_error": ('title = "unterminated\nseed = 1\n', LINE + r"|TOML|toml"),
    "seed_not_a_number": (base(head='seed = "abc"'), r"seed"),
    "wrong_map_character": (base(map_='map = """\nA.A.A..\n..X....\n"""'), r"map|X|" + LINE),
}


def run(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ruleset.scenario", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def assert_malformed(proc: subprocess.CompletedProcess, names: str) -> None:
    assert proc.returncode == 2, (
        f"exit status {proc.returncode}, expected 2\nstdout: {proc.stdout[:500]}\nstderr: {proc.stderr}"
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    message = proc.stderr.strip()
    assert message, "no message on stderr"
    assert "\n" not in message, f"more than one line on stderr:\n{proc.stderr}"
    assert re.search(names, message), (
        f"message does not name the offending key or line ({names!r}): {message!r}"
    )


@pytest.mark.parametrize("name", sorted(CASES))
def test_malformed_file(name: str, tmp_path: Path) -> None:
    text, names = CASES[name]
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    assert_malformed(run(path), names)


def test_the_base_position_is_valid(tmp_path: Path) -> None:
    """Guards the error cases: without the defect, the base file plays (exit 0)."""
    path = tmp_path / "base.toml"
    path.write_text(
        base(
            colony(1, 1)
            + leader("P1", "merchant", 1, 0)
            + turn('{ player = "P1", order = "Colonize", fleet = "merchant", target = [3, 3] }')
        )
    )
    proc = run(path)
    assert proc.returncode == 0, proc.stderr


def test_nonexistent_file(tmp_path: Path) -> None:
    assert_malformed(
        run(tmp_path / "no_such_scenario.toml"), r"no_such_scenario|No such file|not found|exist"
    )
