"""The players' notification channels and the durable notification outbox (revision 0004n).

* notification_channels: one row per channel a player of a game set up: a webhook (`target`
  its URL, `format` the body it wants: "json", "discord" or "slack") or an e-mail address
  (`target`; `format` "email"). Unique by (game, player, kind, target).
* notification_outbox: one row per event and channel that is to be delivered: the event's
  idempotency key and payload (JSON, what that player may see), the delivery attempts made,
  when the next is due, the node that claimed the row and until when, and when it was
  delivered or given up (with the last error). Unique by (idempotency key, channel): enqueuing
  an event twice (a restart that derives the current turn's events again) adds nothing.

Times are Unix seconds (floats) from the caller's clock, so tests drive them with a
`task.Clock`. Claiming a row (`thd_claim_due`) sets `claimed_by`/`claimed_until`; on
PostgreSQL the due rows are selected `FOR UPDATE SKIP LOCKED`, so two cluster nodes that claim
at the same moment never get the same row. A claim expires: the row of a node that died while
sending is sent again by another after `claimed_until` (with the same idempotency key).

Every `thd_*` function takes an open Connection inside a transaction (the caller commits) and
returns plain data.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from server.database.schema import NOW, metadata
from server.model.outbox_entry import OutboxEntry

WEBHOOK, EMAIL = "webhook", "email"
CHANNEL_KINDS = (WEBHOOK, EMAIL)

notification_channels = sa.Table(
    "notification_channels",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("game_id", sa.Integer, sa.ForeignKey("games.id", ondelete="CASCADE"), nullable=False),
    sa.Column("player_id", sa.Integer, nullable=False),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("target", sa.String(2048), nullable=False),
    sa.Column("format", sa.String(16), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
    sa.UniqueConstraint("game_id", "player_id", "kind", "target"),
)

notification_outbox = sa.Table(
    "notification_outbox",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column(
        "channel_id",
        sa.Integer,
        sa.ForeignKey("notification_channels.id", ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column("idempotency_key", sa.String(200), nullable=False),
    sa.Column("event", sa.String(32), nullable=False),
    sa.Column("payload", sa.JSON, nullable=False),
    sa.Column("created", sa.Float, nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
    sa.Column("next_attempt", sa.Float, nullable=False),
    sa.Column("claimed_by", sa.String(100), nullable=True),
    sa.Column("claimed_until", sa.Float, nullable=True),
    sa.Column("delivered", sa.Float, nullable=True),
    sa.Column("failed", sa.Float, nullable=True),
    sa.Column("last_error", sa.Text, nullable=True),
    sa.UniqueConstraint("idempotency_key", "channel_id"),
    sa.Index("ix_notification_outbox_pending", "delivered", "failed", "next_attempt"),
)


@dataclass(frozen=True, slots=True)
class ChannelRow:
    """A stored channel: `format` is "json" | "discord" | "slack" for a webhook, "email" else."""

    id: int
    game_id: int
    player_id: int
    kind: str
    target: str
    format: str


@dataclass(frozen=True, slots=True)
class ClaimedDelivery:
    """A claimed outbox row with its channel: what the delivery worker sends."""

    id: int
    key: str
    event: str
    payload: dict[str, Any]
    attempts: int
    kind: str
    target: str
    format: str


@dataclass(frozen=True, slots=True)
class DeliveryOutcome:
    """What one attempt came to: delivered (error None), or failed with `error`; `retry_at`
    None means the row is given up (failed for good)."""

    id: int
    error: str | None = None
    retry_at: float | None = None


def _channel(row) -> ChannelRow:
    return ChannelRow(row.id, row.game_id, row.player_id, row.kind, row.target, row.format)


# -- channels ---------------------------------------------------------------------------------


def thd_channels(conn: Connection, game_id: int, player_id: int) -> list[ChannelRow]:
    """The player's channels, oldest first."""
    c = notification_channels.c
    rows = conn.execute(
        sa.select(notification_channels).where(c.game_id == game_id, c.player_id == player_id).order_by(c.id)
    )
    return [_channel(row) for row in rows]


def thd_add_channel(
    conn: Connection, game_id: int, player_id: int, kind: str, target: str, fmt: str, limit: int
) -> tuple[ChannelRow | None, list[ChannelRow]]:
    """Add a channel, or change the format of the same one (same kind and target); refused
    (None) when the player already has `limit` channels. Returns (the channel, all of them)."""
    c = notification_channels.c
    existing = thd_channels(conn, game_id, player_id)
    same = next((ch for ch in existing if ch.kind == kind and ch.target == target), None)
    if same is not None:
        conn.execute(notification_channels.update().where(c.id == same.id).values(format=fmt))
    elif len(existing) >= limit:
        return None, existing
    else:
        conn.execute(
            notification_channels.insert().values(
                game_id=game_id, player_id=player_id, kind=kind, target=target, format=fmt
            )
        )
    channels = thd_channels(conn, game_id, player_id)
    return next(ch for ch in channels if ch.kind == kind and ch.target == target), channels


def thd_remove_channels(conn: Connection, game_id: int, player_id: int, channel_id: int | None = None) -> int:
    """Remove one channel of the player (by id), or all of them (None); how many went. Their
    undelivered outbox rows go with them."""
    c = notification_channels.c
    query = sa.select(c.id).where(c.game_id == game_id, c.player_id == player_id)
    if channel_id is not None:
        query = query.where(c.id == channel_id)
    ids = [row.id for row in conn.execute(query)]
    if not ids:
        return 0
    conn.execute(notification_outbox.delete().where(notification_outbox.c.channel_id.in_(ids)))
    conn.execute(notification_channels.delete().where(c.id.in_(ids)))
    return len(ids)


# -- the outbox -------------------------------------------------------------------------------


def _insert_ignoring_duplicates(conn: Connection, rows: list[dict[str, Any]]) -> int:
    if not rows:
        return 0
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        statement: Any = pg_insert(notification_outbox).on_conflict_do_nothing(
            index_elements=["idempotency_key", "channel_id"]
        )
    else:
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        statement = sqlite_insert(notification_outbox).on_conflict_do_nothing(
            index_elements=["idempotency_key", "channel_id"]
        )
    unique = list({(row["idempotency_key"], row["channel_id"]): row for row in rows}.values())
    result = conn.execute(statement.returning(notification_outbox.c.id), unique)
    return len(result.all())


def thd_enqueue(conn: Connection, entries: Sequence[OutboxEntry], now: float) -> int:
    """One outbox row for each entry and each channel of its player, due at the entry's
    `not_before` (at once when that has passed); rows already there (same key and channel)
    stay as they are. An entry that `replaces` an event still waiting to be sent to a channel
    takes its place there: the waiting row is closed as sent with this one, and this one tells
    what it told (`_merged`). Returns how many rows were added."""
    if not entries:
        return 0
    c = notification_channels.c
    recipients = {(e.game_id, e.player_id) for e in entries}
    channels: dict[tuple[int, int], list[int]] = {}
    for game_id in {g for g, _ in recipients}:
        players = sorted(p for g, p in recipients if g == game_id)
        query = sa.select(c.id, c.player_id).where(
            c.game_id == game_id,
            c.player_id.in_(players),
            c.format != "unconfirmed",  # an e-mail address its owner has not confirmed yet
        )
        for row in conn.execute(query):
            channels.setdefault((game_id, row.player_id), []).append(row.id)
    rows = []
    for entry in entries:
        for channel_id in channels.get((entry.game_id, entry.player_id), ()):
            payload = entry.payload
            if entry.replaces is not None:
                replaced = _take_waiting(conn, channel_id, entry.replaces, entry.key, now)
                if replaced is not None:
                    payload = _merged(payload, replaced)
            rows.append(
                {
                    "channel_id": channel_id,
                    "idempotency_key": entry.key,
                    "event": entry.event,
                    "payload": payload,
                    "created": now,
                    "attempts": 0,
                    "next_attempt": max(now, entry.not_before),
                }
            )
    return _insert_ignoring_duplicates(conn, rows)


def _take_waiting(conn: Connection, channel_id: int, key: str, by: str, now: float) -> dict[str, Any] | None:
    """The payload of the row of `key` for `channel_id` when it has not been tried yet (and
    nobody is sending it), closed as sent with the event `by`; None when there is none."""
    o = notification_outbox.c
    waiting = sa.and_(
        o.channel_id == channel_id,
        o.idempotency_key == key,
        o.delivered.is_(None),
        o.failed.is_(None),
        o.attempts == 0,
        sa.or_(o.claimed_until.is_(None), o.claimed_until < now),
    )
    row = conn.execute(
        notification_outbox.update()
        .where(waiting)
        .values(delivered=now, last_error=f"sent with {by}")
        .returning(o.payload)
    ).first()
    return None if row is None else dict(row.payload)


def _merged(payload: dict[str, Any], replaced: dict[str, Any]) -> dict[str, Any]:
    """`payload` telling also what the event it replaces told beyond it (the conflicts of a
    turn's start)."""
    extra = replaced.get("conflict_text")
    if not extra:
        return payload
    return {
        **payload,
        "text": f"{payload.get('text', '')} {extra}".strip(),
        "conflicts": replaced.get("conflicts", []),
    }


def thd_enqueue_for_channel(conn: Connection, channel_id: int, entry: OutboxEntry, now: float) -> int:
    """One outbox row for one channel (a player's test message); 0 when it is there already."""
    row = {
        "channel_id": channel_id,
        "idempotency_key": entry.key,
        "event": entry.event,
        "payload": entry.payload,
        "created": now,
        "attempts": 0,
        "next_attempt": now,
    }
    return _insert_ignoring_duplicates(conn, [row])


def _due(now: float):
    o = notification_outbox.c
    return sa.and_(
        o.delivered.is_(None),
        o.failed.is_(None),
        o.next_attempt <= now,
        sa.or_(o.claimed_until.is_(None), o.claimed_until < now),
    )


def thd_claim_due(
    conn: Connection, worker: str, now: float, claim_seconds: float, limit: int
) -> list[ClaimedDelivery]:
    """Claim up to `limit` due rows for `worker` until `now + claim_seconds`, oldest due first."""
    o = notification_outbox.c
    select_due = sa.select(o.id).where(_due(now)).order_by(o.next_attempt, o.id).limit(limit)
    if conn.dialect.name == "postgresql":
        select_due = select_due.with_for_update(skip_locked=True)
    ids = [row.id for row in conn.execute(select_due)]
    if not ids:
        return []
    conn.execute(
        notification_outbox.update()
        .where(o.id.in_(ids), _due(now))
        .values(claimed_by=worker, claimed_until=now + claim_seconds)
    )
    c = notification_channels.c
    rows = conn.execute(
        sa.select(o.id, o.idempotency_key, o.event, o.payload, o.attempts, c.kind, c.target, c.format)
        .join(notification_channels, c.id == o.channel_id)
        .where(o.id.in_(ids), o.claimed_by == worker)
        .order_by(o.next_attempt, o.id)
    )
    return [
        ClaimedDelivery(
            row.id,
            row.idempotency_key,
            row.event,
            dict(row.payload),
            row.attempts,
            row.kind,
            row.target,
            row.format,
        )
        for row in rows
    ]


def thd_record_outcomes(
    conn: Connection, worker: str, outcomes: Iterable[DeliveryOutcome], now: float
) -> None:
    """Write back what `worker`'s attempts came to (only rows it still holds the claim of)."""
    o = notification_outbox.c
    delivered = [out.id for out in outcomes if out.error is None]
    if delivered:
        conn.execute(
            notification_outbox.update()
            .where(o.id.in_(delivered), o.claimed_by == worker)
            .values(delivered=now, attempts=o.attempts + 1, claimed_by=None, claimed_until=None)
        )
    for outcome in outcomes:
        if outcome.error is None:
            continue
        values: dict[str, Any] = {
            "attempts": o.attempts + 1,
            "last_error": outcome.error[:2000],
            "claimed_by": None,
            "claimed_until": None,
        }
        if outcome.retry_at is None:
            values["failed"] = now
        else:
            values["next_attempt"] = outcome.retry_at
        conn.execute(
            notification_outbox.update().where(o.id == outcome.id, o.claimed_by == worker).values(**values)
        )


@dataclass(frozen=True, slots=True)
class OutboxCounts:
    pending: int
    delivered: int
    failed: int


def thd_outbox_counts(conn: Connection) -> OutboxCounts:
    """How many rows wait, were delivered, were given up (`tae-server` and tests)."""
    o = notification_outbox.c
    pending = conn.execute(
        sa.select(sa.func.count()).where(o.delivered.is_(None), o.failed.is_(None))
    ).scalar_one()
    delivered = conn.execute(sa.select(sa.func.count()).where(o.delivered.is_not(None))).scalar_one()
    failed = conn.execute(sa.select(sa.func.count()).where(o.failed.is_not(None))).scalar_one()
    return OutboxCounts(int(pending), int(delivered), int(failed))


def thd_next_due(conn: Connection) -> float | None:
    """When the earliest undelivered row is due (None: nothing waits)."""
    o = notification_outbox.c
    value = conn.execute(
        sa.select(sa.func.min(o.next_attempt)).where(o.delivered.is_(None), o.failed.is_(None))
    ).scalar()
    return None if value is None else float(value)
