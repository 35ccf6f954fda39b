"""Durable storage of games: SQLAlchemy 2.0 Core, Alembic migrations, one database thread.

* `upgrade(url)` / `current_revision(url)` / `head_revision()`: the schema (server/migrations/).
* `DatabaseStore(url, reactor=None)`: the server's GameStore; methods return Deferreds fired
  after the commit; all database work runs on one thread. `close()` stops it.
* `SyncDatabase(url)`: the same methods run in the calling thread (CLI, tests, benchmarks).
* `server.database.games`: the `thd_*` query functions both run, one transaction each:
  they take a Connection and return plain data.

URLs: `sqlite:///tae.db` (the default; WAL, foreign keys on), `sqlite://` (in memory),
`postgresql+psycopg://user@host/db`.
"""

from server.database.engine import DEFAULT_URL, create_engine
from server.database.migrate import current_revision, head_revision, is_up_to_date, upgrade
from server.database.store import ConnectionStore, DatabaseStore, SyncDatabase, in_transaction
from server.database.threads import DatabaseThread, DatabaseThreadClosed, SynchronousDatabaseThread
from server.model.store import ConflictError, NotFoundError, StoreError, StoreUnavailable

__all__ = [
    "ConflictError",
    "ConnectionStore",
    "DEFAULT_URL",
    "DatabaseStore",
    "DatabaseThread",
    "DatabaseThreadClosed",
    "NotFoundError",
    "StoreError",
    "StoreUnavailable",
    "SyncDatabase",
    "SynchronousDatabaseThread",
    "create_engine",
    "current_revision",
    "head_revision",
    "in_transaction",
    "is_up_to_date",
    "upgrade",
]
