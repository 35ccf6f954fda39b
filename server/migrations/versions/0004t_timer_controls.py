"""Timer controls: the calendar timer's settings, a paused clock, operators' notices.

Revision ID: 0004t
Revises: 0003m
Create Date: 2026-12-01

* games.timer_schedule / games.time_zone / games.finish_early: the calendar timer
  (server.model.calendar_schedule); the defaults leave every other timer as it was.
* games.paused / games.paused_left: an operator paused the game's clock; the seconds its
  deadline had left then (NULL: the turn had no deadline).
* notices: board messages an operator's change posted (pause, resume, extend, set, reinstate),
  in posting order; `joins_before` is how many join messages the game had then, so that a
  restart puts every board back in the order it was posted.
"""

import sqlalchemy as sa
from alembic import op

revision = "0004t"
down_revision = "0004w"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ALTER TABLE, never a batch copy (see 0002: a copy of `games` would cascade).
    op.add_column("games", sa.Column("timer_schedule", sa.Text, nullable=False, server_default=""))
    op.add_column("games", sa.Column("time_zone", sa.String(64), nullable=False, server_default="UTC"))
    op.add_column("games", sa.Column("finish_early", sa.Boolean, nullable=False, server_default=sa.true()))
    op.add_column("games", sa.Column("paused", sa.Boolean, nullable=False, server_default=sa.false()))
    op.add_column("games", sa.Column("paused_left", sa.Float, nullable=True))
    op.create_table(
        "notices",
        sa.Column("game_id", sa.Integer, nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("joins_before", sa.Integer, nullable=False),
        sa.Column("player", sa.Integer, nullable=False),
        sa.Column("turn", sa.Integer, nullable=False),
        sa.Column("subject", sa.Text, nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.PrimaryKeyConstraint("game_id", "seq", name="pk_notices"),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], ondelete="CASCADE", name="fk_notices_game_id_games"
        ),
    )


def downgrade() -> None:
    op.drop_table("notices")
    for column in ("paused_left", "paused", "finish_early", "time_zone", "timer_schedule"):
        with op.batch_alter_table("games") as batch:
            batch.drop_column(column)
