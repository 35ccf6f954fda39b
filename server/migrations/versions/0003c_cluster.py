"""Cluster: the nodes that share a PostgreSQL database, and which node runs which game.

Revision ID: 0003c
Revises: 0002
Create Date: 2025-03-01

* cluster: one row: `lock_space`, the first key of every advisory lock this database's nodes
  take, random per database, so that two databases (or schemas) on one PostgreSQL server never
  share a lock.
* cluster_nodes: one row per node name: its advertised TP address, process, the backend pid of
  its claim connection, its state and heartbeat.
* game_claims: one row per game: the node that runs it (NULL: nobody, the game waits for a node)
  and the claim epoch, raised by every change of owner; every write of the game checks it.
"""

import secrets

import sqlalchemy as sa
from alembic import op

revision = "0003c"
down_revision = "0002"
branch_labels = None
depends_on = None

NOW = sa.text("CURRENT_TIMESTAMP")


def upgrade() -> None:
    cluster = op.create_table(
        "cluster",
        sa.Column("id", sa.Integer, autoincrement=False, nullable=False),
        sa.Column("lock_space", sa.Integer, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_cluster"),
    )
    op.bulk_insert(cluster, [{"id": 1, "lock_space": 1 + secrets.randbelow(2**31 - 2)}])
    op.create_table(
        "cluster_nodes",
        sa.Column("id", sa.Integer, autoincrement=True, nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("advertise", sa.String(255), nullable=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("pid", sa.Integer, nullable=False),
        sa.Column("backend_pid", sa.Integer, nullable=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
        sa.PrimaryKeyConstraint("id", name="pk_cluster_nodes"),
        sa.UniqueConstraint("name", name="uq_cluster_nodes_name"),
    )
    op.create_table(
        "game_claims",
        sa.Column("game_id", sa.Integer, autoincrement=False, nullable=False),
        sa.Column("node_id", sa.Integer, nullable=True),
        sa.Column("epoch", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("game_id", name="pk_game_claims"),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], ondelete="CASCADE", name="fk_game_claims_game_id_games"
        ),
        sa.ForeignKeyConstraint(
            ["node_id"],
            ["cluster_nodes.id"],
            ondelete="SET NULL",
            name="fk_game_claims_node_id_cluster_nodes",
        ),
    )
    op.create_index("ix_game_claims_node_id", "game_claims", ["node_id"])
    op.execute(sa.text("INSERT INTO game_claims (game_id, epoch) SELECT id, 0 FROM games"))


def downgrade() -> None:
    op.drop_index("ix_game_claims_node_id", table_name="game_claims")
    op.drop_table("game_claims")
    op.drop_table("cluster_nodes")
    op.drop_table("cluster")
