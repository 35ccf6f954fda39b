"""The change records: one row per write of a game, stored in the write's transaction.

Revision ID: 0006c
Revises: 0005s
Create Date: 2026-12-04

* changes: the game, the record's number in the game (from 1), its kind (order_given,
  turn_ended, deadline_changed …, `server.model.changes`), what changed (JSON) and when (Unix
  seconds). Readers (notifications, the deadline, cluster nodes) follow these records.
"""

import sqlalchemy as sa
from alembic import op

revision = "0006c"
down_revision = "0005s"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "changes",
        sa.Column(
            "game_id",
            sa.Integer,
            sa.ForeignKey("games.id", name="fk_changes_game_id_games", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("sequence", sa.Integer, nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("payload", sa.JSON, nullable=False),
        sa.Column("time", sa.Float, nullable=False),
        sa.PrimaryKeyConstraint("game_id", "sequence", name="pk_changes"),
    )


def downgrade() -> None:
    op.drop_table("changes")
