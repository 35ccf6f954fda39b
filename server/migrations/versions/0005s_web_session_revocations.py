"""Browser sessions that ended, so that a logout is final across restarts and nodes.

Revision ID: 0005s
Revises: 0004n
Create Date: 2026-12-02

* web_session_revocations: the id of a browser session that ended (a logout, a new login) and
  the time its cookie would have expired (the row is deleted after it).
"""

import sqlalchemy as sa
from alembic import op

revision = "0005s"
down_revision = "0004n"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "web_session_revocations",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("session_id", sa.String(64), nullable=False, unique=True),
        sa.Column("until", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("web_session_revocations")
