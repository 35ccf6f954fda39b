"""The server lease: which server process uses this database, and whether it is alive.

One server per database: two would both end turns and store them. A starting server takes
the lease (`thd_take_lease`), refreshes its heartbeat while it runs and gives the lease back
when it stops. A holder is alive while its heartbeat is recent, unless it is on this host and
its process is gone (a server killed with SIGKILL can be restarted at once). The CLI asks the
same question (`thd_lease_holder`) to decide between editing the database itself and asking
the running server. Every `thd_*` function runs in a transaction; the lease row is locked
(SELECT ... FOR UPDATE on PostgreSQL; SQLite transactions here take the write lock at BEGIN),
so taking the lease and an offline edit by the CLI never interleave.

Cluster nodes (PostgreSQL, `server.database.ownership`) hold no lease, but count as servers
using the database here: a single server does not start while a node is alive, a node does not
join while a single server holds the lease (`thd_single_holder`), and the CLI asks them too.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from server.database.schema import server_lease

LEASE_ID = 1
HEARTBEAT_INTERVAL_S = 5.0
STALE_AFTER_S = 20.0


@dataclass(frozen=True, slots=True)
class LeaseHolder:
    host: str
    pid: int
    started_at: float
    heartbeat_at: float
    node: str | None = None  # a cluster node (the first live one), not a single server
    nodes: int = 0  # how many cluster nodes are alive

    def describe(self, now: float) -> str:
        seen = f"last seen {max(0, now - self.heartbeat_at):.0f} s ago"
        if self.node is not None:
            many = f"{self.nodes} cluster node{'s' if self.nodes != 1 else ''}"
            return f"{many}, e.g. {self.node!r} (pid {self.pid} on {self.host}, {seen})"
        return f"pid {self.pid} on {self.host}, {seen}"


def this_host() -> str:
    return socket.gethostname()


def process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def _locked_row(conn: Connection):
    query = sa.select(server_lease).where(server_lease.c.id == LEASE_ID).with_for_update()
    row = conn.execute(query).first()
    if row is None:
        conn.execute(server_lease.insert().values(id=LEASE_ID))
        row = conn.execute(query).first()
    return row


def _alive(row, now: float) -> LeaseHolder | None:
    if row is None or row.pid is None or row.heartbeat_at is None:
        return None
    holder = LeaseHolder(row.host or "?", row.pid, row.started_at or 0.0, row.heartbeat_at)
    if now - holder.heartbeat_at > STALE_AFTER_S:
        return None
    if holder.host == this_host() and not process_exists(holder.pid):
        return None
    return holder


def _live_node(conn: Connection, now: float) -> LeaseHolder | None:
    from server.database.ownership import thd_live_nodes

    nodes = thd_live_nodes(conn)
    if not nodes:
        return None
    first = nodes[0]
    age = first.heartbeat_age
    return LeaseHolder(first.host, first.pid, first.started_at, now - age, first.name, len(nodes))


def thd_single_holder(conn: Connection, now: float) -> LeaseHolder | None:
    """The live single server (not a cluster node) holding the lease, or None; locks the row."""
    return _alive(_locked_row(conn), now)


def thd_lease_holder(conn: Connection, now: float) -> LeaseHolder | None:
    """The live server using this database (a single server, or a cluster node), or None.
    Locks the lease row for the rest of the transaction, so an edit made in the same
    transaction cannot race a starting server (nodes lock it when they join)."""
    return _alive(_locked_row(conn), now) or _live_node(conn, now)


def thd_take_lease(conn: Connection, host: str, pid: int, now: float) -> LeaseHolder | None:
    """Take the lease for (host, pid); returns the other live holder instead if there is one
    (a single server, or a cluster node)."""
    row = _locked_row(conn)
    holder = _alive(row, now)
    if holder is not None and (holder.host, holder.pid) != (host, pid):
        return holder
    node = _live_node(conn, now)
    if node is not None:
        return node
    conn.execute(
        server_lease.update()
        .where(server_lease.c.id == LEASE_ID)
        .values(host=host, pid=pid, started_at=now, heartbeat_at=now)
    )
    return None


def thd_heartbeat(conn: Connection, host: str, pid: int, now: float) -> bool:
    """Refresh the heartbeat; False if the lease is no longer ours."""
    result = conn.execute(
        server_lease.update()
        .where(server_lease.c.id == LEASE_ID, server_lease.c.host == host, server_lease.c.pid == pid)
        .values(heartbeat_at=now)
    )
    return result.rowcount == 1


def thd_release_lease(conn: Connection, host: str, pid: int) -> None:
    conn.execute(
        server_lease.update()
        .where(server_lease.c.id == LEASE_ID, server_lease.c.host == host, server_lease.c.pid == pid)
        .values(pid=None, heartbeat_at=None)
    )
