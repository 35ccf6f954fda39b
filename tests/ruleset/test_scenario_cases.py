"""Rule cases R1–R26, written from ruleset.md §16 / §12 and scenario-format.md alone.

Each case is ``scenarios/NAME.toml`` with ``scenarios/NAME.expected.json`` beside it.  The case is
played with ``python -m ruleset.scenario NAME.toml`` in a subprocess and its JSON result is compared
with the expected file, which holds only the keys the case asserts (a partial match):

* dicts match recursively and partially (only the expected keys are checked); in the count dicts
  ``hand`` and ``pool`` an absent kind counts as 0;
* lists must have the same length and match element by element (dict elements partially, so a
  ``refused`` entry may leave out ``reason``);
* ``messages`` is special: for each player named, the expected messages must occur *in order* in
  that player's messages (a subsequence); each expected message is matched on the keys it gives
  (``subject``, ``body`` and optionally ``turn``).

Keys starting with ``_`` are checks the runner computes:

* ``_exit``: the expected exit status (default 0);
* ``_messages_exact_turn``: ``{player: {turn: [msg, ...]}}`` — the messages the player received with
  that ``turn`` value, exactly (same length, each matched on its given keys);
* ``_hand_sizes``: ``{player: n}`` — the total number of colonist fleets the player holds;
* ``_pool_total``: ``{kind: n}`` — pool[kind] + sum of every player's hand[kind] == n;
* ``_max_in_hands``: ``{kind: n}`` — the players together hold at most n colonists of that kind
  (for distribution checks that hold for any seed with overwhelming probability).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SCENARIOS = HERE / "scenarios"
ROOT = HERE.parents[1]
KINDS = ("merchant", "scientist", "settler", "mining")
COUNT_DICTS = ("hand", "pool")

CASES = sorted(SCENARIOS.glob("*.toml"))


def run_scenario(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ruleset.scenario", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _fmt(value) -> str:
    return json.dumps(value, sort_keys=True)


def match(expected, actual, path: str, problems: list[str]) -> None:
    """Partial match of `expected` inside `actual`; problems are appended as readable lines."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            problems.append(f"{path}: expected an object {_fmt(expected)}, got {_fmt(actual)}")
            return
        leaf = path.rsplit(".", 1)[-1]
        for key, value in expected.items():
            if key not in actual:
                if leaf in COUNT_DICTS and value == 0:
                    continue
                problems.append(f"{path}.{key}: missing (expected {_fmt(value)})")
                continue
            if path == "$" and key == "messages":
                match_messages(value, actual[key], problems)
                continue
            match(value, actual[key], f"{path}.{key}", problems)
        return
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            problems.append(f"{path}: expected {_fmt(expected)}\n{' ' * len(path)}       got {_fmt(actual)}")
            return
        sub: list[str] = []
        for i, (e, a) in enumerate(zip(expected, actual)):
            match(e, a, f"{path}[{i}]", sub)
        if sub:
            problems.append(f"{path}: expected {_fmt(expected)}\n{' ' * len(path)}       got {_fmt(actual)}")
        return
    if isinstance(expected, bool) or expected is None:
        if actual is not expected:
            problems.append(f"{path}: expected {_fmt(expected)}, got {_fmt(actual)}")
        return
    if type(expected) is not type(actual) and not (
        isinstance(expected, (int, float))
        and isinstance(actual, (int, float))
        and not isinstance(actual, bool)
    ):
        problems.append(f"{path}: expected {_fmt(expected)}, got {_fmt(actual)}")
        return
    if expected != actual:
        problems.append(f"{path}: expected {_fmt(expected)}, got {_fmt(actual)}")


def message_matches(expected: dict, actual: dict) -> bool:
    return isinstance(actual, dict) and all(k in actual and actual[k] == v for k, v in expected.items())


def match_messages(expected: dict, actual, problems: list[str]) -> None:
    if not isinstance(actual, dict):
        problems.append(f"$.messages: expected an object, got {_fmt(actual)}")
        return
    for player, wanted in expected.items():
        got = actual.get(player)
        if not isinstance(got, list):
            problems.append(f"$.messages.{player}: missing")
            continue
        i = 0
        for w in wanted:
            while i < len(got) and not message_matches(w, got[i]):
                i += 1
            if i == len(got):
                problems.append(
                    f"$.messages.{player}: expected, in this order, {_fmt(wanted)}\n"
                    f"   first one not found (in order): {_fmt(w)}\n   got {json.dumps(got, indent=1)}"
                )
                break
            i += 1


def check_extras(expected: dict, result: dict, problems: list[str]) -> None:
    for player, turns in expected.get("_messages_exact_turn", {}).items():
        msgs = result.get("messages", {}).get(player, [])
        for turn, wanted in turns.items():
            got = [m for m in msgs if m.get("turn") == int(turn)]
            if len(got) != len(wanted) or not all(message_matches(w, g) for w, g in zip(wanted, got)):
                problems.append(
                    f"messages of {player} in turn {turn}: expected exactly {_fmt(wanted)}\n"
                    f"   got {json.dumps(got, indent=1)}"
                )
    players = {p.get("name"): p for p in result.get("players", [])}
    for player, n in expected.get("_hand_sizes", {}).items():
        hand = players.get(player, {}).get("hand", {})
        if sum(hand.values()) != n:
            problems.append(f"hand size of {player}: expected {n}, got {sum(hand.values())} ({_fmt(hand)})")
    for kind, n in expected.get("_pool_total", {}).items():
        total = result.get("pool", {}).get(kind, 0) + sum(
            p.get("hand", {}).get(kind, 0) for p in result.get("players", [])
        )
        if total != n:
            problems.append(f"pool + hands for {kind}: expected {n}, got {total}")
    for kind, n in expected.get("_max_in_hands", {}).items():
        held = sum(p.get("hand", {}).get(kind, 0) for p in result.get("players", []))
        if held > n:
            problems.append(f"{kind} colonists in hands: expected at most {n}, got {held}")


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_rule_case(case: Path) -> None:
    expected_file = case.with_name(case.stem + ".expected.json")
    assert expected_file.exists(), f"{expected_file.name} is missing"
    expected = json.loads(expected_file.read_text())
    proc = run_scenario(case)
    want_exit = expected.get("_exit", 0)
    assert proc.returncode == want_exit, (
        f"exit status {proc.returncode}, expected {want_exit}\nstderr:\n{proc.stderr}"
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    result = json.loads(proc.stdout)
    problems: list[str] = []
    match({k: v for k, v in expected.items() if not k.startswith("_")}, result, "$", problems)
    check_extras(expected, result, problems)
    if problems:
        pytest.fail(f"{case.name}:\n" + "\n".join(problems), pytrace=False)


def test_every_case_has_an_expected_file() -> None:
    assert CASES, "no scenario cases found"
    missing = [c.name for c in CASES if not c.with_name(c.stem + ".expected.json").exists()]
    assert not missing, missing


def test_same_seed_same_game() -> None:
    """The seed fixes every random draw (scenario-format: `seed` seeds every random draw)."""
    case = SCENARIOS / "r02_dealt_hands.toml"
    first, second = run_scenario(case), run_scenario(case)
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    assert json.loads(first.stdout) == json.loads(second.stdout)
