"""Cluster nodes hear of every stored turn of a game (NOTIFY with the turn and its change
record's sequence, sent in the turn's transaction) and catch up by reading the records; other
writes send no news (every node would have to read it, a cost growing with the nodes)."""

from __future__ import annotations

import json

import psycopg
import pytest
from twisted.internet import defer
from twisted.internet.task import Clock

from server.cluster.fencing import FencedStore
from server.cluster.notify import conninfo
from server.database import SynchronousDatabaseThread, create_engine, ownership, upgrade
from server.game.game import Game
from server.model.changes import SeatChanged, TurnEnded, TurnFinished
from server.model.store import GameSetup
from server.model.timer_settings import TimerSettings
from tests.support.deferreds import successResultOf

pytestmark = pytest.mark.timeout(60)


def test_a_stored_turn_is_announced_and_other_nodes_read_its_records(pg_url):
    upgrade(pg_url)
    engine = create_engine(pg_url)
    node = engine.connect()  # the node's session: it holds the node's advisory lock
    store = FencedStore(pg_url, thread=SynchronousDatabaseThread())
    try:
        setup = GameSetup("g", timer=TimerSettings(turn_length=0))
        game_id = successResultOf(defer.maybeDeferred(store.create_game, setup))
        with node.begin():
            node_id, space = ownership.thd_register_node(node, "a", "127.0.0.1:1", "host", 1)
        with node.begin():
            claimed = ownership.thd_round(node, node_id, space, stale_after=30, take=True)
        store.space = space
        store.hold(game_id, claimed.mine[game_id])
        listener = psycopg.connect(conninfo(pg_url), autocommit=True)
        listener.execute(f"LISTEN {ownership.channel(space)}")

        game = Game(game_id, setup, setup.initial_state(), store, Clock())
        for name in ("ann", "bob"):
            successResultOf(game.create_account(name, name + "-password"))
        successResultOf(game.finish_turn(1))
        successResultOf(game.finish_turn(2))
        heard = [json.loads(n.payload) for n in listener.notifies(timeout=2)]
        assert heard == [{"k": "turn", "g": game_id, "t": 1, "q": 6}]

        # another node that heard of record 4 reads what it has not seen
        records = successResultOf(defer.maybeDeferred(store.changes_after, game_id, 4))
        assert [type(r.change) for r in records] == [TurnFinished, TurnEnded]
        assert isinstance(
            successResultOf(defer.maybeDeferred(store.changes_after, game_id, 0))[0].change, SeatChanged
        )
        listener.close()
    finally:
        node.close()
        engine.dispose()
        store.engine.dispose()
