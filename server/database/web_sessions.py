"""Browser sessions that ended (a logout, a new login): remembered until they would have expired.

A session cookie is sealed with the web secret, so any node and any restart can read it; a
logout must therefore be stored to be final everywhere. `thd_revoke` records an ended session
id (with the time its cookie would expire, after which the row is deleted); every node's web
listener reads the ids at start and then those added since (`thd_revoked_since`), and refuses
them (`server.web.sessions.SessionStore`).
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from server.database.schema import metadata

#: Rows read at a time.
READ_AT_ONCE = 10_000

web_session_revocations = sa.Table(
    "web_session_revocations",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("session_id", sa.String(64), nullable=False, unique=True),
    sa.Column("until", sa.Float, nullable=False),
)


def thd_revoke(conn: Connection, session_id: str, until: float, now: float) -> None:
    """Remember that `session_id` ended (its cookie would be good until `until`); forget the
    ended sessions whose cookies expired."""
    t = web_session_revocations
    conn.execute(t.delete().where(t.c.until < now))
    exists = conn.execute(sa.select(t.c.id).where(t.c.session_id == session_id)).first()
    if exists is None:
        conn.execute(t.insert().values(session_id=session_id[:64], until=until))


def thd_revoked_since(conn: Connection, after: int, now: float) -> list[tuple[int, str]]:
    """(row id, session id) of the ended sessions recorded after row `after`, still unexpired."""
    t = web_session_revocations
    query = (
        sa.select(t.c.id, t.c.session_id)
        .where(t.c.id > after, t.c.until >= now)
        .order_by(t.c.id)
        .limit(READ_AT_ONCE)
    )
    return [(int(row.id), str(row.session_id)) for row in conn.execute(query)]
