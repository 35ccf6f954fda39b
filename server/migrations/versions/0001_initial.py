"""The initial tables: games, accounts, join_messages, orders, removed_messages, turns.

Revision ID: 0001
Revises:
Create Date: 2025-01-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

NOW = sa.text("CURRENT_TIMESTAMP")


def _game_fk(table: str):
    return sa.ForeignKeyConstraint(["game_id"], ["games.id"], ondelete="CASCADE",
                                   name=f"fk_{table}_game_id_games")


def upgrade() -> None:
    op.create_table(
        "games",
        sa.Column("id", sa.Integer, autoincrement=True, nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("map_text", sa.Text, nullable=True),
        sa.Column("seed", sa.BigInteger, nullable=False),
        sa.Column("timer_kind", sa.String(32), nullable=False),
        sa.Column("turn_length", sa.Integer, nullable=False),
        sa.Column("turn_players_min", sa.Integer, nullable=False),
        sa.Column("turn_player_threshold", sa.Integer, nullable=False),
        sa.Column("turn_length_over_threshold", sa.Integer, nullable=False),
        sa.Column("turn_length_under_threshold", sa.Integer, nullable=False),
        sa.Column("max_players", sa.Integer, nullable=False),
        sa.Column("auto_add", sa.Boolean, nullable=False),
        sa.Column("account_creation", sa.Boolean, nullable=False),
        sa.Column("description", sa.Text, nullable=False),
        sa.Column("ctime", sa.BigInteger, nullable=False),
        sa.Column("last_turn", sa.Integer, nullable=False, server_default="0"),
        sa.Column("last_modtime_serial", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
        sa.PrimaryKeyConstraint("id", name="pk_games"),
        sa.UniqueConstraint("name", name="uq_games_name"),
    )
    op.create_table(
        "accounts",
        sa.Column("game_id", sa.Integer, nullable=False),
        sa.Column("player_id", sa.Integer, nullable=False),
        sa.Column("username", sa.String(64), nullable=False),
        sa.Column("password_hash", sa.Text, nullable=False),
        sa.Column("email", sa.Text, nullable=False),
        sa.Column("comment", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
        sa.PrimaryKeyConstraint("game_id", "player_id", name="pk_accounts"),
        sa.UniqueConstraint("game_id", "username", name="uq_accounts_game_id_username"),
        _game_fk("accounts"),
    )
    op.create_table(
        "join_messages",
        sa.Column("game_id", sa.Integer, nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("joined_player", sa.Integer, nullable=False),
        sa.Column("player", sa.Integer, nullable=False),
        sa.Column("turn", sa.Integer, nullable=False),
        sa.Column("subject", sa.Text, nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.PrimaryKeyConstraint("game_id", "seq", name="pk_join_messages"),
        _game_fk("join_messages"),
        sa.ForeignKeyConstraint(["game_id", "joined_player"],
                                ["accounts.game_id", "accounts.player_id"], ondelete="CASCADE",
                                name="fk_join_messages_game_id_accounts"),
    )
    op.create_table(
        "orders",
        sa.Column("game_id", sa.Integer, nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("turn", sa.Integer, nullable=False),
        sa.Column("player", sa.Integer, nullable=False),
        sa.Column("object_id", sa.Integer, nullable=False),
        sa.Column("slot", sa.Integer, nullable=False),
        sa.Column("type", sa.Integer, nullable=False),
        sa.Column("target", sa.Integer, nullable=False),
        sa.Column("removed", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
        sa.PrimaryKeyConstraint("game_id", "seq", name="pk_orders"),
        _game_fk("orders"),
    )
    op.create_table(
        "removed_messages",
        sa.Column("game_id", sa.Integer, nullable=False),
        sa.Column("player", sa.Integer, nullable=False),
        sa.Column("message_index", sa.Integer, nullable=False),
        sa.PrimaryKeyConstraint("game_id", "player", "message_index", name="pk_removed_messages"),
        _game_fk("removed_messages"),
    )
    op.create_table(
        "turns",
        sa.Column("game_id", sa.Integer, nullable=False),
        sa.Column("turn", sa.Integer, nullable=False),
        sa.Column("state", sa.JSON, nullable=False),
        sa.Column("messages", sa.JSON, nullable=False),
        sa.Column("events", sa.JSON, nullable=False),
        sa.Column("modtime_serial", sa.BigInteger, nullable=False),
        sa.Column("committed_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
        sa.PrimaryKeyConstraint("game_id", "turn", name="pk_turns"),
        _game_fk("turns"),
    )


def downgrade() -> None:
    for table in ("turns", "removed_messages", "orders", "join_messages", "accounts", "games"):
        op.drop_table(table)
