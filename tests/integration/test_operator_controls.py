"""Operator controls against a real server over TCP: `tae-server pause/extend/set/resume/
reinstate` while it runs; connected players get TimeRemaining and a board message; a restarted
server keeps the pause; `serve` names the flags an existing game did not take."""

from __future__ import annotations

import time

import pytest

import protocol as tp

from .server_process import ServerProcess, tae_server
from .tp_client import TPClient

pytestmark = pytest.mark.timeout(120)


def player(port: int, name: str) -> TPClient:
    client = TPClient(port)
    client.connect()
    assert isinstance(client.create_account(name, "secret-pw"), tp.Okay)
    client.login(name, "secret-pw")
    return client


def operator(url: str, *args: str) -> str:
    done = tae_server(*args, "--database", url)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def pushed_times(client: TPClient, wait: float = 5.0) -> list[int]:
    """TimeRemaining pushes received so far (reading until one arrives, or `wait` passes)."""
    deadline = time.monotonic() + wait
    while not any(isinstance(m, tp.TimeRemaining) for m in client.pushed) and time.monotonic() < deadline:
        client.time_remaining()  # reading a reply collects the pushes queued before it
        time.sleep(0.05)
    times = [m.time for m in client.pushed if isinstance(m, tp.TimeRemaining)]
    client.pushed.clear()
    return times


def test_pause_extend_set_resume_and_reinstate_on_a_running_server(tmp_path):
    url = f"sqlite:///{tmp_path / 'tae.db'}"
    operator(url, "create-game", "long", "--timer", "basic", "--turn-length", "3600")
    server = ServerProcess(url, "--seed", "5", "--turn-length", "60")
    clients: list[TPClient] = []
    try:
        port = server.start()
        ann, bob = player(port, "ann@long"), player(port, "bob@long")
        clients += [ann, bob]
        assert 3590 <= ann.time_remaining().time <= 3600
        ann.pushed.clear()

        assert "paused" in operator(url, "pause", "long")
        assert pushed_times(ann) == [-1] and ann.time_remaining().time == -1
        assert "extended by 1 h" in operator(url, "extend", "long", "1h")
        assert "resumed" in operator(url, "resume", "long")
        left = pushed_times(ann)
        assert left and 7180 <= left[-1] <= 7200
        assert "turn_length is now 2 h" in operator(url, "set", "long", "turn_length", "2h")
        done = tae_server("set", "long", "max_players", "1", "--database", url)
        assert done.returncode == 1 and "has 2 players already" in done.stderr

        # every player was told on their board
        board = ann.items(tp.GetMessage(0, tuple(range(8))))
        subjects = [m.subject for m in board if isinstance(m, tp.BoardMessage)]
        assert subjects.count("Game settings") == 4

        assert "removed" in operator(url, "remove-player", "long", "bob")
        refused = TPClient(port)
        clients.append(refused)
        refused.connect()
        answer = refused.one(tp.Login("bob@long", "secret-pw"))
        assert isinstance(answer, tp.Fail) and answer.code == tp.FailCode.PERMISSION_DENIED
        assert "removed" in operator(url, "status", "long")
        assert "reinstated" in operator(url, "reinstate", "long", "bob")
        refused.login("bob@long", "secret-pw")

        operator(url, "pause", "long")
        for client in clients:
            client.close()
        clients = []
        assert server.terminate() == 0

        # a restart keeps the pause; serve says which of its flags the existing game ignored
        port = server.start()
        status = operator(url, "status", "long")
        assert "PAUSED" in status and "paused by an operator, 7" in status
        assert operator(url, "list-games").count("PAUSED") == 1
        assert server.terminate() == 0
        notes = [line for line in server.stderr.splitlines() if "not applied" in line]
        assert [line.split(" not applied")[0] for line in notes] == [
            "tae-server: --seed 5",
            "tae-server: --turn-length 60",
        ]
        assert all("the database has games but none named 'tae'" in line for line in notes)
    finally:
        for client in clients:
            client.close()
        server.kill()
