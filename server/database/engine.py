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
fail after `PG_CONNECT_TIMEOUT_S` rather than hang.
"""

from __future__ import annotations

import os
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.pool import StaticPool

DEFAULT_URL = "sqlite:///tae.db"
SQLITE_BUSY_TIMEOUT_S = 30
PG_CONNECT_TIMEOUT_S = 10


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


def create_engine(url: str | URL, **kwargs) -> Engine:
    """An Engine for `url`, with the SQLite settings above; `kwargs` go to sa.create_engine."""
    url = make_url(url)
    if url.get_backend_name() != "sqlite":
        kwargs.setdefault("pool_pre_ping", True)
        if url.get_backend_name() == "postgresql" and "connect_timeout" not in url.query:
            connect_args = dict(kwargs.pop("connect_args", {}))
            connect_args.setdefault("connect_timeout", PG_CONNECT_TIMEOUT_S)
            kwargs["connect_args"] = connect_args
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
