"""The claim queries and the fencing check on PostgreSQL, without server processes.

Each "node" here is one dedicated connection, as a node's claim connection is: registering on
it takes the node's advisory lock, closing it frees the lock the way a dying process does.
"""

from __future__ import annotations

import time

import pytest
import sqlalchemy as sa

from server.cluster.fencing import FencedStore
from server.database import SyncDatabase, SynchronousDatabaseThread
from server.database import games as q
from server.database import ownership as o
from server.model.store import Account, GameSetup, OrderEntry
from tests.support.deferreds import failureResultOf, successResultOf

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def database(pg_url):
    with SyncDatabase(pg_url) as db:
        db.upgrade()
        for index in range(5):
            db.create_game(GameSetup(f"g{index}", None, seed=index))
        yield db


class Node:
    def __init__(self, db: SyncDatabase, name: str):
        self.connection = db.engine.connect()
        self.id, self.space = self.run(o.thd_register_node, name, f"127.0.0.1:{len(name)}", "host", 1)

    def run(self, fn, *args, **kwargs):
        with self.connection.begin():
            return fn(self.connection, *args, **kwargs)

    def round(self, take: bool = True) -> o.Round:
        return self.run(o.thd_round, self.id, self.space, stale_after=30, take=take)

    def close(self) -> None:
        self.connection.invalidate()  # really closed, not handed back to the pool
        self.connection.close()


def test_rounds_share_the_games_and_a_dead_nodes_games_are_taken(database):
    a = Node(database, "a")
    first = a.round()
    assert len(first.mine) == 5 and sorted(first.taken) == sorted(first.mine)
    b = Node(database, "b")
    assert b.round().mine == {}  # nothing is orphaned: a keeps its games
    placements = {p.name: p for p in b.round().placements}
    assert {p.node for p in placements.values()} == {"a"}
    a.close()  # the node dies: its lock is freed as soon as PostgreSQL ends a's backend
    taken = b.round()
    for _ in range(50):  # the backend's exit is asynchronous: the claim rounds simply repeat
        if taken.mine:
            break
        time.sleep(0.1)
        taken = b.round()
    assert sorted(taken.mine) == sorted(first.mine)
    assert all(taken.mine[g] == first.mine[g] + 1 for g in first.mine)  # every claim moved on
    assert {n.name: n.alive for n in taken.nodes} == {"a": False, "b": True}
    b.close()


def test_orphans_are_shared_by_the_running_nodes(database):
    a, b = Node(database, "a"), Node(database, "b")
    assert len(a.round().taken) == 3  # ceil(5 / 2)
    assert len(b.round().taken) == 2
    with pytest.raises(o.NodeConflict, match="a node named 'a' is running"):
        Node(database, "a")
    a.close()
    b.close()


def test_the_fencing_check_refuses_an_old_epoch_and_hand_over_moves_the_claim(database):
    a, b = Node(database, "a"), Node(database, "b")
    mine = a.round().mine
    game, epoch = next(iter(mine.items()))
    database.run(o.thd_check_claim, game, epoch)  # the current claim writes
    new = a.run(o.thd_hand_over, game, a.id, epoch, b.id, a.space)
    assert new == epoch + 1
    with pytest.raises(o.ClaimLost):
        database.run(o.thd_check_claim, game, epoch)
    with pytest.raises(o.ClaimLost):  # a cannot hand over what it no longer has
        a.run(o.thd_hand_over, game, a.id, epoch, None, a.space)
    assert b.round().mine[game] == new
    released = a.run(o.thd_leave, a.id, a.space)
    assert sorted(released) == sorted(g for g in mine if g != game)
    assert {n.name: (n.alive, n.state) for n in b.round(take=False).nodes}["a"] == (False, o.STOPPED)
    a.close()
    b.close()


def test_a_fenced_store_writes_only_the_games_it_holds(database, pg_url):
    a = Node(database, "a")
    mine = a.round().mine
    game, epoch = next(iter(mine.items()))
    lost = []
    store = FencedStore(pg_url, thread=SynchronousDatabaseThread(), on_lost=lost.append)
    store.space = a.space
    entry = OrderEntry(1, 1, 1, 5, 0, 1, 0)
    failureResultOf(store.record_order(game, entry), o.ClaimLost)  # not held: refused at once
    assert lost == []
    store.hold(game, epoch)
    successResultOf(store.add_account(game, Account("ann", "h", 1), ()))
    successResultOf(store.record_order(game, entry))
    a.run(o.thd_hand_over, game, a.id, epoch, None, a.space)  # the claim moves on
    failureResultOf(store.record_order(game, OrderEntry(2, 1, 1, 6, 0, 1, 0)), o.ClaimLost)
    assert lost == [game]
    stored = database.run(q.thd_load_games, [game])[0]
    assert [e.seq for e in stored.orders] == [1]
    store.forget(game)
    failureResultOf(store.commit_turn(game, None), o.ClaimLost)  # a game let go of: no write
    with database.engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM game_claims")).scalar() == 5
    successResultOf(store.close())
    a.close()


def test_cluster_settings_from_the_configuration_file(tmp_path):
    from server.config.errors import ConfigError
    from server.config.file import load_config

    path = tmp_path / "node.toml"
    path.write_text('[cluster]\nnode = "node-a"\nadvertise = "10.0.0.5:6923"\npoll_interval = 0.5\n')
    node = load_config(str(path)).node
    assert node is not None and (node.node, node.address, node.poll_interval) == (
        "node-a",
        ("10.0.0.5", 6923),
        0.5,
    )
    path.write_text("[cluster]\npoll_interval = 0.5\n")
    assert load_config(str(path)).node is None  # timings alone make no node (serve --node does)
    for text, problem in (
        ('[cluster]\nnode = "a"\n', "cluster.advertise"),
        ('[cluster]\nnode = "a b"\nadvertise = "h:1"\n', "cluster.node"),
        ('[cluster]\nnode = "a"\nadvertise = "h:1"\nfailover_timeout = 1.0\n', "failover_timeout"),
        ('[cluster]\nnodes = "a"\n', "nodes"),
    ):
        path.write_text(text)
        with pytest.raises(ConfigError, match=problem):
            load_config(str(path))


class FrozenWriter:
    """A node's store session stopped inside a write of game `game`: the fencing check holds the
    game's claim row (FOR SHARE) and nothing more happens (SIGSTOP, a machine that pauses)."""

    def __init__(self, pg_url: str, node: str, game: int, epoch: int):
        from server.database import create_engine

        name = o.session_name(node, "store", 1)  # the process of `Node`'s registration
        self.engine = create_engine(pg_url, connect_args={"application_name": name})
        self.connection = self.engine.connect()
        self.transaction = self.connection.begin()
        o.thd_check_claim(self.connection, game, epoch)

    def close(self) -> None:
        self.connection.invalidate()
        self.engine.dispose()


def test_a_cut_off_node_loses_every_session_and_its_games_are_taken_in_the_same_round(database, pg_url):
    a = Node(database, "a")
    mine = a.round().mine
    game, epoch = min(mine.items())
    frozen = FrozenWriter(pg_url, "a", game, epoch)
    b = Node(database, "b")
    cut = b.run(o.thd_round, b.id, b.space, stale_after=0.0, take=True)
    assert cut.cut_off == ("a",)
    assert sorted(cut.mine) == sorted(mine), "the game whose claim row the frozen writer held is taken too"
    with pytest.raises(sa.exc.DBAPIError):  # the frozen writer's session was ended
        frozen.connection.exec_driver_sql("SELECT 1")
    frozen.close()
    a.close()
    b.close()


def test_a_dead_nodes_frozen_writer_is_ended_when_its_games_are_taken(database, pg_url):
    a = Node(database, "a")
    mine = a.round().mine
    game, epoch = min(mine.items())
    frozen = FrozenWriter(pg_url, "a", game, epoch)
    a.close()  # the claim connection is gone (its lock free); the store session is not
    b = Node(database, "b")
    taken = b.round()
    for _ in range(50):  # the claim backend's exit is asynchronous
        if len(taken.mine) == len(mine):
            break
        time.sleep(0.1)
        taken = b.round()
    assert sorted(taken.mine) == sorted(mine)
    frozen.close()
    b.close()


def test_ending_a_dead_node_s_sessions_spares_those_of_its_name_starting_again(database, pg_url):
    """The process starting again under the dead node's name has a store session inside a
    transaction of its start (before it registers): ending the dead one's sessions ended it too,
    and the node could not start ("the commit's answer was lost", found by the chaos run)."""
    a = Node(database, "a")
    mine = a.round().mine
    game, epoch = min(mine.items())
    frozen = FrozenWriter(pg_url, "a", game, epoch)  # the dead process's (pid 1)
    a.close()
    from server.database import create_engine

    starting = create_engine(pg_url, connect_args={"application_name": o.session_name("a", "store", 7)})
    reading = starting.connect()  # the new process's first read, inside its transaction
    reading.begin()
    reading.exec_driver_sql("SELECT count(*) FROM games")
    b = Node(database, "b")
    taken = b.round()
    for _ in range(50):
        if len(taken.mine) == len(mine):
            break
        time.sleep(0.1)
        taken = b.round()
    assert sorted(taken.mine) == sorted(mine)
    with pytest.raises(sa.exc.DBAPIError):
        frozen.connection.exec_driver_sql("SELECT 1")
    assert reading.exec_driver_sql("SELECT 1").scalar() == 1  # left alone
    reading.close()
    starting.dispose()
    frozen.close()
    b.close()


def test_a_node_joining_again_is_not_cut_off_before_its_registration_commits(database, pg_url):
    """Its lock is held (by its new claim connection) while its fresh heartbeat is not
    committed yet: to a peer it looks alive and stale, but it is not the session registered,
    and ending its sessions would stop the node at its start (found by the chaos run)."""
    from server.database import create_engine

    a = Node(database, "a")
    c = Node(database, "c")
    c.close()  # c stops...
    with database.engine.begin() as conn:
        conn.execute(
            sa.text("UPDATE cluster_nodes SET heartbeat_at = now() - interval '1 hour' WHERE name = 'c'")
        )
    engine = create_engine(pg_url, connect_args={"application_name": o.session_name("c", "claims", 2)})
    joining = engine.connect()  # ... and starts again: its registration is under way
    registration = joining.begin()
    o.thd_register_node(joining, "c", "127.0.0.1:1", "host", 2)
    round_ = a.run(o.thd_round, a.id, a.space, stale_after=30.0, take=True)
    assert round_.cut_off == ()
    registration.commit()  # its session was left alone
    assert {n.name: n.alive for n in a.round().nodes} == {"a": True, "c": True}
    joining.close()
    engine.dispose()
    a.close()
