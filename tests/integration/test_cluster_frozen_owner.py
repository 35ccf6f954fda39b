"""A session relayed to an owner that freezes (SIGSTOP) is answered once the game has moved,
not when the owner wakes up: the relay gives up a silent owner after its answer deadline
(`ClusterSettings.relay_answer_timeout`) and looks for the game's owner again."""

from __future__ import annotations

import os
import signal
import time

import pytest

import protocol as tp

from .test_cluster import NodeProcess, create_games, nodes_view, owner_of, placed, player, wait_until

pytestmark = pytest.mark.timeout(180)

FAILOVER_S = 4.0


def test_a_relayed_session_follows_its_game_away_from_a_frozen_owner(pg_url, tmp_path):
    config = tmp_path / "cluster.toml"
    config.write_text(f"[cluster]\npoll_interval = 0.5\nfailover_timeout = {FAILOVER_S}\n")
    a, b = (NodeProcess(pg_url, name, "--config", str(config), cwd=tmp_path) for name in ("a", "b"))
    frozen = None
    try:
        for node in (a, b):
            node.start()
        wait_until(lambda: len([n for n in nodes_view(pg_url)["nodes"] if n["alive"]]) == 2, 20, "two nodes")
        create_games(pg_url, ["g1", "g2", "g3"])
        wait_until(lambda: placed(pg_url), 20, "every game has a node")
        remote = next(g for g in ("g1", "g2", "g3") if owner_of(pg_url, g) == "b")
        ann = player(a.port, f"ann@{remote}")  # on node a; the game runs on b: relayed
        try:
            assert ann.one(tp.GetOrderQueueIDs(-1, 0, -1, -1)).ids
            os.kill(b.process.pid, signal.SIGSTOP)
            frozen = b
            started = time.monotonic()
            answer = ann.one(tp.GetOrderQueueIDs(-1, 0, -1, -1))
            waited = time.monotonic() - started
            assert answer.ids, answer
            # the game moves after the failover timeout; the session follows it at once
            assert waited <= FAILOVER_S + 6, waited
            assert owner_of(pg_url, remote) == "a"
        finally:
            ann.close()
    finally:
        if frozen is not None:
            os.kill(frozen.process.pid, signal.SIGCONT)
        for node in (a, b):
            node.kill()
