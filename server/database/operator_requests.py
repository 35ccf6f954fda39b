"""The operator request queue: how `tae-server` asks a running server to do something.

The CLI adds a row (`thd_queue_request`), the server polls the pending ones
(`thd_pending_requests`), carries each out and writes back its status and a one-line result
(`thd_finish_request`); the CLI reads it back (`thd_request`). Requests are idempotent by
content (an end of turn names the turn it ends), so one that was carried out but not marked
done before a crash is harmless when the restarted server sees it again.
Every `thd_*` function runs on the database thread (or the CLI's thread) in a transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from .schema import operator_requests

PENDING, DONE, FAILED = "pending", "done", "failed"
KINDS = ("load_game", "end_turn", "add_player", "remove_player", "set_password")


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
    return int(result.inserted_primary_key[0])


def thd_pending_requests(conn: Connection, after: int = 0) -> list[OperatorRequest]:
    """The pending requests with an id above `after`, oldest first."""
    rows = conn.execute(
        sa.select(operator_requests)
        .where(operator_requests.c.status == PENDING, operator_requests.c.id > after)
        .order_by(operator_requests.c.id)
    )
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
