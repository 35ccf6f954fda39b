"""Cluster nodes on one PostgreSQL database, as real `tae-server serve --node` processes.

Two nodes share the games: new games are spread over them, a client connected to either node
plays any game (relayed to its owner when the other node runs it), GetGames lists every game,
`tae-server nodes` shows who runs what, `move-game` and a stopping node hand games over while
the clients stay connected. SQLite refuses nodes; a node name is taken once; a single server
and nodes do not share a database.

The helpers here (`NodeProcess`, `nodes_view`, `owner_of`) serve the other cluster tests too.
"""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

import protocol as tp
from server.database import SyncDatabase
from server.operating.on_database import cluster_view
from tests.support.json_schemas import json_answer

from ..support.servers import free_port
from .server_process import ROOT, ServerProcess
from .tp_client import TPClient

pytestmark = pytest.mark.timeout(180)


class NodeProcess(ServerProcess):
    """`tae-server serve --node NAME --advertise 127.0.0.1:PORT` on a port of its own."""

    def __init__(self, database: str, name: str, *args: str, port: int | None = None, cwd=ROOT):
        super().__init__(database, *args, cwd=cwd)
        self.name = name
        self.port = port or free_port()

    def command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "server.cli",
            "serve",
            "--listen",
            f"tcp:{self.port}:interface=127.0.0.1",
            "--node",
            self.name,
            "--advertise",
            f"127.0.0.1:{self.port}",
            "--database",
            self.database,
            "--log-format",
            "json",
            *self.args,
        ]


def tae_server(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "server.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def nodes_view(url: str) -> dict:
    with SyncDatabase(url) as db:
        return cluster_view(db)


def owner_of(url: str, game: str) -> str | None:
    for node in nodes_view(url)["nodes"]:
        if node["alive"] and game in node["games"]:
            return node["name"]
    return None


def cluster_log(*nodes: NodeProcess, last: int = 30) -> str:
    """The nodes' last cluster log lines (for the message of a failed assertion)."""
    out = []
    for node in nodes:
        lines = [line.strip() for line in node.lines if "cluster" in line or "claim" in line]
        out.append(f"node {node.name}:\n" + "\n".join(lines[-last:]))
    return "\n".join(out)


def placed(url: str) -> dict | None:
    """The cluster view once every game has a node, else None."""
    view = nodes_view(url)
    return None if view["waiting"] else view


def wait_until(predicate, timeout: float, what: str, interval: float = 0.1):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(interval)


def create_games(url: str, names: list[str], *extra: str) -> None:
    for name in names:
        done = tae_server("create-game", name, "--database", url, "--seed", "5", *extra)
        assert done.returncode == 0, done.stderr


def player(port: int, login: str, password: str = "a-password") -> TPClient:
    client = TPClient(port)
    client.connect()
    assert isinstance(client.create_account(login, password), tp.Okay)
    client.login(login, password)
    return client


@pytest.fixture
def two_nodes(pg_url, tmp_path):
    started = [NodeProcess(pg_url, name, cwd=tmp_path) for name in ("a", "b")]
    try:
        for node in started:
            node.start()
        wait_until(lambda: len([n for n in nodes_view(pg_url)["nodes"] if n["alive"]]) == 2, 20, "two nodes")
        yield started
    finally:
        for node in started:
            node.kill()


def test_nodes_share_games_and_serve_every_client(two_nodes, pg_url):
    a, b = two_nodes
    create_games(pg_url, ["g1", "g2", "g3"])
    view = wait_until(lambda: placed(pg_url), 20, "every game has a node")
    counts = sorted(len(n["games"]) for n in view["nodes"])
    assert counts == [2, 2], view  # the open game "tae" and three new ones, spread
    listed = tae_server("nodes", "--database", pg_url)
    assert listed.returncode == 0 and "a " in listed.stdout and "running" in listed.stdout, listed
    remote = next(g for g in ("g1", "g2", "g3") if owner_of(pg_url, g) == "b")

    # Both players are connected to node a; the game runs on node b: relayed.
    ann, bob = player(a.port, f"ann@{remote}"), player(a.port, f"bob@{remote}")
    try:
        games = ann.request(tp.GetGames())
        assert {g.name for g in games[1:]} == {"tae", "g1", "g2", "g3"}
        assert all(g.connections[0].port == a.port for g in games[1:])  # reach them here
        for client in (ann, bob):
            assert isinstance(client.one(tp.FinishedTurn()), tp.Okay)
        assert ann.time_remaining().turn == 1
        left = ann.time_remaining().time
        assert 0 < left <= 300

        # Hand the game to node a and back: the same connections go on, the deadline stays.
        for target in ("a", "b"):
            moved = tae_server("move-game", remote, target, "--database", pg_url)
            assert moved.returncode == 0 and f"to node {target!r}" in moved.stdout, moved
            assert owner_of(pg_url, remote) == target, (moved.stdout, nodes_view(pg_url), cluster_log(a, b))
            now = ann.time_remaining()
            assert now.turn == 1 and now.time <= left
        # An order over the relay, stored by the owner and shown by it.
        queues = [q for q in ann.one(tp.GetOrderQueueIDs(-1, 0, -1, -1)).ids]
        assert queues
        for client in (ann, bob):
            assert isinstance(client.one(tp.FinishedTurn()), tp.Okay)
        assert bob.time_remaining().turn == 2

        # Node b stops: its games are handed to node a; the relayed clients go on.
        assert b.terminate() == 0, b.stderr
        assert owner_of(pg_url, remote) == "a"
        assert {n["name"] for n in nodes_view(pg_url)["nodes"] if n["alive"]} == {"a"}
        assert ann.time_remaining().turn == 2
        for client in (ann, bob):
            assert isinstance(client.one(tp.FinishedTurn()), tp.Okay)
        assert ann.time_remaining().turn == 3
    finally:
        ann.close()
        bob.close()
    status = tae_server("nodes", "--json", "--database", pg_url)
    view = json_answer(status.stdout)
    assert [n["name"] for n in view["nodes"] if n["alive"]] == ["a"] and not view["waiting"]


def test_a_node_name_is_used_once_and_nodes_need_postgresql(two_nodes, pg_url, tmp_path):
    again = NodeProcess(pg_url, "a", cwd=tmp_path)
    with pytest.raises(RuntimeError, match="a node named 'a' is running"):
        again.start(timeout=30)
    single = ServerProcess(pg_url, cwd=tmp_path)
    with pytest.raises(RuntimeError, match="another server is using this database .*cluster node"):
        single.start(timeout=30)
    # (a free port: the check must not depend on whether 6923, the default, is taken)
    listen = ("--listen", f"tcp:{free_port()}:interface=127.0.0.1")
    sqlite = tae_server(
        "serve",
        *listen,
        "--node",
        "x",
        "--advertise",
        "127.0.0.1:1",
        "--database",
        f"sqlite:///{tmp_path / 'x.db'}",
    )
    assert sqlite.returncode == 2 and "need a PostgreSQL database" in sqlite.stderr
    wrong = tae_server(
        "serve", *listen, "--node", "bad name", "--advertise", "127.0.0.1:1", "--database", pg_url
    )
    assert wrong.returncode == 2 and "cluster.node" in wrong.stderr
    moved = tae_server("move-game", "tae", "nowhere", "--database", pg_url)
    assert moved.returncode == 1 and "no live node named 'nowhere'" in moved.stderr
