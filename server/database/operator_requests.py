"""The operator request queue: how `tae-server` asks a running server to do something.

The CLI adds a row (`thd_queue_request`), the server polls the pending ones
(`thd_pending_requests`), carries each out and writes back its status and a one-line result
(`thd_finish_request`); the CLI reads it back (`thd_request`). Requests are idempotent by
content (an end of turn names the turn it ends), so one that was carried out but not marked
done before a crash is harmless when the restarted server sees it again.
Every `thd_*` function runs on the database thread (or the CLI's thread) in a transaction.

With cluster nodes (`server.cluster`), the node that runs a game carries out its requests (it
asks for those of its games only, and writes the result back fenced, as a write of the game);
on PostgreSQL a queued request wakes the nodes at once (NOTIFY on the cluster channel) instead
of waiting for their next poll. `move_game` hands a game to another node.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from server.database.schema import operator_requests

PENDING, DONE, FAILED = "pending", "done", "failed"
KINDS = (
    "load_game",
    "end_turn",
    "add_player",
    "add_computer",
    "remove_player",
    "move_game",
    "set_password",
    "join_accounts",
    # the clock and the settings (server.operating.commands: pause, resume, extend, set, reinstate)
    "pause",
    "resume",
    "extend",
    "set",
    "reinstate",
)


@dataclass(frozen=True, slots=True)
class OperatorRequest:
    id: int
    game_id: int
    kind: str
    payload: dict[str, Any]
    status: str = PENDING
    result: str = ""


def _request(row) -> OperatorRequest:
    return OperatorRequest(row.id, row.game_id, row.kind, dict(row.payload), row.status, row.result)


def thd_queue_request(conn: Connection, game_id: int, kind: str, payload: dict[str, Any]) -> int:
    """Add a pending request; its id."""
    if kind not in KINDS:
        raise ValueError(f"unknown operator request {kind!r}")
    result = conn.execute(
        operator_requests.insert().values(
            game_id=game_id, kind=kind, payload=payload, status=PENDING, result=""
        )
    )
    key = result.inserted_primary_key
    assert key is not None, "an INSERT has a primary key"
    request_id = int(key[0])
    if conn.dialect.name == "postgresql":
        from server.database.ownership import thd_lock_space, thd_notify

        thd_notify(conn, thd_lock_space(conn), {"k": "request", "g": game_id})
    return request_id


def thd_pending_requests(
    conn: Connection, after: int = 0, game_ids: Iterable[int] | None = None
) -> list[OperatorRequest]:
    """The pending requests with an id above `after` (of the games `game_ids` only, when
    given), oldest first."""
    query = sa.select(operator_requests).where(
        operator_requests.c.status == PENDING, operator_requests.c.id > after
    )
    if game_ids is not None:
        wanted = sorted(set(game_ids))
        if not wanted:
            return []
        query = query.where(operator_requests.c.game_id.in_(wanted))
    rows = conn.execute(query.order_by(operator_requests.c.id))
    return [_request(row) for row in rows]


def thd_finish_request(conn: Connection, request_id: int, status: str, result: str) -> None:
    conn.execute(
        operator_requests.update()
        .where(operator_requests.c.id == request_id)
        .values(status=status, result=result[:2000], done_at=sa.func.current_timestamp())
    )


def thd_request(conn: Connection, request_id: int) -> OperatorRequest | None:
    row = conn.execute(sa.select(operator_requests).where(operator_requests.c.id == request_id)).first()
    return None if row is None else _request(row)
