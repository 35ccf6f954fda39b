"""Operations: player removal and join turns, turn deadlines, finished players, operator
requests and the server lease.

Revision ID: 0002
Revises: 0001
Create Date: 2025-02-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

NOW = sa.text("CURRENT_TIMESTAMP")


def _game_fk(table: str):
    return sa.ForeignKeyConstraint(["game_id"], ["games.id"], ondelete="CASCADE",
                                   name=f"fk_{table}_game_id_games")


def upgrade() -> None:
    # Plain ALTER TABLE, never a batch copy: on SQLite a copy drops the old table, and with
    # foreign keys on that deletes the join messages that reference accounts.
    op.add_column("accounts", sa.Column("joined_turn", sa.Integer, nullable=False, server_default="0"))
    op.add_column("accounts", sa.Column("removed", sa.Boolean, nullable=False, server_default=sa.false()))
    # A player's Welcome message is the first message addressed to them, posted at the turn
    # they joined (ruleset.add_player): that is their join turn.
    op.execute(sa.text(
        "UPDATE accounts SET joined_turn = COALESCE(("
        " SELECT MIN(j.turn) FROM join_messages j"
        " WHERE j.game_id = accounts.game_id AND j.joined_player = accounts.player_id"
        " AND j.player = accounts.player_id), 0)"))
    op.add_column("games", sa.Column("deadline_turn", sa.Integer, nullable=True))
    op.add_column("games", sa.Column("deadline", sa.Float, nullable=True))
    op.create_table(
        "finished_turns",
        sa.Column("game_id", sa.Integer, nullable=False),
        sa.Column("turn", sa.Integer, nullable=False),
        sa.Column("player", sa.Integer, nullable=False),
        sa.PrimaryKeyConstraint("game_id", "turn", "player", name="pk_finished_turns"),
        _game_fk("finished_turns"),
    )
    op.create_table(
        "operator_requests",
        sa.Column("id", sa.Integer, autoincrement=True, nullable=False),
        sa.Column("game_id", sa.Integer, nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("payload", sa.JSON, nullable=False),
        sa.Column("status", sa.String(16), nullable=False, server_default="pending"),
        sa.Column("result", sa.Text, nullable=False, server_default=""),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
        sa.Column("done_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_operator_requests"),
        _game_fk("operator_requests"),
    )
    op.create_index("ix_operator_requests_status_id", "operator_requests", ["status", "id"])
    lease = op.create_table(
        "server_lease",
        sa.Column("id", sa.Integer, autoincrement=False, nullable=False),
        sa.Column("host", sa.String(255), nullable=True),
        sa.Column("pid", sa.Integer, nullable=True),
        sa.Column("started_at", sa.Float, nullable=True),
        sa.Column("heartbeat_at", sa.Float, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_server_lease"),
    )
    op.bulk_insert(lease, [{"id": 1}])  # the one row that servers and the CLI lock


def downgrade() -> None:
    op.drop_table("server_lease")
    op.drop_index("ix_operator_requests_status_id", table_name="operator_requests")
    op.drop_table("operator_requests")
    op.drop_table("finished_turns")
    # ALTER TABLE ... DROP COLUMN (SQLite 3.35+), for the reason given in upgrade().
    for table, column in (("games", "deadline"), ("games", "deadline_turn"),
                          ("accounts", "removed"), ("accounts", "joined_turn")):
        op.execute(sa.text(f"ALTER TABLE {table} DROP COLUMN {column}"))
