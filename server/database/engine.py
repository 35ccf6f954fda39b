"""Engines: the database URL in, an Engine set up for how this server uses it out.

SQLite (the default, `sqlite:///tae.db`): every connection gets WAL journaling (readers never
block the writer), `foreign_keys=ON`, `synchronous=FULL` (a commit survives a power cut, which
is the promise made to players) and a busy timeout, so that a CLI command run next to the
server waits for the lock instead of failing. pysqlite's own transaction handling is switched
off and every transaction starts with `BEGIN IMMEDIATE`: it takes the write lock at the start,
so a transaction never fails half-way on a lock upgrade, and reads inside it are consistent.
An in-memory SQLite database is one shared connection (StaticPool): every user of the engine
sees the same database.

A SQLite file this process may not write (a read-only file, directory or file system) is
opened read-only (`readable_url`: SQLite's `mode=ro`, or `immutable=1` when not even the WAL's
shared-memory file can be made): reading commands work, writes fail with a clear error.

PostgreSQL: any `postgresql+psycopg://` URL; query parameters go to psycopg (for instance
`?options=-csearch_path%3Dmyschema`). A server that does not answer makes a connection attempt
fail after `PG_CONNECT_TIMEOUT_S` rather than hang. Nothing a process holds on PostgreSQL may
outlive the process's silence by long (a node frozen inside a transaction, or cut off by the
network, must not keep its locks while its games move): every session is set up with
`PG_SESSION_LIMITS` (a transaction left idle is ended, a lock is not waited for forever), and
TCP keepalives with a user timeout (`PG_KEEPALIVES`) make both ends notice a silent peer in
seconds rather than when TCP gives up (hours). Options in the URL come after ours and win.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.pool import StaticPool

DEFAULT_URL = "sqlite:///tae.db"
SQLITE_BUSY_TIMEOUT_S = 30
PG_CONNECT_TIMEOUT_S = 10
#: Session settings of every PostgreSQL connection, as `SHOW` prints them. No transaction of ours
#: waits for its client between statements, so an idle one belongs to a frozen or lost process;
#: the server's end of the connection probes a silent client as ours probes the server.
PG_SESSION_LIMITS = {
    "idle_in_transaction_session_timeout": "10s",
    "lock_timeout": "10s",
    "tcp_keepalives_idle": "5",
    "tcp_keepalives_interval": "2",
    "tcp_keepalives_count": "3",
    "tcp_user_timeout": "20000",  # milliseconds
}
#: libpq's keepalive parameters: a silent peer is noticed after about 5 + 3 × 2 s; unacknowledged
#: data gives up after 20 s.
PG_KEEPALIVES = {
    "keepalives": 1,
    "keepalives_idle": 5,
    "keepalives_interval": 2,
    "keepalives_count": 3,
    "tcp_user_timeout": 20_000,
}


def is_memory_sqlite(url: URL) -> bool:
    return url.get_backend_name() == "sqlite" and url.database in (None, "", ":memory:")


def is_read_only_sqlite(url: URL) -> bool:
    return url.query.get("mode") == "ro" or url.query.get("immutable") in ("1", "true")


def readable_url(url: str) -> str:
    """`url`, or for an existing SQLite file that this process cannot write, its read-only URL."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or is_memory_sqlite(parsed) or is_read_only_sqlite(parsed):
        return url
    path = Path(str(parsed.database))
    if str(parsed.database).startswith("file:") or not path.is_file() or os.access(path, os.W_OK):
        return url
    folder = path.resolve().parent
    shared = path.with_name(path.name + "-shm")
    can_share = os.access(folder, os.W_OK) or (shared.exists() and os.access(shared, os.W_OK))
    mode = {"mode": "ro"} if can_share else {"immutable": "1"}
    readable = parsed.set(database=f"file:{path.resolve()}", query={**mode, "uri": "true"})
    return readable.render_as_string(hide_password=False)


def postgresql_connect_args(url: URL, given: dict[str, Any]) -> dict[str, Any]:
    """psycopg's connection parameters for `url`: the connect timeout, the keepalives and the
    session limits above, unless the URL or the caller (`given`) sets them."""
    connect_args = dict(given)
    defaults: dict[str, Any] = {"connect_timeout": PG_CONNECT_TIMEOUT_S, **PG_KEEPALIVES}
    for name, value in defaults.items():
        if name not in url.query:
            connect_args.setdefault(name, value)
    ours = " ".join(f"-c {name}={value}" for name, value in PG_SESSION_LIMITS.items())
    theirs = connect_args.get("options") or url.query.get("options") or ""
    if isinstance(theirs, tuple):
        theirs = " ".join(theirs)
    connect_args["options"] = f"{ours} {theirs}".strip()
    return connect_args


def create_engine(url: str | URL, **kwargs) -> Engine:
    """An Engine for `url`, with the SQLite settings above; `kwargs` go to sa.create_engine."""
    url = make_url(url)
    if url.get_backend_name() != "sqlite":
        kwargs.setdefault("pool_pre_ping", True)
        if url.get_backend_name() == "postgresql":
            kwargs["connect_args"] = postgresql_connect_args(url, kwargs.pop("connect_args", {}))
        return sa.create_engine(url, **kwargs)

    connect_args = dict(kwargs.pop("connect_args", {}))
    connect_args.setdefault("timeout", SQLITE_BUSY_TIMEOUT_S)
    connect_args.setdefault("check_same_thread", False)
    if is_memory_sqlite(url):
        kwargs.setdefault("poolclass", StaticPool)
    engine = sa.create_engine(url, connect_args=connect_args, **kwargs)
    memory = is_memory_sqlite(url)
    read_only = is_read_only_sqlite(url)

    @sa.event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record):
        # No implicit transactions from pysqlite: SQLAlchemy's "begin" below starts them.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            if not memory and not read_only:
                cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA synchronous=FULL")
            cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_S * 1000}")
        finally:
            cursor.close()

    @sa.event.listens_for(engine, "begin")
    def _on_begin(connection):
        connection.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")

    return engine
