"""Fixtures of the server suite."""

from __future__ import annotations

import pytest

from server.database import DatabaseStore, SynchronousDatabaseThread, upgrade


@pytest.fixture
def store(database_url):
    """A `DatabaseStore` on an upgraded database (SQLite, and PostgreSQL when configured) whose
    work runs in the test's thread. A module may define a `store` of its own instead."""
    upgrade(database_url)
    store = DatabaseStore(database_url, thread=SynchronousDatabaseThread())
    yield store
    store.engine.dispose()
