"""Scripted players drive a real tae-server through ``tae-client``: turn files, submit, finish,
wait; and the ways it goes wrong (a refused order, the 2-order limit, a wrong password, a
server that is down, a malformed file), each with its exit code.

Most commands run in-process with click's ``CliRunner`` (fast); the blocking ``play`` and
``wait`` run as real ``python -m clients.cli`` subprocesses while the other player acts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from clients.cli import cli
from tests.support.json_schemas import json_answer

from .conftest import ROOT, free_port

pytestmark = pytest.mark.timeout(120)

PASSWORDS = {"alice": "alice-pw", "bob": "bob-pw"}

# Each player builds on its own artifact, far from the other: a leader moves next to it, then
# colonies grow in a line away from it (each joins that one region, so its leader scores).
PLANS = {
    "alice": {
        "leader": [9, 0],
        "colonies": [[11, 0], [12, 0], [13, 0], [14, 0]],
        "mining": [[12, 2], [11, 2], [10, 2], [9, 2]],
    },
    "bob": {
        "leader": [5, 2],
        "colonies": [[4, 1], [3, 1], [2, 1], [1, 1]],
        "mining": [[0, 4], [1, 4], [2, 4], [3, 4]],
    },
}


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch, tmp_path):
    """No TAE_* variables or user config file of the machine running the tests."""
    for name in list(os.environ):
        if name.startswith("TAE_") or name == "NO_COLOR":
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-config"))


def connection_args(server, user: str | None = None, password: str | None = None) -> list[str]:
    host, port = server
    args = ["--host", host, "--port", str(port), "--timeout", "10"]
    if user is not None:
        args += ["--user", user, "--password", password if password is not None else PASSWORDS[user]]
    return args


def run(server, user, *args, password=None, expect=0):
    result = CliRunner().invoke(cli, connection_args(server, user, password) + list(args))
    assert result.exit_code == expect, (
        f"tae-client {' '.join(args)} → {result.exit_code}\nstdout: {result.stdout}\nstderr: {result.stderr}"
    )
    return result


def run_json(server, user, *args, expect=0):
    return json_answer(run(server, user, "--json", *args, expect=expect).stdout)


def subprocess_client(server, user, *args) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TAE_")}
    return subprocess.Popen(
        [sys.executable, "-m", "clients.cli", *connection_args(server, user), *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def finish_subprocess(process: subprocess.Popen, timeout: float = 30) -> tuple[int, str, str]:
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        raise AssertionError(f"tae-client did not finish in {timeout} s\n{out}\n{err}") from None
    return process.returncode, out, err


def write_turn_file(path, orders, fmt: str, turn: int) -> str:
    if fmt == "json":
        path = path.with_suffix(".json")
        path.write_text(json.dumps({"turn": turn, "orders": orders}))
        return str(path)
    path = path.with_suffix(".toml")
    lines = [f"turn = {turn}"]
    for order in orders:
        lines.append("[[orders]]")
        for key, value in order.items():
            lines.append(f"{key} = {json.dumps(value)}")
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def scripted_turn(server, user: str, turn: int) -> tuple[list[dict], bool]:
    """This player's orders for ``turn``, from what the server shows (fleets and board):
    turn 0 moves the settler leader next to the home artifact; every turn colonizes the next
    square of the plan with a non-mining colonist (or a mining one on an 'M' square). Returns
    the orders and whether the colony should score (it joins the leader's region)."""
    plan = PLANS[user]
    fleets = run_json(server, user, "fleets")["fleets"]
    board = run_json(server, user, "board")
    squares = {(s["x"], s["y"]): s for s in board["systems"]}
    orders = []
    if turn == 0:
        orders.append({"fleet": "settler-leader", "order": "Move", "target": plan["leader"]})
    types = [f["type"] for f in fleets if f["kind"] == "colonist"]
    free = [p for p in plan["colonies"] if not squares[tuple(p)]["colony"]]
    civil = next((t for t in ("merchant", "scientist", "settler") if t in types), None)
    if civil is not None and free:
        orders.append({"fleet": f"colonist:{civil}", "order": "Colonize", "target": free[0]})
        return orders, turn > 0
    mining = [p for p in plan["mining"] if not squares[tuple(p)]["colony"]]
    orders.append({"fleet": "colonist:mining", "order": "ColonizeMining", "target": mining[0]})
    return orders, False


def test_two_scripted_players_play_turns_from_files(tae_server, tmp_path):
    server = tae_server
    assert "created" in run(server, "alice", "create-account").stdout
    assert run_json(server, "bob", "create-account")["created"] is True
    again = run(server, "alice", "create-account", expect=1)
    assert again.stderr.startswith("tae-client: account alice not created:")

    status = run_json(server, "alice", "status")
    assert status["turn"] == 0 and status["phase"] == "normal"
    assert [p["name"] for p in status["players"]] == ["alice", "bob"]
    assert all(p["waiting"] for p in status["players"])

    expected_points = {"alice": 0, "bob": 0}
    for turn in range(4):
        files, planned = {}, {}
        for user, fmt in (("alice", "toml"), ("bob", "json")):
            planned[user], scores = scripted_turn(server, user, turn)
            expected_points[user] += scores
            files[user] = write_turn_file(tmp_path / f"{user}-{turn}", planned[user], fmt, turn)

        if turn == 0:
            # alice plays the whole turn in one blocking subprocess while bob is still at it
            alice = subprocess_client(
                server, "alice", "--json", "play", files["alice"], "--poll", "0.5", "--timeout", "30"
            )
            deadline = time.monotonic() + 15
            while run_json(server, "bob", "status")["players"][0]["waiting"] is not False:
                assert alice.poll() is None, alice.communicate()
                assert time.monotonic() < deadline, "alice never finished her turn"
                time.sleep(0.1)
            report = run_json(server, "bob", "submit", files["bob"])
            assert report["ok"] and [o["status"] for o in report["orders"]] == ["inserted"] * 2
            assert run(server, "bob", "finish").stdout.strip() == "finished turn 0"
            code, out, err = finish_subprocess(alice)
            assert code == 0, err
            played = json_answer(out)
            assert played["submit"]["ok"] and played["finished"] == 0
            assert played["wait"]["turn"] == 1 and played["wait"]["previous_turn"] == 0
        else:
            for user in ("alice", "bob"):
                text = run(server, user, "submit", files[user]).stdout
                assert text.startswith("ok: ") and "inserted" in text
                queued = run_json(server, user, "orders")["orders"]
                assert [o["order"] for o in queued] == [o["order"] for o in planned[user]]
                assert run_json(server, user, "finish") == {
                    "schema": "tae-client/finish/1",
                    "finished": True,
                    "turn": turn,
                }
            # the turn ended when bob finished: waiting "after" it returns at once
            waited = run_json(server, "alice", "wait", "--after-turn", str(turn), "--timeout", "10")
            assert waited["turn"] == turn + 1

    for user in ("alice", "bob"):
        status = run_json(server, user, "status")
        assert status["turn"] == 4
        scores = status["scores"]
        total = sum(scores[k] for k in ("money", "technology", "people", "raw_materials"))
        assert total == expected_points[user], (user, scores, expected_points)
        colonized = run_json(server, user, "messages", "--subject", "Colonize fleet order complete")[
            "messages"
        ]
        assert len(colonized) == 4
        moved = run_json(server, user, "messages", "--subject", "Move fleet order complete")["messages"]
        assert len(moved) == 1 and moved[0]["turn"] == 1

    board = run_json(server, "alice", "board")
    leader_squares = {(s["x"], s["y"]): s["leaders"] for s in board["systems"] if s["leaders"]}
    assert leader_squares[(9, 0)][0]["owner_name"] == "alice"
    assert leader_squares[(5, 2)][0]["owner_name"] == "bob"
    assert leader_squares[(9, 0)][0]["type"] == "settler"
    text = run(server, "alice", "board").stdout
    assert "1P" in text and "2P" in text and "regions" in text


def test_refused_files_leave_nothing_queued(tae_server, tmp_path):
    server = tae_server
    run(server, "alice", "create-account")
    run(server, "bob", "create-account")

    # A probe refusal: a colonist cannot Move. Nothing is inserted, the reason is given.
    bad = tmp_path / "bad.toml"
    bad.write_text(
        '[[orders]]\nfleet = "settler-leader"\norder = "Move"\ntarget = [9, 0]\n'
        '[[orders]]\nfleet = "colonist"\norder = "Move"\ntarget = "3,3"\n'
    )
    result = run(server, "alice", "submit", str(bad), expect=1)
    assert "refused" in result.stdout and "accepts:" in result.stdout
    assert result.stderr.strip() == "tae-client: the server refused 1 order; nothing was inserted"
    assert run_json(server, "alice", "orders")["orders"] == []

    # Three orders: every probe passes (probes do not see each other) but the third insert
    # breaks the 2-orders limit, so the first two are taken back.
    three = tmp_path / "three.json"
    three.write_text(
        json.dumps(
            {
                "orders": [
                    {"fleet": "bomber", "order": "Attack", "target": [3, 3]},
                    {"fleet": "bomber", "order": "Attack", "target": [4, 3]},
                    {"fleet": "mining-leader", "order": "Move", "target": [9, 0]},
                ]
            }
        )
    )
    report = run_json(server, "alice", "submit", str(three), expect=1)
    assert report["ok"] is False and report["stage"] == "insert"
    assert [o["status"] for o in report["orders"]] == ["rolled-back", "rolled-back", "refused"]
    assert "2 orders per player" in report["orders"][2]["reason"]
    assert report["rolled_back"] == 2
    assert run_json(server, "alice", "orders")["orders"] == []

    # A file for another turn is refused before anything is sent.
    stale = tmp_path / "stale.toml"
    stale.write_text("turn = 7\norders = []\n")
    assert "turn 7" in run(server, "alice", "submit", str(stale), expect=1).stderr

    # --replace swaps queued orders for the file's, all or nothing.
    run(server, "alice", "order", "insert", "bomber", "Attack", "7,7")
    good = tmp_path / "good.toml"
    good.write_text('[[orders]]\nfleet = "scientist-leader"\norder = "Move"\ntarget = [9, 0]\n')
    run(server, "alice", "submit", "--replace", str(bad), expect=1)
    assert [o["order"] for o in run_json(server, "alice", "orders")["orders"]] == ["Attack"]
    replaced = run_json(server, "alice", "submit", "--replace", str(good))
    assert replaced["ok"] and [r["order"] for r in replaced["replaced"]] == ["Attack"]
    assert [o["order"] for o in run_json(server, "alice", "orders")["orders"]] == ["Move"]


def test_clear_errors_and_exit_codes(tae_server, tmp_path):
    server = tae_server
    run(server, "alice", "create-account")

    wrong = run(server, "alice", "status", password="not-her-password", expect=1)
    assert wrong.stdout == ""
    assert wrong.stderr == "tae-client: login as alice refused: Login Error - bad username or password\n"
    assert "not-her-password" not in wrong.stderr

    malformed = tmp_path / "turn.toml"
    malformed.write_text('[[orders]]\nfleet = "bomber"\norder = "Attack"\ntarget = [3, 3\n')
    result = run(server, "alice", "submit", str(malformed), expect=2)
    assert result.stderr.startswith(f"tae-client: {malformed}: not valid TOML")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output

    down = ("127.0.0.1", free_port())  # nobody listens there
    result = run(down, "alice", "status", expect=3)
    assert result.stderr == f"tae-client: connection to 127.0.0.1:{down[1]} refused\n"
    result = run(down, "alice", "submit", str(malformed), expect=2)  # the file is checked first

    # the same through the installed entry point, as a script would see it
    process = subprocess_client(down, "alice", "wait")
    code, out, err = finish_subprocess(process)
    assert (code, out) == (3, "") and err.startswith("tae-client: connection to")
