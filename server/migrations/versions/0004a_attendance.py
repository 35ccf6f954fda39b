"""Absent players: who plays each seat, and the game settings for it.

Revision ID: 0004a
Revises: 0003m
Create Date: 2026-12-01

* attendance: one row per player whose seat is not plainly theirs (absent, on vacation,
  resigned) or who missed turns in a row: presence, the turns missed in a row, the end of a
  vacation (Unix time).
* games.absent_after_missed_turns (default 2, 0 = never) and games.vacation_days_max (default
  14, 0 = no vacations): the settings of `server.model.attendance`; games stored before keep the
  defaults.
* The notices about seats (a player absent, on vacation, back, resigned) are board messages
  posted between turns: they are stored in join_messages, whose `joined_player` is then the
  player the notice is about, in one posting order with the join messages.
"""

import sqlalchemy as sa
from alembic import op

revision = "0004a"
down_revision = "0003m"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ALTER TABLE, never a batch copy: other tables reference games (see 0002).
    op.add_column(
        "games", sa.Column("absent_after_missed_turns", sa.Integer, nullable=False, server_default="2")
    )
    op.add_column("games", sa.Column("vacation_days_max", sa.Integer, nullable=False, server_default="14"))
    op.create_table(
        "attendance",
        sa.Column("game_id", sa.Integer, nullable=False),
        sa.Column("player_id", sa.Integer, nullable=False),
        sa.Column("presence", sa.String(16), nullable=False),
        sa.Column("missed", sa.Integer, nullable=False, server_default="0"),
        sa.Column("until", sa.Float, nullable=True),
        sa.PrimaryKeyConstraint("game_id", "player_id", name="pk_attendance"),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], ondelete="CASCADE", name="fk_attendance_game_id_games"
        ),
        sa.ForeignKeyConstraint(
            ["game_id", "player_id"],
            ["accounts.game_id", "accounts.player_id"],
            ondelete="CASCADE",
            name="fk_attendance_game_id_accounts",
        ),
    )


def downgrade() -> None:
    op.drop_table("attendance")
    # ALTER TABLE ... DROP COLUMN (SQLite 3.35+), for the reason given in upgrade().
    for column in ("vacation_days_max", "absent_after_missed_turns"):
        op.execute(sa.text(f"ALTER TABLE games DROP COLUMN {column}"))
