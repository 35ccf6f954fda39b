"""Fixtures shared by every suite: databases (SQLite files, PostgreSQL schemas) and new games."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator

import pytest
from sqlalchemy import create_engine
from sqlalchemy.engine import make_url

PG_URL = os.environ.get("TAE_TEST_DATABASE_URL")
PG_SKIP_REASON = (
    "TAE_TEST_DATABASE_URL is not set to a PostgreSQL URL (e.g. "
    "postgresql+psycopg://postgres@127.0.0.1:5432/test)"
)


def postgres_available() -> bool:
    return bool(PG_URL) and make_url(PG_URL).get_backend_name() == "postgresql"


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A PostgreSQL URL whose search path is a schema of this test's own, dropped afterwards."""
    if not postgres_available():
        pytest.skip(PG_SKIP_REASON)
    base = make_url(PG_URL)
    schema = f"tae_test_{secrets.token_hex(6)}"
    admin = create_engine(base)
    with admin.begin() as conn:
        conn.exec_driver_sql(f'CREATE SCHEMA "{schema}"')
    try:
        yield base.update_query_dict({"options": f"-csearch_path={schema}"}).render_as_string(
            hide_password=False
        )
    finally:
        with admin.begin() as conn:
            conn.exec_driver_sql(f'DROP SCHEMA "{schema}" CASCADE')
        admin.dispose()


@pytest.fixture
def sqlite_url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'tae.db'}"


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request, tmp_path) -> str:
    """An empty database: a SQLite file, or a schema of its own on PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'tae.db'}"
    return request.getfixturevalue("pg_url")


@pytest.fixture
def new_game():
    """`new_game(**setup)` → (MemoryStore, Game): see `tests.support.games.new_game`."""
    from tests.support.games import new_game

    return new_game
