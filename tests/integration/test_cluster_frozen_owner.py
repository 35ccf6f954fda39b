"""A session relayed to an owner that freezes (SIGSTOP) is answered once the game has moved,
not when the owner wakes up: the relay gives up a silent owner after its answer deadline
(`ClusterSettings.relay_answer_timeout`) and looks for the game's owner again. Clients connected
to the frozen owner itself are served by the new owner as soon as it wakes."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

import protocol as tp

from .test_cluster import NodeProcess, create_games, nodes_view, owner_of, placed, player, wait_until
from .tp_client import TPClient

pytestmark = pytest.mark.timeout(180)

FAILOVER_S = 4.0


@contextmanager
def two_nodes(pg_url, tmp_path, games: list[str]) -> Iterator[tuple[NodeProcess, NodeProcess]]:
    """Nodes a and b (`failover_timeout` FAILOVER_S), running `games` between them; killed
    afterwards, frozen or not (SIGKILL ends a stopped process too)."""
    config = tmp_path / "cluster.toml"
    config.write_text(f"[cluster]\npoll_interval = 0.5\nfailover_timeout = {FAILOVER_S}\n")
    a, b = (NodeProcess(pg_url, name, "--config", str(config), cwd=tmp_path) for name in ("a", "b"))
    try:
        for node in (a, b):
            node.start()
        wait_until(lambda: len([n for n in nodes_view(pg_url)["nodes"] if n["alive"]]) == 2, 20, "two nodes")
        create_games(pg_url, games)
        wait_until(lambda: placed(pg_url), 20, "every game has a node")
        yield a, b
    finally:
        for node in (a, b):
            node.kill()


def test_a_relayed_session_follows_its_game_away_from_a_frozen_owner(pg_url, tmp_path):
    with two_nodes(pg_url, tmp_path, ["g1", "g2", "g3"]) as (a, b):
        remote = next(g for g in ("g1", "g2", "g3") if owner_of(pg_url, g) == "b")
        ann = player(a.port, f"ann@{remote}")  # on node a; the game runs on b: relayed
        try:
            assert ann.one(tp.GetOrderQueueIDs(-1, 0, -1, -1)).ids
            os.kill(b.process.pid, signal.SIGSTOP)
            started = time.monotonic()
            answer = ann.one(tp.GetOrderQueueIDs(-1, 0, -1, -1))
            waited = time.monotonic() - started
            assert answer.ids, answer
            # the game moves after the failover timeout; the session follows it at once
            assert waited <= FAILOVER_S + 6, waited
            assert owner_of(pg_url, remote) == "a"
        finally:
            ann.close()


def test_clients_of_a_frozen_owner_are_served_by_the_new_owner_as_soon_as_it_wakes(pg_url, tmp_path):
    """Ann plays on node b, which runs the game; Bob connects to b while it is frozen. b is cut
    off and a takes the game. When b wakes, it has lost its claims, but its placements still say
    the game runs on b: Ann's request under way is carried over to a, and Bob's login, routed by
    those placements, waits for the next claim round (which places the game on a) and is relayed
    there, instead of waiting for the game to arrive on b until `relay_timeout` (30 s), which
    the client's own request timeout ends first."""
    clients: list[TPClient] = []
    with two_nodes(pg_url, tmp_path, ["g1", "g2", "g3"]) as (a, b):
        try:
            game = next(g for g in ("g1", "g2", "g3") if owner_of(pg_url, g) == "b")
            ann = player(b.port, f"ann@{game}")  # straight to the owner
            clients.append(ann)
            player(a.port, f"bob@{game}").close()  # Bob's account
            assert ann.one(tp.GetOrderQueueIDs(-1, 0, -1, -1)).ids
            os.kill(b.process.pid, signal.SIGSTOP)
            asked = ann.send(tp.GetOrderQueueIDs(-1, 0, -1, -1))
            bob = TPClient(b.port)  # the kernel accepts the connection; b reads it when it wakes
            clients.append(bob)
            connecting = bob.send(tp.Connect("tae integration test"))
            wait_until(lambda: owner_of(pg_url, game) == "a", 30, "the game moves to a")
            os.kill(b.process.pid, signal.SIGCONT)
            woke = time.monotonic()
            (answer,) = ann.receive(asked)
            assert answer.ids, answer
            assert isinstance(bob.receive(connecting)[0], tp.Okay)
            bob.login(f"bob@{game}", "a-password")
            assert bob.one(tp.GetOrderQueueIDs(-1, 0, -1, -1)).ids
            waited = time.monotonic() - woke
            assert waited < 5, waited
            assert owner_of(pg_url, game) in ("a", "b")  # b may have been handed it back meanwhile
        finally:
            for client in clients:
                client.close()


def test_an_owner_frozen_inside_a_write_transaction_loses_the_game_at_the_failover_timeout(pg_url, tmp_path):
    """The owner stops (SIGSTOP) with a write transaction open: its store session sits idle in
    the transaction, holding the game's claim row. Cutting the node off ends that session too
    (issue 23, item 3), so the game moves at the failover timeout, not when PostgreSQL's own
    `idle_in_transaction_session_timeout` (10 s) would end it."""
    import sqlalchemy as sa

    from server.database import create_engine
    from server.database.ownership import session_name

    from .test_cluster_fencing import legal_orders

    engine = create_engine(pg_url)
    try:
        with two_nodes(pg_url, tmp_path, ["g1"]) as (a, b):
            owner = {"a": a, "b": b}[owner_of(pg_url, "g1") or ""]
            other = "a" if owner.name == "b" else "b"
            ann = player(owner.port, "ann@g1")
            try:
                fleet, kind, target = legal_orders(pg_url, "g1", 1)[0]
                store = session_name(owner.name, "store", owner.process.pid)

                def store_state() -> set[str]:
                    with engine.connect() as conn:
                        rows = conn.execute(
                            sa.text(
                                "SELECT state, coalesce(wait_event_type, '') AS waiting FROM pg_stat_activity"
                                " WHERE application_name = :n"
                            ),
                            {"n": store},
                        ).all()
                    return {f"{r.state}/{r.waiting}" for r in rows}

                # Hold the claim row so that the owner's write waits inside its transaction...
                blocker = engine.connect()
                blocking = blocker.begin()
                blocker.execute(
                    sa.text(
                        "SELECT 1 FROM game_claims c JOIN games g ON g.id = c.game_id"
                        " WHERE g.name = 'g1' FOR UPDATE OF c"
                    )
                )
                ann.send(ann.insert_order(fleet, kind, target))
                wait_until(
                    lambda: "active/Lock" in store_state(), 10, "the owner's write waits for the claim row"
                )
                # ... freeze the owner there, and let the write go on: it now waits for its node.
                os.kill(owner.process.pid, signal.SIGSTOP)
                blocking.commit()
                blocker.close()
                inside = "idle in transaction"
                wait_until(lambda: any(s.startswith(inside) for s in store_state()), 10, "frozen inside")
                started = time.monotonic()
                moved = wait_until(lambda: owner_of(pg_url, "g1") == other, 30, "the game moves")
                waited = time.monotonic() - started
                assert moved and waited < FAILOVER_S + 3, waited
            finally:
                ann.close()
    finally:
        engine.dispose()
