"""The database store's components besides the games: one per table group, as buildbot's db/ has.

`DatabaseStore` (and `SyncDatabase`, `ConnectionStore`) keep the games themselves (the
`server.model.store.GameStore` interface the game service uses, which `MemoryStore` implements
too) and give the other table groups as components: `store.requests` (the operator request
queue), `store.lease` (a single server's lease), `store.notifications` (the players' channels
and the outbox), `store.web_sessions` (browser sessions that ended), `store.ratings` (the
ratings across games). Each method runs one
`thd_*` query in a transaction of its own through the
store (a Deferred from `DatabaseStore`, a plain value from `SyncDatabase`) and returns plain
data. A store kept in memory has none of them (its attributes are None).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from server.database import lease as lease_q
from server.database import notification_outbox as outbox_q
from server.database import operator_requests as requests_q
from server.database import ratings as ratings_q
from server.database import web_sessions as sessions_q


class Runner(Protocol):
    """What a component needs of its store: a transaction, and a fenced write of a game."""

    def _run(self, fn: Callable[..., Any], *args: Any) -> Any: ...

    def _write(self, fn: Callable[..., Any], game_id: int, *args: Any) -> Any: ...


class OperatorRequests:
    """The operator request queue (`server.database.operator_requests`)."""

    def __init__(self, store: Runner):
        self._store = store

    def queue(self, game_id: int, kind: str, payload: dict):
        return self._store._run(requests_q.thd_queue_request, game_id, kind, payload)

    def pending(self, after: int = 0, game_ids=None):
        """Pending requests, oldest first (only those of `game_ids`: a cluster node's games)."""
        return self._store._run(requests_q.thd_pending_requests, after, game_ids)

    def finish(self, request_id: int, status: str, result: str, game_id: int | None = None):
        """Write back a request's outcome; with `game_id`, as a write of that game (fenced)."""
        if game_id is None:
            return self._store._run(requests_q.thd_finish_request, request_id, status, result)
        return self._store._write(_finish_request, game_id, request_id, status, result)

    def get(self, request_id: int):
        """The request (`OperatorRequest`) or None."""
        return self._store._run(requests_q.thd_request, request_id)


def _finish_request(conn, game_id: int, request_id: int, status: str, result: str) -> None:
    requests_q.thd_finish_request(conn, request_id, status, result)


class ServerLease:
    """The lease of a single server on its database (`server.database.lease`)."""

    def __init__(self, store: Runner):
        self._store = store

    def take(self, host: str, pid: int, now: float):
        """None when taken; the live holder otherwise."""
        return self._store._run(lease_q.thd_take_lease, host, pid, now)

    def heartbeat(self, host: str, pid: int, now: float):
        return self._store._run(lease_q.thd_heartbeat, host, pid, now)

    def release(self, host: str, pid: int):
        return self._store._run(lease_q.thd_release_lease, host, pid)

    def holder(self, now: float):
        return self._store._run(lease_q.thd_lease_holder, now)


class NotificationOutbox:
    """The players' notification channels and the outbox (`server.database.notification_outbox`)."""

    def __init__(self, store: Runner):
        self._store = store

    def channels(self, game_id: int, player_id: int):
        """[ChannelRow] of the player, oldest first."""
        return self._store._run(outbox_q.thd_channels, game_id, player_id)

    def add_channel(self, game_id: int, player_id: int, kind: str, target: str, fmt: str, limit: int):
        """(the channel or None when the player has `limit` already, all their channels)."""
        return self._store._run(outbox_q.thd_add_channel, game_id, player_id, kind, target, fmt, limit)

    def remove_channels(self, game_id: int, player_id: int, channel_id: int | None = None):
        """How many channels were removed (one by id, or all of the player's)."""
        return self._store._run(outbox_q.thd_remove_channels, game_id, player_id, channel_id)

    def enqueue(self, entries, now: float):
        """How many outbox rows were added (a row already there is not added again)."""
        return self._store._run(outbox_q.thd_enqueue, tuple(entries), now)

    def enqueue_for_channel(self, channel_id: int, entry, now: float):
        return self._store._run(outbox_q.thd_enqueue_for_channel, channel_id, entry, now)

    def claim(self, worker: str, now: float, claim_seconds: float, limit: int):
        """[ClaimedDelivery]: due rows claimed for `worker`."""
        return self._store._run(outbox_q.thd_claim_due, worker, now, claim_seconds, limit)

    def record_outcomes(self, worker: str, outcomes, now: float):
        return self._store._run(outbox_q.thd_record_outcomes, worker, tuple(outcomes), now)

    def counts(self):
        return self._store._run(outbox_q.thd_outbox_counts)

    def next_due(self):
        return self._store._run(outbox_q.thd_next_due)


class WebSessionRevocations:
    """Browser sessions that ended before their cookie expires: a logout, a password change
    (`server.database.web_sessions`), shared by every node and kept across restarts."""

    def __init__(self, store: Runner):
        self._store = store

    def revoke(self, session_id: str, until: float, now: float):
        """Refuse the session from now until its cookie would have expired."""
        return self._store._run(sessions_q.thd_revoke, session_id, until, now)

    def revoked_since(self, after: int, now: float):
        """The revocations stored after revocation number `after`."""
        return self._store._run(sessions_q.thd_revoked_since, after, now)


class Ratings:
    """The ratings across games (`server.database.ratings`): the table, one account's record,
    and the rebuild from the finished games."""

    def __init__(self, store: Runner):
        self._store = store

    def table(self, limit: int = 500):
        """[RatedAccount], best shown rating first."""
        return self._store._run(ratings_q.thd_table, limit)

    def player(self, name: str):
        """The account's PlayerRecord, or None for no such account."""
        return self._store._run(ratings_q.thd_player, name)

    def rebuild(self):
        """Rate every finished game again, in the order they ended: (rated, against the computer)."""
        return self._store._run(ratings_q.thd_rebuild)
