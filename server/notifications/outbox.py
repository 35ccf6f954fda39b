"""Handing the reminders to the durable outbox without holding anything up.

The notifications a change causes are stored with the change, in its transaction
(`server.notifications.rules`, `server.game.records`). What is not a change of a game goes
through this `Outbox`: a turn's reminder, when its time comes (`server.notifications.follower`).
`Outbox.add(entries)` only appends to a list; the list is written `batch_delay` seconds later
(50 ms: the reminders of many games that come due together share one write), on the database
thread, in one transaction (`thd_enqueue`: one row per entry and channel, a row already there is
left alone). A write that fails (the database is away) is tried again every `retry` seconds with
everything that came meanwhile; the idempotency keys make sure that nothing is queued twice.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from twisted.internet import defer
from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.logger import Logger

from server.model.outbox_entry import OutboxEntry

log = Logger()

RETRY_S = 5.0
BATCH_DELAY_S = 0.05


class Outbox:
    def __init__(
        self,
        store,
        clock: IReactorTime,
        *,
        on_stored: Callable[[int], None] | None = None,
        retry: float = RETRY_S,
        batch_delay: float = BATCH_DELAY_S,
    ):
        self.store = store
        self.clock = clock
        self.on_stored = on_stored
        self.retry = retry
        self.batch_delay = batch_delay
        self._pending: list[OutboxEntry] = []
        self._call: IDelayedCall | None = None
        self._writing: defer.Deferred | None = None
        self._trouble = False
        self.enqueued = 0  # rows added by this process (tests, benchmarks)

    def add(self, entries: Iterable[OutboxEntry]) -> None:
        """Queue entries for the next write (at once: the next reactor turn)."""
        before = len(self._pending)
        self._pending.extend(entries)
        if len(self._pending) > before:
            self._schedule(self.batch_delay)

    def _schedule(self, delay: float) -> None:
        if self._call is None and self._writing is None:
            self._call = self.clock.callLater(delay, self._write)

    def _write(self) -> None:
        self._call = None
        batch, self._pending = self._pending, []
        if not batch:
            return
        d = defer.maybeDeferred(self.store.notifications.enqueue, batch, self.clock.seconds())
        self._writing = d
        d.addCallbacks(self._written, self._not_written, errbackArgs=(batch,))

    def _written(self, added: int) -> None:
        self._writing = None
        self.enqueued += int(added or 0)
        if self._trouble:
            self._trouble = False
            log.info("notifications: the outbox is written again")
        if self.on_stored is not None and added:
            self.on_stored(int(added))
        if self._pending:
            self._schedule(self.batch_delay)

    def _not_written(self, failure, batch: list[OutboxEntry]) -> None:
        self._writing = None
        self._pending = batch + self._pending
        if not self._trouble:
            self._trouble = True
            log.warn(
                "notifications: writing {count} events to the outbox failed ({error}); "
                "retrying every {delay} s",
                count=len(batch),
                error=failure.getErrorMessage(),
                delay=self.retry,
            )
        self._schedule(self.retry)

    @property
    def idle(self) -> bool:
        return not self._pending and self._writing is None and self._call is None

    async def drain(self) -> None:
        """Write what is pending now (a stopping server); a failure is logged, not raised."""
        if self._call is not None and self._call.active():
            self._call.cancel()
            self._call = None
        if self._writing is not None:
            await self._writing
        if self._pending:
            self._write()
            if self._writing is not None:
                await self._writing
        if self._call is not None and self._call.active():
            self._call.cancel()
            self._call = None
