"""Where each cluster node's web listener is, for the other nodes' web listeners.

A node writes the address of its web listener (HOST:PORT, as the other nodes reach it) once it
listens (`thd_set_web_address`); a node's web listener relays the pages and API calls of a game
run elsewhere to the address of the game's owner (`thd_web_addresses`, `server.web.relay`).
The address is NULL for a node without a web listener. Both run on the database thread in a
transaction, like every `thd_*` function.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from server.database.ownership import cluster_nodes


def thd_set_web_address(conn: Connection, node: str, address: str | None) -> None:
    conn.execute(cluster_nodes.update().where(cluster_nodes.c.name == node).values(web_address=address))


def thd_web_addresses(conn: Connection) -> dict[str, str]:
    """Node name → web address, for every node that has a web listener."""
    rows = conn.execute(
        sa.select(cluster_nodes.c.name, cluster_nodes.c.web_address).where(
            cluster_nodes.c.web_address.is_not(None)
        )
    )
    return {str(row.name): str(row.web_address) for row in rows}
