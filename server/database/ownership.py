"""Which node runs which game (PostgreSQL): the node registry, the game claims, the fencing check.

Several server nodes share one PostgreSQL database. Each game is run by exactly one node at a
time; the database says which, and PostgreSQL itself notices when a node dies:

* **Liveness**: every node holds a *session* advisory lock, key (`lock_space`, its node id),
  on one dedicated connection of its own (the claim connection). When the node dies, its
  connection closes and PostgreSQL releases the lock at once; a node is alive exactly while its
  lock is held (`pg_locks`). A node whose process hangs keeps its socket, so a backstop: a node
  whose heartbeat is older than `stale_after` seconds (database time) has its claim connection
  terminated by a live peer (`pg_terminate_backend`), which releases its lock too.
* **Ownership**: `game_claims` has one row per game: the node that runs it (NULL: none) and an
  epoch that every change of owner raises. Games of dead nodes and unowned games are orphans;
  each node's claim round (`thd_round`) takes orphans up to its fair share
  (ceil(games / running nodes)) with `FOR UPDATE SKIP LOCKED`, so two nodes never take the same.
* **Fencing**: every write of a game runs `thd_check_claim` first, in the same transaction: it
  locks the claim row (FOR SHARE) and refuses (`ClaimLost`) unless the epoch is the one the
  writer was given. A change of owner updates that row, so it waits for writes in progress and
  every later write of the old owner fails: a node that lost its claim cannot commit, and a new
  owner, which loads the game after its claim committed, sees everything the old one stored.

Every `thd_*` function takes an open Connection inside a transaction (the caller commits).
The lock itself is taken by `thd_register_node`, which must run on the claim connection.
SQLite has no advisory locks: it keeps the single-server lease (`server.database.lease`), and
the queries here that the command line shares answer "no nodes" there.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from server.database.schema import games, metadata
from server.model.store import StoreUnavailable

RUNNING, STOPPING, STOPPED = "running", "stopping", "stopped"

cluster = sa.Table(
    "cluster",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("lock_space", sa.Integer, nullable=False),
)

cluster_nodes = sa.Table(
    "cluster_nodes",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(100), nullable=False, unique=True),
    sa.Column("advertise", sa.String(255), nullable=False),
    sa.Column("web_address", sa.String(255), nullable=True),  # server.database.web_addresses
    sa.Column("host", sa.String(255), nullable=False),
    sa.Column("pid", sa.Integer, nullable=False),
    sa.Column("backend_pid", sa.Integer, nullable=True),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column(
        "started_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.text("CURRENT_TIMESTAMP")
    ),
    sa.Column(
        "heartbeat_at",
        sa.DateTime(timezone=True),
        nullable=False,
        server_default=sa.text("CURRENT_TIMESTAMP"),
    ),
)

game_claims = sa.Table(
    "game_claims",
    metadata,
    sa.Column(
        "game_id",
        sa.Integer,
        sa.ForeignKey("games.id", ondelete="CASCADE"),
        primary_key=True,
        autoincrement=False,
    ),
    sa.Column("node_id", sa.Integer, sa.ForeignKey("cluster_nodes.id", ondelete="SET NULL"), nullable=True),
    sa.Column("epoch", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True),
    sa.Index("ix_game_claims_node_id", "node_id"),
)


class ClaimLost(StoreUnavailable):
    """This node no longer runs the game (another node claimed it): nothing was stored."""


class NodeConflict(Exception):
    """A node cannot join: its name is in use by a live node, or a single server holds the
    database. The message is one line for the operator."""


@dataclass(frozen=True, slots=True)
class NodeInfo:
    """One node as the database sees it; `alive`: its advisory lock is held right now."""

    id: int
    name: str
    advertise: str
    host: str
    pid: int
    state: str
    alive: bool
    started_at: float  # Unix time
    heartbeat_age: float  # seconds since its last heartbeat (database clock)
    games: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a game runs: its owner (None: nobody right now) and what routing needs."""

    game_id: int
    name: str
    node_id: int | None
    node: str | None
    advertise: str | None
    epoch: int
    last_turn: int
    account_creation: bool

    @property
    def owned(self) -> bool:
        return self.node is not None


@dataclass(frozen=True, slots=True)
class Round:
    """What one claim round saw and did: this node's claims (game id → epoch), where every
    game runs, the nodes, the games it just took, the stale nodes it cut off."""

    mine: dict[int, int]
    placements: tuple[Placement, ...]
    nodes: tuple[NodeInfo, ...]
    taken: tuple[int, ...] = ()
    cut_off: tuple[str, ...] = ()


def is_postgres(conn: Connection) -> bool:
    return conn.dialect.name == "postgresql"


def channel(space: int) -> str:
    """The LISTEN/NOTIFY channel of this database's nodes."""
    return f"tae_cluster_{space}"


def thd_lock_space(conn: Connection) -> int:
    space = conn.execute(sa.select(cluster.c.lock_space).where(cluster.c.id == 1)).scalar()
    if space is None:
        raise RuntimeError("the cluster table has no row: run `tae-server upgrade-db`")
    return int(space)


def thd_notify(conn: Connection, space: int, payload: dict[str, Any]) -> None:
    """Tell every node (delivered when this transaction commits)."""
    conn.execute(sa.text("SELECT pg_notify(:c, :p)"), {"c": channel(space), "p": json.dumps(payload)})


# -- liveness ---------------------------------------------------------------------------------

_LIVE_LOCKS = sa.text(
    "SELECT objid::bigint AS node_id FROM pg_locks WHERE locktype = 'advisory' AND granted"
    " AND objsubid = 2 AND classid = CAST(:space AS oid)"
    " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
)


_LOCK_HOLDER = sa.text(
    "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted"
    " AND objsubid = 2 AND classid = CAST(:space AS oid) AND objid = CAST(:node AS oid)"
    " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
)


def _alive_ids(conn: Connection, space: int) -> set[int]:
    return {int(row.node_id) for row in conn.execute(_LIVE_LOCKS, {"space": space})}


def _nodes(conn: Connection, space: int) -> list[NodeInfo]:
    alive = _alive_ids(conn, space)
    rows = conn.execute(
        sa.select(
            cluster_nodes,
            sa.func.extract("epoch", cluster_nodes.c.started_at).label("started"),
            sa.func.extract("epoch", sa.func.now() - cluster_nodes.c.heartbeat_at).label("age"),
        ).order_by(cluster_nodes.c.name)
    )
    return [
        NodeInfo(
            r.id,
            r.name,
            r.advertise,
            r.host,
            r.pid,
            r.state,
            r.id in alive,
            float(r.started),
            max(0.0, float(r.age)),
        )
        for r in rows
    ]


def thd_live_nodes(conn: Connection) -> list[NodeInfo]:
    """The nodes alive right now ([] on SQLite, which has no nodes)."""
    if not is_postgres(conn):
        return []
    return [n for n in _nodes(conn, thd_lock_space(conn)) if n.alive]


#: The PostgreSQL sessions of a node, by `application_name` (pg_stat_activity): its claim
#: connection, its LISTEN connection and its store's connections.
NODE_SESSION_ROLES = ("claims", "news", "store")


def session_name(node: str, role: str, pid: int) -> str:
    """The `application_name` of the sessions of one role of node `node`'s process `pid`: the
    process, because a node of that name starting again is another process, whose sessions
    ending the old one's must spare (its start would fail). PostgreSQL keeps 63 bytes: a long
    node name is cut, never the role or the process."""
    tail = f" {role} {pid}"
    name = node.encode()[: 63 - len("tae-node ") - len(tail.encode())].decode(errors="ignore")
    return f"tae-node {name}{tail}"


def _end_sessions_of(
    conn: Connection, node: NodeInfo, wait_s: float = 2.0, *, in_transaction: bool = False
) -> int:
    """End every session of the process registered as `node` (a node cut off), its store's
    connections too, so that no transaction of a frozen node keeps a claim row locked; with
    `in_transaction`, only those left idle inside a transaction (a dead node still holding
    claims). A process of the same name starting again has sessions of its own name
    (`session_name`), left alone. Waits (up to `wait_s`) until they are gone, so that this round
    can take the games. How many there were."""
    names = [session_name(node.name, role, node.pid) for role in NODE_SESSION_ROLES]
    idle = " AND state LIKE 'idle in transaction%'" if in_transaction else ""
    conn.execute(sa.text("SELECT pg_stat_clear_snapshot()"))
    pids = (
        conn.execute(
            sa.text(
                "SELECT pid FROM pg_stat_activity WHERE application_name = ANY(:names)"
                " AND pid <> pg_backend_pid()" + idle
            ),
            {"names": names},
        )
        .scalars()
        .all()
    )
    for pid in pids:
        conn.execute(sa.text("SELECT pg_terminate_backend(:p)"), {"p": int(pid)})
    for pid in pids:
        _gone(conn, int(pid), wait_s)
    return len(pids)


def thd_end_session(conn: Connection, backend_pid: int, wait_s: float = 5.0) -> bool:
    """End the PostgreSQL session `backend_pid` (if it is still there) and wait until it is
    gone: True once it is, False if it still runs after `wait_s` seconds. A session that is
    committing finishes its commit first (PostgreSQL does not interrupt a commit), so once it is
    gone, what it committed is visible. True on SQLite, which has no sessions to end."""
    if not is_postgres(conn):
        return True
    conn.execute(sa.text("SELECT pg_terminate_backend(:p)"), {"p": backend_pid})
    return _gone(conn, backend_pid, wait_s)


#: Seconds between two looks whether an ended session is gone.
GONE_POLL_S = 0.02


def _gone(conn: Connection, backend_pid: int, wait_s: float) -> bool:
    """Whether the session `backend_pid` is gone, waiting up to `wait_s` seconds for it (the
    activity view is read afresh each time: a transaction otherwise keeps its first reading)."""
    query = sa.text("SELECT 1 FROM pg_stat_activity WHERE pid = :p")
    for _ in range(max(1, round(wait_s / GONE_POLL_S))):
        conn.execute(sa.text("SELECT pg_stat_clear_snapshot()"))
        if conn.execute(query, {"p": backend_pid}).first() is None:
            return True
        time.sleep(GONE_POLL_S)
    return False


# -- joining and leaving ----------------------------------------------------------------------


def thd_register_node(conn: Connection, name: str, advertise: str, host: str, pid: int) -> tuple[int, int]:
    """Join as node `name`: (node id, lock space). Runs on the claim connection: the advisory
    lock it takes lives as long as that connection. NodeConflict when a live node has the name.

    The games a dead earlier incarnation of this name still claimed become orphans (their epoch
    moves on, so that incarnation, if it still runs somewhere, cannot write them any more)."""
    space = thd_lock_space(conn)
    conn.execute(
        sa.text(
            "INSERT INTO cluster_nodes (name, advertise, host, pid, state) VALUES (:n, :a, :h, :p, :s)"
            " ON CONFLICT (name) DO NOTHING"
        ),
        {"n": name, "a": advertise, "h": host, "p": pid, "s": STOPPED},
    )
    node_id = int(
        conn.execute(sa.select(cluster_nodes.c.id).where(cluster_nodes.c.name == name)).scalar_one()
    )
    got = conn.execute(sa.text("SELECT pg_try_advisory_lock(:s, :n)"), {"s": space, "n": node_id}).scalar()
    if not got:
        row = conn.execute(sa.select(cluster_nodes).where(cluster_nodes.c.id == node_id)).one()
        raise NodeConflict(f"a node named {name!r} is running (pid {row.pid} on {row.host}, {row.advertise})")
    conn.execute(
        cluster_nodes.update()
        .where(cluster_nodes.c.id == node_id)
        .values(
            advertise=advertise,
            host=host,
            pid=pid,
            backend_pid=sa.func.pg_backend_pid(),
            state=RUNNING,
            started_at=sa.func.now(),
            heartbeat_at=sa.func.now(),
        )
    )
    released = conn.execute(
        game_claims.update()
        .where(game_claims.c.node_id == node_id)
        .values(node_id=None, epoch=game_claims.c.epoch + 1)
    ).rowcount
    if released:
        thd_notify(conn, space, {"k": "claims"})
    return node_id, space


def thd_set_state(conn: Connection, node_id: int, state: str) -> None:
    conn.execute(cluster_nodes.update().where(cluster_nodes.c.id == node_id).values(state=state))


def thd_leave(conn: Connection, node_id: int, space: int) -> list[int]:
    """The node stops: the games it still claims become orphans for the others; their ids."""
    rows = conn.execute(
        game_claims.update()
        .where(game_claims.c.node_id == node_id)
        .values(node_id=None, epoch=game_claims.c.epoch + 1)
        .returning(game_claims.c.game_id)
    ).all()
    conn.execute(
        cluster_nodes.update().where(cluster_nodes.c.id == node_id).values(state=STOPPED, backend_pid=None)
    )
    conn.execute(sa.text("SELECT pg_advisory_unlock(:s, :n)"), {"s": space, "n": node_id})
    thd_notify(conn, space, {"k": "claims"})
    return [int(r.game_id) for r in rows]


# -- claims -----------------------------------------------------------------------------------


def thd_check_claim(conn: Connection, game_id: int, epoch: int) -> None:
    """The fencing check of every write: ClaimLost unless the game's claim epoch is `epoch`.
    Locks the claim row until the transaction ends, so no change of owner overtakes the write."""
    stored = conn.execute(
        sa.select(game_claims.c.epoch).where(game_claims.c.game_id == game_id).with_for_update(read=True)
    ).scalar()
    if stored is None or int(stored) != epoch:
        raise ClaimLost(f"game {game_id} is run by another node now (claim {epoch}, stored {stored})")


def thd_hand_over(
    conn: Connection, game_id: int, node_id: int, epoch: int, to_node: int | None, space: int
) -> int:
    """Give the game to `to_node` (None: to whoever claims it next); the new epoch.
    ClaimLost when this node's claim is not `epoch` any more."""
    new = conn.execute(
        game_claims.update()
        .where(
            game_claims.c.game_id == game_id, game_claims.c.node_id == node_id, game_claims.c.epoch == epoch
        )
        .values(node_id=to_node, epoch=game_claims.c.epoch + 1, claimed_at=sa.func.now())
        .returning(game_claims.c.epoch)
    ).scalar()
    if new is None:
        raise ClaimLost(f"game {game_id} is not run by this node any more")
    thd_notify(conn, space, {"k": "claims", "g": game_id})
    return int(new)


def _placements(conn: Connection, nodes: Iterable[NodeInfo]) -> tuple[Placement, ...]:
    by_id = {n.id: n for n in nodes}
    rows = conn.execute(
        sa.select(
            games.c.id,
            games.c.name,
            games.c.last_turn,
            games.c.account_creation,
            game_claims.c.node_id,
            game_claims.c.epoch,
        )
        .select_from(games.outerjoin(game_claims, game_claims.c.game_id == games.c.id))
        .order_by(games.c.id)
    )
    placements = []
    for r in rows:
        node = by_id.get(r.node_id) if r.node_id is not None else None
        live = node is not None and node.alive
        placements.append(
            Placement(
                r.id,
                r.name,
                r.node_id if live else None,
                node.name if live and node else None,
                node.advertise if live and node else None,
                int(r.epoch or 0),
                int(r.last_turn),
                bool(r.account_creation),
            )
        )
    return tuple(placements)


def thd_round(conn: Connection, node_id: int, space: int, *, stale_after: float, take: bool) -> Round:
    """One claim round of node `node_id`: heartbeat; cut off live nodes whose heartbeat is stale;
    give every game a claim row; take orphans up to this node's fair share (when `take`); and
    read back this node's claims and where every game runs."""
    conn.execute(
        cluster_nodes.update().where(cluster_nodes.c.id == node_id).values(heartbeat_at=sa.func.now())
    )
    nodes = _nodes(conn, space)
    cut_off = []
    for node in nodes:
        if node.alive and node.id != node_id and node.heartbeat_age > stale_after:
            backend = conn.execute(
                sa.select(cluster_nodes.c.backend_pid).where(cluster_nodes.c.id == node.id)
            ).scalar()
            holder = conn.execute(_LOCK_HOLDER, {"space": space, "node": node.id}).scalar()
            if backend and holder != backend:
                # The lock is held by another session than the one registered: the node is
                # joining again (its registration, with a fresh heartbeat, not committed yet).
                continue
            if backend:
                conn.execute(sa.text("SELECT pg_terminate_backend(:p)"), {"p": backend})
                _end_sessions_of(conn, node)
                cut_off.append(node.name)
    if take:
        # A dead node that still holds claims may still have sessions (a frozen process inside
        # a write transaction keeps the claim row locked, and SKIP LOCKED would skip it).
        holders = set(
            conn.execute(sa.select(game_claims.c.node_id).where(game_claims.c.node_id.is_not(None)))
            .scalars()
            .all()
        )
        for node in nodes:
            if not node.alive and node.id in holders and node.name not in cut_off:
                _end_sessions_of(conn, node, in_transaction=True)
    if cut_off:
        nodes = [
            NodeInfo(n.id, n.name, n.advertise, n.host, n.pid, n.state, False, n.started_at, n.heartbeat_age)
            if n.name in cut_off
            else n
            for n in nodes
        ]
    conn.execute(
        sa.text(
            "INSERT INTO game_claims (game_id, epoch) SELECT g.id, 0 FROM games g WHERE NOT EXISTS"
            " (SELECT 1 FROM game_claims c WHERE c.game_id = g.id) ON CONFLICT DO NOTHING"
        )
    )
    alive = [n.id for n in nodes if n.alive]
    taken: list[int] = []
    if take:
        running = [n.id for n in nodes if n.alive and n.state == RUNNING]
        claims = conn.execute(sa.select(game_claims.c.game_id, game_claims.c.node_id)).all()
        mine_now = sum(1 for c in claims if c.node_id == node_id)
        orphans = [c.game_id for c in claims if c.node_id is None or c.node_id not in alive]
        share = math.ceil(len(claims) / max(1, len(running) or 1))
        room = share - mine_now
        if orphans and room > 0:
            free = (
                conn.execute(
                    sa.select(game_claims.c.game_id)
                    .where(
                        game_claims.c.game_id.in_(orphans),
                        sa.or_(game_claims.c.node_id.is_(None), game_claims.c.node_id.not_in(alive or [-1])),
                    )
                    .order_by(game_claims.c.game_id)
                    .limit(room)
                    .with_for_update(skip_locked=True)
                )
                .scalars()
                .all()
            )
            if free:
                taken = [
                    int(g)
                    for g in conn.execute(
                        game_claims.update()
                        .where(game_claims.c.game_id.in_(list(free)))
                        .values(node_id=node_id, epoch=game_claims.c.epoch + 1, claimed_at=sa.func.now())
                        .returning(game_claims.c.game_id)
                    ).scalars()
                ]
                thd_notify(conn, space, {"k": "claims"})
    mine = {
        int(r.game_id): int(r.epoch)
        for r in conn.execute(
            sa.select(game_claims.c.game_id, game_claims.c.epoch).where(game_claims.c.node_id == node_id)
        )
    }
    placements = _placements(conn, nodes)
    return Round(mine, placements, _with_games(nodes, placements), tuple(taken), tuple(cut_off))


def _with_games(nodes: list[NodeInfo], placements) -> tuple[NodeInfo, ...]:
    """Each node with the names of the games placed on it."""
    names: dict[int, list[str]] = {}
    for p in placements:
        if p.node_id is not None:
            names.setdefault(p.node_id, []).append(p.name)
    return tuple(replace(n, games=tuple(names.get(n.id, ()))) for n in nodes)


# -- for the command line ---------------------------------------------------------------------


def thd_cluster_view(conn: Connection) -> tuple[list[NodeInfo], list[Placement]]:
    """Every node (with the games it runs) and where every game runs; ([], []) on SQLite."""
    if not is_postgres(conn):
        return [], []
    nodes = _nodes(conn, thd_lock_space(conn))
    placements = _placements(conn, nodes)
    return list(_with_games(nodes, placements)), list(placements)
