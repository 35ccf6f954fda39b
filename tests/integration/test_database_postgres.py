"""server.database against a real PostgreSQL: the checks of tests/server/test_database.py.

Runs when TAE_TEST_DATABASE_URL names a PostgreSQL database (CI:
postgresql+psycopg://postgres@127.0.0.1:5432/test). Each test gets a schema of its own,
`tae_test_<random>`, reached through psycopg's `options=-csearch_path=...`, dropped afterwards.
"""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from server.database import create_engine
from tests.server import test_database as checks

pytestmark = [pytest.mark.postgres, pytest.mark.timeout(120)]


@pytest.fixture
def fresh_pg_url(pg_url):
    checks.upgrade(pg_url)
    return pg_url


def test_the_schema_is_private_to_the_test(pg_url):
    engine = create_engine(pg_url)
    try:
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT current_schema()")).scalar().startswith("tae_test_")
    finally:
        engine.dispose()


def test_migrations_from_empty(pg_url):
    checks.check_migrations_from_empty(pg_url)


def test_the_change_records_revision_goes_down_and_up(pg_url):
    checks.check_the_change_records_revision_goes_down_and_up(pg_url)


def test_every_record_round_trips(fresh_pg_url):
    checks.check_every_record_round_trips(fresh_pg_url)


def test_game_restores_from_the_database(fresh_pg_url):
    checks.check_game_restores_from_the_database(fresh_pg_url)


def test_failed_commit_leaves_nothing(fresh_pg_url):
    checks.check_failed_commit_leaves_nothing(fresh_pg_url)


def test_the_game_keeps_its_state_when_a_commit_fails_and_retries(fresh_pg_url):
    checks.check_the_game_keeps_its_state_when_a_commit_fails_and_retries(fresh_pg_url)


def test_conflicts_and_missing_records(fresh_pg_url):
    checks.check_conflicts_and_missing_records(fresh_pg_url)


def test_one_database_thread_and_results_after_commit(pg_url):
    checks.check_one_database_thread_and_results_after_commit(pg_url)
