"""Alembic environment for the game database.

`server.database.migrate` hands over an open Connection in `config.attributes["connection"]`
(inside a transaction that it commits); run from the alembic command line, the URL comes from
`sqlalchemy.url` of the ini file, or from TAE_DATABASE_URL when that is set.
"""

import os

from alembic import context

from server.database.engine import create_engine
from server.database.schema import metadata

config = context.config


def run_offline() -> None:
    url = os.environ.get("TAE_DATABASE_URL") or config.get_main_option("sqlalchemy.url")
    context.configure(url=url, target_metadata=metadata, literal_binds=True, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


def run_with(connection) -> None:
    context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        run_with(connection)
        return
    url = os.environ.get("TAE_DATABASE_URL") or config.get_main_option("sqlalchemy.url")
    if not url:
        raise SystemExit("no database: set TAE_DATABASE_URL or sqlalchemy.url")
    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            run_with(connection)
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
