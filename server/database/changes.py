"""The change records of the games (revision 0006c), and one write of a game as one transaction.

* changes: one row per write of a game (`server.model.changes`): the game, the record's number in
  the game (`sequence`, from 1), its kind, what changed (JSON) and when (Unix seconds).

`thd_write` stores a `server.model.writes.GameWrite`: each of its steps by the query of the
step's type (`STEP_QUERIES`), then the change record, then its notifications (one outbox row per
channel, `server.database.notification_outbox.thd_enqueue`), all on the caller's transaction, so
that the rows, the record and the notifications are committed together or not at all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from server.database import games as q
from server.database.notification_outbox import thd_enqueue
from server.database.ratings import thd_rate_game
from server.database.schema import metadata
from server.model.changes import ChangeRecord, change_from, kind_of, payload_of
from server.model.writes import (
    GameWrite,
    MarkReinstated,
    MarkRemoved,
    RateGame,
    StoreAccount,
    StoreAttendance,
    StoreDeadline,
    StoreFinished,
    StoreNotices,
    StoreOrder,
    StoreOwner,
    StorePasswordHash,
    StorePause,
    StoreSetup,
    StoreTurn,
    TakeBackOrder,
    TakeDownMessage,
)

changes = sa.Table(
    "changes",
    metadata,
    sa.Column("game_id", sa.Integer, sa.ForeignKey("games.id", ondelete="CASCADE"), nullable=False),
    sa.Column("sequence", sa.Integer, nullable=False),
    sa.Column("kind", sa.String(32), nullable=False),
    sa.Column("payload", sa.JSON, nullable=False),
    sa.Column("time", sa.Float, nullable=False),
    sa.PrimaryKeyConstraint("game_id", "sequence"),
)

#: The query that stores each kind of step; the result of `StoreTurn`'s says whether the turn
#: was stored already (a retried commit whose first attempt committed).
STEP_QUERIES: dict[type, Callable[[Connection, int, Any], Any]] = {
    StoreAccount: lambda c, g, s: q.thd_add_account(c, g, s.account, s.messages),
    StoreOrder: lambda c, g, s: q.thd_record_order(c, g, s.entry),
    TakeBackOrder: lambda c, g, s: q.thd_remove_order(c, g, s.seq),
    TakeDownMessage: lambda c, g, s: q.thd_remove_message(c, g, s.player, s.index),
    StoreTurn: lambda c, g, s: q.thd_commit_turn(c, g, s.record),
    StoreFinished: lambda c, g, s: q.thd_record_finished(c, g, s.turn, s.player),
    StoreAttendance: lambda c, g, s: q.thd_record_attendance(c, g, s.rows, s.notices),
    MarkRemoved: lambda c, g, s: q.thd_remove_player(c, g, s.player),
    MarkReinstated: lambda c, g, s: q.thd_reinstate_player(c, g, s.player),
    StoreNotices: lambda c, g, s: q.thd_add_notices(c, g, s.messages),
    StorePause: lambda c, g, s: q.thd_set_pause(c, g, s.paused, s.left),
    StoreDeadline: lambda c, g, s: q.thd_set_deadline(c, g, s.turn, s.deadline),
    StoreSetup: lambda c, g, s: q.thd_update_setup(c, g, s.setup),
    StorePasswordHash: lambda c, g, s: q.thd_set_password_hash(c, g, s.player, s.password_hash),
    StoreOwner: lambda c, g, s: q.thd_set_owner(c, g, s.player, s.owner, s.password_hash),
    RateGame: lambda c, g, s: thd_rate_game(c, g, s.places, s.against_computer, s.ended_at),
}


def thd_write(conn: Connection, game_id: int, write: GameWrite) -> int:
    """Store one write of a game (see the module docstring); the change record's sequence.

    A turn stored already with the same content (the answer to a committed write was lost)
    stores nothing again: the sequence of the record stored with it is given back."""
    for step in write.steps:
        if STEP_QUERIES[type(step)](conn, game_id, step) is q.ALREADY_STORED:
            return _last_sequence(conn, game_id, kind_of(write.change))
    sequence = _last_sequence(conn, game_id) + 1
    conn.execute(
        changes.insert().values(
            game_id=game_id,
            sequence=sequence,
            kind=kind_of(write.change),
            payload=payload_of(write.change),
            time=write.time,
        )
    )
    thd_enqueue(conn, write.outbox, write.time)
    return sequence


def thd_find_write(conn: Connection, game_id: int, write: GameWrite) -> int | None:
    """The sequence of the change record `write` stored, or None when it is not stored. A
    record is the write's when it has its kind, its time (the writer's clock, to the
    microsecond) and its change: no two writes of one game share all three."""
    found = thd_find_changes(conn, game_id, kind_of(write.change), write.change.__eq__, time=write.time)
    return found[0].sequence if found else None


def thd_find_changes(
    conn: Connection,
    game_id: int,
    kind: str,
    matches: Callable[[Any], bool],
    *,
    time: float | None = None,
    after: int = 0,
) -> list[ChangeRecord]:
    """The game's change records of `kind` numbered above `after` (and written at `time`,
    when given) whose change `matches`, oldest first: how a write whose outcome is unknown is
    looked up, by its writer (`thd_find_write`) or by a node that relayed it
    (`server.cluster.write_outcome`)."""
    c = changes.c
    query = sa.select(c.sequence, c.kind, c.payload, c.time).where(
        c.game_id == game_id, c.kind == kind, c.sequence > after
    )
    if time is not None:
        query = query.where(c.time == time)
    found = []
    for row in conn.execute(query.order_by(c.sequence)):
        change = change_from(row.kind, row.payload)
        if matches(change):
            found.append(ChangeRecord(game_id, int(row.sequence), row.time, change))
    return found


def _last_sequence(conn: Connection, game_id: int, kind: str | None = None) -> int:
    query = sa.select(sa.func.max(changes.c.sequence)).where(changes.c.game_id == game_id)
    if kind is not None:
        query = query.where(changes.c.kind == kind)
    return int(conn.execute(query).scalar() or 0)


def thd_changes_after(
    conn: Connection, game_id: int, after: int = 0, limit: int = 1000
) -> list[ChangeRecord]:
    """The game's change records numbered above `after`, oldest first (at most `limit`)."""
    c = changes.c
    rows = conn.execute(
        sa.select(c.sequence, c.kind, c.payload, c.time)
        .where(c.game_id == game_id, c.sequence > after)
        .order_by(c.sequence)
        .limit(limit)
    )
    return [ChangeRecord(game_id, row.sequence, row.time, change_from(row.kind, row.payload)) for row in rows]


def thd_last_sequence(conn: Connection, game_id: int) -> int:
    """The number of the game's newest change record (0: none)."""
    return _last_sequence(conn, game_id)
