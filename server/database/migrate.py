"""Schema migrations, run from code: `upgrade(url)` at server start and by `tae-server upgrade-db`.

The Alembic environment and revisions live in `server/migrations/`; no alembic.ini is needed.
Every function takes a URL, an Engine or an open Connection. Given a URL or an Engine, the whole
upgrade runs in one transaction (SQLite and PostgreSQL both have transactional DDL), so a failed
upgrade leaves the database as it was.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import URL, Connection, Engine

from server.database.engine import create_engine

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"

Target = str | URL | Engine | Connection


def alembic_config(connection: Connection | None = None) -> Config:
    """An Alembic Config for our migrations, optionally bound to an open connection."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR).replace("%", "%%"))
    config.attributes["connection"] = connection
    return config


@contextlib.contextmanager
def _connection(target: Target) -> Iterator[Connection]:
    if isinstance(target, Connection):
        yield target
        return
    engine = target if isinstance(target, Engine) else create_engine(target)
    try:
        with engine.begin() as connection:
            yield connection
    finally:
        if engine is not target:
            engine.dispose()


def upgrade(target: Target, revision: str = "head") -> str | None:
    """Migrate the database to `revision` (the newest by default); returns the revision reached."""
    with _connection(target) as connection:
        command.upgrade(alembic_config(connection), revision)
        return MigrationContext.configure(connection).get_current_revision()


def current_revision(target: Target) -> str | None:
    """The database's revision; None for a database that was never migrated."""
    with _connection(target) as connection:
        return MigrationContext.configure(connection).get_current_revision()


def head_revision() -> str:
    """The newest revision this code knows."""
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    return head


def is_up_to_date(target: Target) -> bool:
    return current_revision(target) == head_revision()
