"""Ratings across games: ratings (one row per account that played a rated game) and game_results
(one row per seat of a finished game).

Revision ID: 0008r
Revises: 0007a
Create Date: 2026-12-04

Games that ended before this revision are not rated by the upgrade: `tae-server ratings
--rebuild` rates every finished game, in the order they ended (docs/web.md, "Ratings").
"""

import sqlalchemy as sa
from alembic import op

revision = "0008r"
down_revision = "0007a"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ratings",
        sa.Column("user_id", sa.Integer, nullable=False),
        sa.Column("mu", sa.Float, nullable=False),
        sa.Column("sigma", sa.Float, nullable=False),
        sa.Column("games", sa.Integer, nullable=False),
        sa.PrimaryKeyConstraint("user_id", name="pk_ratings"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name="fk_ratings_user_id_users", ondelete="CASCADE"),
    )
    op.create_table(
        "game_results",
        sa.Column("game_id", sa.Integer, nullable=False),
        sa.Column("player_id", sa.Integer, nullable=False),
        sa.Column("rank", sa.Integer, nullable=False),
        sa.Column("of", sa.Integer, nullable=False),
        sa.Column("shared", sa.Boolean, nullable=False),
        sa.Column("computer", sa.Boolean, nullable=False),
        sa.Column("mu", sa.Float, nullable=True),
        sa.Column("sigma", sa.Float, nullable=True),
        sa.Column("change", sa.Float, nullable=True),
        sa.Column("ended_at", sa.Float, nullable=False),
        sa.PrimaryKeyConstraint("game_id", "player_id", name="pk_game_results"),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], name="fk_game_results_game_id_games", ondelete="CASCADE"),
    )
    op.create_index("ix_game_results_ended_at", "game_results", ["ended_at"])


def downgrade() -> None:
    op.drop_index("ix_game_results_ended_at", table_name="game_results")
    op.drop_table("game_results")
    op.drop_table("ratings")
