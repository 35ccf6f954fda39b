"""A node cut off from PostgreSQL while it still believes it runs a game cannot commit to it.

Node a reaches the database through a TCP proxy of this test, node b directly. Node a runs the
game; two players are connected to node a itself. The proxy stops passing bytes (a cut cable:
node a hears nothing and notices nothing), and a's claim connection is killed on the server
with pg_terminate_backend, which frees its advisory lock: node b claims the game. A player then
gives an order on node a, which still holds the game; the order's write waits at the cut. When
the cable is back, the write meets the fencing check (the claim epoch moved on) and fails: node a
stores nothing. The same connection then carries the player over to node b, the new owner: the
order under way, looked up and found not stored, is sent again there, stored by b and answered
as if nothing had happened (issue 23, item 5); the game goes on.
"""

from __future__ import annotations

import time

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

import protocol as tp
from server.database import SyncDatabase
from server.game.replay import check_replay
from server.model.store import GameSetup

from .pg_proxy import PostgresProxy
from .test_cluster import NodeProcess, nodes_view, owner_of, wait_until
from .tp_client import TPClient

pytestmark = pytest.mark.timeout(240)


def orders_of(url: str, game: str, player: int) -> list:
    with SyncDatabase(url) as db:
        stored = next(g for g in db.load_games() if g.setup.name == game)
    return [e for e in stored.orders if e.player == player]


def test_a_cut_off_node_cannot_commit_and_the_new_owner_goes_on(pg_url, tmp_path):
    with SyncDatabase(pg_url) as db:
        db.upgrade()
        db.create_game(GameSetup("duel", None, seed=7, description="fencing"))
    url = make_url(pg_url)
    proxy = PostgresProxy((url.host or "127.0.0.1", url.port or 5432))
    via_proxy = proxy.url_of(url)
    a = NodeProcess(via_proxy, "a", cwd=tmp_path)
    b = NodeProcess(pg_url, "b", cwd=tmp_path)
    clients: list[TPClient] = []
    try:
        a.start(timeout=60)
        wait_until(lambda: owner_of(pg_url, "duel") == "a", 20, "node a runs the game")
        b.start(timeout=60)  # b joins later: a keeps its games
        wait_until(lambda: len([n for n in nodes_view(pg_url)["nodes"] if n["alive"]]) == 2, 20, "two nodes")
        assert owner_of(pg_url, "duel") == "a"
        for name in ("ann", "bob"):
            client = TPClient(a.port)
            clients.append(client)
            client.connect()
            assert isinstance(client.create_account(f"{name}@duel", "a-password"), tp.Okay)
            client.login(f"{name}@duel", "a-password")
        ann, bob = clients
        fleets = legal_orders(pg_url, "duel", 1)
        fleet, kind, target = fleets[0]
        assert isinstance(ann.one(ann.insert_order(fleet, kind, target)), tp.Order)

        # Cut node a off, and free its claim the way PostgreSQL would for a dead node.
        proxy.cut()
        engine = sa.create_engine(pg_url)
        with engine.begin() as conn:
            backend = conn.execute(sa.text("SELECT backend_pid FROM cluster_nodes WHERE name = 'a'")).scalar()
            assert conn.execute(sa.text("SELECT pg_terminate_backend(:p)"), {"p": backend}).scalar()
        wait_until(lambda: owner_of(pg_url, "duel") == "b", 15, "node b claims the game")

        # Node a still believes it runs the game: the order is taken there, and stored... not by a.
        fleet2, kind2, target2 = fleets[1]
        sequence = ann.send(ann.insert_order(fleet2, kind2, target2))
        time.sleep(1.5)  # the write waits at the cut
        proxy.mend()
        reply = ann.receive(sequence)
        # Carried over to b on the same connection: the order, not stored by a, is sent again there.
        assert isinstance(reply[0], tp.Order) and (reply[0].id, reply[0].type) == (fleet2, kind2), reply
        assert [(e.object_id, e.target) for e in orders_of(pg_url, "duel", 1)] == [
            (fleet, target),
            (fleet2, target2),
        ]

        # The same connections go on with node b, the new owner.
        assert ann.time_remaining().turn == 0
        for client in clients:
            assert isinstance(client.one(tp.FinishedTurn()), tp.Okay)
        assert bob.time_remaining().turn == 1
        assert owner_of(pg_url, "duel") == "b"
        assert any("claim" in line for line in a.lines), a.lines[-5:]
    finally:
        for client in clients:
            client.close()
        a.kill()
        b.kill()
        proxy.close()
    with SyncDatabase(pg_url) as db:
        stored = next(g for g in db.load_games() if g.setup.name == "duel")
    assert [t.turn for t in stored.turns] == [1]
    assert sorted((e.object_id, e.target) for e in stored.orders) == sorted(
        [(fleet, target), (fleet2, target2)]
    )
    assert check_replay(stored) == []


def legal_orders(url: str, game: str, player: int) -> list[tuple[int, int, int]]:
    """Two legal orders of `player` for two different fleets, from the stored game."""
    from twisted.internet.task import Clock

    from ruleset import game_rng
    from ruleset.simulator import RandomPlayer
    from server.game.game import Game

    with SyncDatabase(url) as db:
        stored = next(g for g in db.load_games() if g.setup.name == game)
    state = Game.restore(stored, None, Clock()).state
    found: dict[int, tuple[int, int, int]] = {}
    for attempt in range(50):
        for order in RandomPlayer()(state, player, game_rng(attempt, 1, "fencing")):
            found.setdefault(order.fleet, (order.fleet, int(order.type), order.target))
        if len(found) >= 2:
            return list(found.values())[:2]
    raise AssertionError("no two legal orders")
