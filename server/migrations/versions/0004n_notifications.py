"""Notifications: the players' channels and the durable outbox of their notifications.

Revision ID: 0004n
Revises: 0004w
Create Date: 2026-12-01

* notification_channels: a player's webhook (URL and body format) or e-mail address.
* notification_outbox: one row per event and channel, unique by (idempotency key, channel):
  attempts, when the next is due, the claim of the node sending it, delivered / failed times
  and the last error (`server.database.notification_outbox`).
"""

import sqlalchemy as sa
from alembic import op

revision = "0004n"
down_revision = "0004t"
branch_labels = None
depends_on = None

NOW = sa.text("CURRENT_TIMESTAMP")


def upgrade() -> None:
    op.create_table(
        "notification_channels",
        sa.Column("id", sa.Integer, autoincrement=True, nullable=False),
        sa.Column("game_id", sa.Integer, nullable=False),
        sa.Column("player_id", sa.Integer, nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("target", sa.String(2048), nullable=False),
        sa.Column("format", sa.String(16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
        sa.PrimaryKeyConstraint("id", name="pk_notification_channels"),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], ondelete="CASCADE", name="fk_notification_channels_game_id_games"
        ),
        sa.UniqueConstraint(
            "game_id",
            "player_id",
            "kind",
            "target",
            name="uq_notification_channels_game_id_player_id_kind_target",
        ),
    )
    op.create_table(
        "notification_outbox",
        sa.Column("id", sa.Integer, autoincrement=True, nullable=False),
        sa.Column("channel_id", sa.Integer, nullable=False),
        sa.Column("idempotency_key", sa.String(200), nullable=False),
        sa.Column("event", sa.String(32), nullable=False),
        sa.Column("payload", sa.JSON, nullable=False),
        sa.Column("created", sa.Float, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("next_attempt", sa.Float, nullable=False),
        sa.Column("claimed_by", sa.String(100), nullable=True),
        sa.Column("claimed_until", sa.Float, nullable=True),
        sa.Column("delivered", sa.Float, nullable=True),
        sa.Column("failed", sa.Float, nullable=True),
        sa.Column("last_error", sa.Text, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_notification_outbox"),
        sa.ForeignKeyConstraint(
            ["channel_id"],
            ["notification_channels.id"],
            ondelete="CASCADE",
            name="fk_notification_outbox_channel_id_notification_channels",
        ),
        sa.UniqueConstraint(
            "idempotency_key", "channel_id", name="uq_notification_outbox_idempotency_key_channel_id"
        ),
    )
    op.create_index(
        "ix_notification_outbox_pending", "notification_outbox", ["delivered", "failed", "next_attempt"]
    )


def downgrade() -> None:
    op.drop_index("ix_notification_outbox_pending", table_name="notification_outbox")
    op.drop_table("notification_outbox")
    op.drop_table("notification_channels")
