"""The delivery worker: claims due outbox rows, sends them, writes back what happened.

Every `poll_interval` seconds (and at once when the outbox was written) the worker claims up to
`batch` due rows for itself (`thd_claim_due`: on PostgreSQL `FOR UPDATE SKIP LOCKED`, so every
cluster node can run a worker on the same outbox and no row is sent by two of them), sends each
(at most `concurrency` at a time), and writes the outcomes back in one transaction per reactor
turn: delivered; or failed, to be tried again after `retry_delay(attempts)` (exponential, up to
`retry_cap`); or, after `max_attempts` or a failure that trying again cannot mend, given up and
logged. A claim lasts long enough for one attempt with its timeouts; the row of a worker that
died while sending is sent again by another once the claim expired (with the same idempotency
key, so the receiver can tell).
"""

from __future__ import annotations

from collections.abc import Callable

from twisted.internet import defer
from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.internet.task import LoopingCall
from twisted.logger import Logger

from server.config.notifications import NotificationSettings
from server.database.notification_outbox import EMAIL, ClaimedDelivery, DeliveryOutcome
from server.notifications.channels import with_game_link
from server.notifications.delivery import DeliveryFailed

log = Logger()

POLL_INTERVAL_S = 1.0
BATCH = 200
CONCURRENCY = 64


class DeliveryWorker:
    def __init__(
        self,
        store,
        clock: IReactorTime,
        settings: NotificationSettings,
        *,
        name: str,
        webhooks,
        mail,
        poll_interval: float = POLL_INTERVAL_S,
        batch: int = BATCH,
        concurrency: int = CONCURRENCY,
        on_delivered: Callable[[ClaimedDelivery], None] | None = None,
        site_url: Callable[[], str | None] | None = None,
    ):
        self.store = store
        self.site_url = site_url
        self.clock = clock
        self.settings = settings
        self.name = name
        self.webhooks = webhooks
        self.mail = mail
        self.poll_interval = poll_interval
        self.batch = batch
        self.concurrency = concurrency
        self.on_delivered = on_delivered
        self.claim_seconds = settings.request_timeout * 3 + 30
        self._loop: LoopingCall | None = None
        self._claiming: defer.Deferred | None = None
        self._again = False
        self._soon: IDelayedCall | None = None
        self._in_flight: dict[int, defer.Deferred] = {}
        self._outcomes: list[DeliveryOutcome] = []
        self._writing: defer.Deferred | None = None
        self._write_call: IDelayedCall | None = None
        self._stopping = False
        self._trouble = False
        self.delivered = 0
        self.failed = 0

    # -- running ---------------------------------------------------------------------------

    def start(self) -> None:
        self._loop = LoopingCall(self.wake)
        self._loop.clock = self.clock
        self._loop.start(self.poll_interval, now=True)

    def wake(self, *_: object) -> None:
        """Look for due rows now (or right after the claim in progress)."""
        if self._stopping:
            return
        if self._claiming is not None:
            self._again = True
            return
        room = self.concurrency - len(self._in_flight)
        if room <= 0:
            self._again = True
            return
        now = self.clock.seconds()
        d = defer.maybeDeferred(
            self.store.notifications.claim, self.name, now, self.claim_seconds, min(self.batch, room)
        )
        self._claiming = d
        d.addCallbacks(self._claimed, self._claim_failed, callbackArgs=(min(self.batch, room),))

    def _claimed(self, rows: list[ClaimedDelivery], limit: int) -> None:
        self._claiming = None
        if self._trouble:
            self._trouble = False
            log.info("notifications: the outbox is reachable again")
        for row in rows:
            self._send(row)
        if (len(rows) >= limit or self._again) and not self._stopping:
            self._again = False
            self._soon_wake()

    def _claim_failed(self, failure) -> None:
        self._claiming = None
        if not self._trouble:
            self._trouble = True
            log.warn(
                "notifications: claiming due notifications failed: {error}", error=failure.getErrorMessage()
            )

    def _soon_wake(self) -> None:
        if self._soon is None or not self._soon.active():
            self._soon = self.clock.callLater(0, self.wake)

    # -- sending ---------------------------------------------------------------------------

    def _send(self, row: ClaimedDelivery) -> None:
        base = self.site_url() if self.site_url is not None else self.settings.public_url
        payload = with_game_link(row.payload, base)
        if row.kind == EMAIL:
            d = defer.maybeDeferred(self.mail.send, row.target, payload)
        else:
            d = defer.maybeDeferred(self.webhooks.send, row.target, row.format, payload)
        self._in_flight[row.id] = d
        d.addCallbacks(self._sent, self._not_sent, callbackArgs=(row,), errbackArgs=(row,))

    def _sent(self, _: object, row: ClaimedDelivery) -> None:
        self._in_flight.pop(row.id, None)
        self.delivered += 1
        self._record(DeliveryOutcome(row.id))
        if self.on_delivered is not None:
            self.on_delivered(row)

    def _not_sent(self, failure, row: ClaimedDelivery) -> None:
        self._in_flight.pop(row.id, None)
        error = failure.value if failure.check(DeliveryFailed) else DeliveryFailed(failure.getErrorMessage())
        attempts = row.attempts + 1
        if error.permanent or attempts >= self.settings.max_attempts:
            self.failed += 1
            log.warn(
                "notifications: {event} {key} to {kind} {target} given up after {attempts} attempts: {error}",
                event=row.event,
                key=row.key,
                kind=row.kind,
                target=_shown(row),
                attempts=attempts,
                error=str(error),
            )
            self._record(DeliveryOutcome(row.id, str(error), None))
        else:
            retry_at = self.clock.seconds() + self.settings.retry_delay(attempts)
            self._record(DeliveryOutcome(row.id, str(error), retry_at))

    # -- outcomes --------------------------------------------------------------------------

    def _record(self, outcome: DeliveryOutcome) -> None:
        self._outcomes.append(outcome)
        if self._writing is None and (self._write_call is None or not self._write_call.active()):
            self._write_call = self.clock.callLater(0, self._write_outcomes)

    def _write_outcomes(self) -> None:
        self._write_call = None
        batch, self._outcomes = self._outcomes, []
        if not batch:
            return
        d = defer.maybeDeferred(
            self.store.notifications.record_outcomes, self.name, batch, self.clock.seconds()
        )
        self._writing = d
        d.addCallbacks(self._outcomes_written, self._outcomes_not_written, errbackArgs=(batch,))

    def _outcomes_written(self, _: object) -> None:
        self._writing = None
        if self._outcomes:
            self._write_call = self.clock.callLater(0, self._write_outcomes)
        if not self._stopping:
            self._soon_wake()  # room for more, and retries may be due

    def _outcomes_not_written(self, failure, batch: list[DeliveryOutcome]) -> None:
        self._writing = None
        self._outcomes = batch + self._outcomes
        log.warn(
            "notifications: writing {count} delivery outcomes failed ({error}); retrying",
            count=len(batch),
            error=failure.getErrorMessage(),
        )
        if not self._stopping:
            self._write_call = self.clock.callLater(self.poll_interval, self._write_outcomes)

    @property
    def busy(self) -> bool:
        return bool(self._in_flight or self._outcomes or self._writing or self._claiming)

    async def stop(self) -> None:
        """No more claims; the sends in flight end (each has its timeout) and their outcomes
        are written. Rows claimed and not sent go back when their claim expires."""
        self._stopping = True
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        if self._soon is not None and self._soon.active():
            self._soon.cancel()
        if self._claiming is not None:
            await self._claiming
        if self._in_flight:
            await defer.DeferredList(list(self._in_flight.values()), consumeErrors=True)
        if self._write_call is not None and self._write_call.active():
            self._write_call.cancel()
            self._write_call = None
        if self._writing is not None:
            await self._writing
        if self._outcomes:
            self._write_outcomes()
            if self._writing is not None:
                await self._writing


def _shown(row: ClaimedDelivery) -> str:
    """A channel as the log shows it: a webhook's scheme and host only (its path is a secret)."""
    if row.kind == EMAIL:
        return row.target
    from urllib.parse import urlsplit

    parts = urlsplit(row.target)
    return f"{parts.scheme}://{parts.netloc}/…"
