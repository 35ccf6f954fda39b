"""Join messages keep their references: what "New Player" and "Welcome" name.

Revision ID: 0003m
Revises: 0003c
Create Date: 2026-12-01

* join_messages.mentions: the message's mentions as the state codec writes them
  (`[[kind, id], ...]`); NULL on rows stored before messages had references (they have none).
"""

import sqlalchemy as sa
from alembic import op

revision = "0003m"
down_revision = "0003c"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("join_messages") as batch:
        batch.add_column(sa.Column("mentions", sa.JSON, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("join_messages") as batch:
        batch.drop_column("mentions")
