"""The server lease: which server process uses this database, and whether it is alive.

One server per database: two would both end turns and store them. A starting server takes
the lease (`thd_take_lease`), refreshes its heartbeat while it runs and gives the lease back
when it stops. A holder is alive while its heartbeat is recent, unless it is on this host and
its process is gone (a server killed with SIGKILL can be restarted at once). The CLI asks the
same question (`thd_lease_holder`) to decide between editing the database itself and asking
the running server. Every `thd_*` function runs in a transaction; the lease row is locked
(SELECT ... FOR UPDATE on PostgreSQL; SQLite transactions here take the write lock at BEGIN),
so taking the lease and an offline edit by the CLI never interleave.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from .schema import server_lease

LEASE_ID = 1
HEARTBEAT_INTERVAL_S = 5.0
STALE_AFTER_S = 20.0


@dataclass(frozen=True, slots=True)
class LeaseHolder:
    host: str
    pid: int
    started_at: float
    heartbeat_at: float

    def describe(self, now: float) -> str:
        return f"pid {self.pid} on {self.host}, last seen {max(0, now - self.heartbeat_at):.0f} s ago"


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


def thd_lease_holder(conn: Connection, now: float) -> LeaseHolder | None:
    """The live server using this database, or None. Locks the lease row for the rest of the
    transaction, so an edit made in the same transaction cannot race a starting server."""
    return _alive(_locked_row(conn), now)


def thd_take_lease(conn: Connection, host: str, pid: int, now: float) -> LeaseHolder | None:
    """Take the lease for (host, pid); returns the other live holder instead if there is one."""
    row = _locked_row(conn)
    holder = _alive(row, now)
    if holder is not None and (holder.host, holder.pid) != (host, pid):
        return holder
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
