"""Every PostgreSQL connection is set up so that a frozen or lost process cannot hold what it
holds for long: an idle transaction is ended, a lock is not waited for forever, TCP keepalives
notice a silent peer (server.database.engine)."""

from __future__ import annotations

import threading

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from server.database.engine import PG_SESSION_LIMITS, create_engine
from server.database.store import in_transaction
from server.model.store import StoreUnavailable


def _show(engine: sa.Engine, name: str) -> str:
    with engine.connect() as conn:
        return str(conn.exec_driver_sql(f"SHOW {name}").scalar_one())


def test_each_session_has_the_limits_and_keeps_the_urls_options(pg_url):
    engine = create_engine(pg_url)
    try:
        for name, value in PG_SESSION_LIMITS.items():
            assert _show(engine, name) == value
        schema = make_url(pg_url).query["options"].split("=", 1)[1]
        assert _show(engine, "search_path") == schema  # the URL's own options still apply
    finally:
        engine.dispose()


def test_options_in_the_url_win_and_a_held_lock_is_not_waited_for_forever(pg_url):
    url = make_url(pg_url)
    shorter = url.update_query_dict({"options": url.query["options"] + " -c lock_timeout=300"})
    engine = create_engine(shorter)
    holder = create_engine(pg_url)
    try:
        assert _show(engine, "lock_timeout") == "300ms"
        with holder.begin() as conn:
            conn.exec_driver_sql("CREATE TABLE held (id integer)")
        locked, release = threading.Event(), threading.Event()

        def hold() -> None:
            with holder.begin() as conn:
                conn.exec_driver_sql("LOCK TABLE held IN ACCESS EXCLUSIVE MODE")
                locked.set()
                release.wait(10)

        thread = threading.Thread(target=hold)
        thread.start()
        try:
            assert locked.wait(10)
            with pytest.raises(StoreUnavailable, match="lock timeout"):
                in_transaction(engine, lambda conn: conn.exec_driver_sql("SELECT * FROM held").all())
        finally:
            release.set()
            thread.join(10)
    finally:
        engine.dispose()
        holder.dispose()
