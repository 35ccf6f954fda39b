"""Cluster nodes say where their web listener is: other nodes relay web requests there.

Revision ID: 0004w
Revises: 0003m
Create Date: 2026-12-01

* cluster_nodes.web_address: HOST:PORT of the node's web listener as the other nodes reach it
  (`[cluster] web_advertise`, or the advertised host with the web listener's port); NULL for a
  node without a web listener.
"""

import sqlalchemy as sa
from alembic import op

revision = "0004w"
down_revision = "0004a"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("cluster_nodes") as batch:
        batch.add_column(sa.Column("web_address", sa.String(255), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("cluster_nodes") as batch:
        batch.drop_column("web_address")
