"""Every write of one game, stored with its change record: the part of `Game` that talks to the store.

Each write of the write side (an order, a finished turn, an end of turn, an operator's control,
a seat's change, a moved deadline) builds its rows as `server.model.writes` steps and calls
`_write` once: the store keeps the rows, one change record (`server.model.changes`) and the
notifications the change causes, in one transaction (`GameStore.write`). Only then is the change
applied to the game, its snapshot published, and the record handed to every follower
(`follow_changes`): readers follow these records instead of comparing snapshots.

The notifications a change causes are computed before the write by the outbox rule the
notifications hand the game (`notify_with`), from the snapshot before the change and a preview
of the one after it, so that they are stored with the change or not at all.

The open turn's deadline is stored by one path, `_deadline_step`: every write that moves the
timer's deadline carries it, and when the timer moved it by itself (a turn's clock started, the
threshold timer) `_follow_deadline` writes a `DeadlineChanged` record.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any, TypeVar

from twisted.internet import defer
from twisted.logger import Logger

from server.game.write_side import GameWriteSide
from server.model.changes import Change, ChangeRecord, DeadlineChanged, TurnEnded, kind_of
from server.model.outbox_entry import OutboxEntry
from server.model.snapshot import GameSnapshot
from server.model.store import OutcomeUnknown, StoreUnavailable
from server.model.writes import GameWrite, Step, StoreDeadline

log = Logger()

T = TypeVar("T")

#: What the notifications compute for a change: (change, snapshot before, snapshot after, now) →
#: the entries to store with it.
OutboxRule = Callable[[Change, GameSnapshot, GameSnapshot, float], Iterable[OutboxEntry]]
ChangeFollower = Callable[[ChangeRecord, GameSnapshot], None]


class GameLeft(StoreUnavailable):
    """A write of a game this process no longer runs (`Game.close`): nothing was stored."""


def log_failed_write(logger: Logger, failure: Any, text: str, **fields: Any) -> None:
    """Log a failed write of the game: one warning line (`text: error`) when the store could
    not take it (StoreUnavailable: the database is away, the game moved to another node),
    which is not a bug; a traceback at `critical` for anything else, which is."""
    if failure.check(StoreUnavailable):
        logger.warn(text + ": {error}", error=failure.getErrorMessage(), **fields)
    else:
        logger.failure(text, failure, **fields)


class ChangeRecords(GameWriteSide):
    """The store-facing part of `Game` (see the module docstring)."""

    _followers: list[ChangeFollower]
    _outbox_rule: OutboxRule | None
    _stored_deadline: tuple[int, float | None] | None
    _clock_started: bool
    _deadline_held: bool
    _doubt: tuple[GameWrite, OutcomeUnknown, Callable[[Any], Any]] | None
    last_change: int

    def _init_records(self, stored_deadline: tuple[int, float | None] | None) -> None:
        self._followers = []
        self._outbox_rule = None
        self._stored_deadline = stored_deadline
        self._clock_started = False
        self._deadline_held = False  # a restored game's clock is being put back
        self.last_change = 0  # the sequence of the last record this process wrote
        # A write whose commit was not answered and that could not be looked up yet: (the
        # write, the doubt, how to apply it). Settled before the game's next write.
        self._doubt = None

    # -- readers -----------------------------------------------------------------------------

    def follow_changes(self, follower: ChangeFollower) -> Callable[[], None]:
        """Call `follower(record, snapshot)` after every write of this game is stored and
        applied (`snapshot` is the one published with it); returns the call that stops it."""
        self._followers.append(follower)

        def stop() -> None:
            if follower in self._followers:
                self._followers.remove(follower)

        return stop

    def notify_with(self, rule: OutboxRule | None) -> None:
        """The notifications' rule: what each change tells whom, stored with the change."""
        self._outbox_rule = rule

    # -- one write -----------------------------------------------------------------------------

    def _write(
        self,
        change: Change,
        steps: tuple[Step, ...],
        applied: Callable[[], T],
        after: GameSnapshot | None = None,
    ) -> defer.Deferred:
        """Store `steps` with the record of `change` (and the notifications it causes, judged
        on `after`, the game as the change leaves it; the current snapshot when None), then
        run `applied()` to apply it, then tell the followers. Fires with `applied`'s result;
        fails, having changed nothing, when the store fails; fails with OutcomeUnknown when the
        store may or may not have it (`_unsure`). A closed game writes nothing (`GameLeft`): a
        session still holding it must not write with the claim its node may hold again."""
        if self._closed:
            return defer.fail(GameLeft(f"game {self.setup.name} no longer runs here"))
        now = self.clock.seconds()
        outbox: tuple[OutboxEntry, ...] = ()
        if self._outbox_rule is not None:
            try:
                outbox = tuple(self._outbox_rule(change, self.snapshot, after or self.snapshot, now))
            except Exception:  # a notification must never cost a player their write
                log.failure("game {game}: the notifications of a change failed", game=self.setup.name)
        deadline = self._deadline_step()
        if deadline is not None and not any(isinstance(step, StoreDeadline) for step in steps):
            steps = (*steps, deadline)
        write = GameWrite(change, steps, now, outbox)

        def stored(sequence: Any) -> T:
            for step in steps:
                if isinstance(step, StoreDeadline):
                    self._stored_deadline = (step.turn, step.deadline)
            result = applied()
            self._told(ChangeRecord(self.id, int(sequence or 0), now, change))
            return result

        d = self._settle_doubt()
        d.addCallback(lambda _: self.store.write(self.id, write))
        d.addCallbacks(stored, self._unsure, errbackArgs=(write, stored))
        return d

    # -- a write whose commit was not answered ---------------------------------------------------

    def _unsure(self, failure, write: GameWrite, stored: Callable[[Any], T]) -> Any:
        """The store failed the write. When its commit's answer was lost (OutcomeUnknown), look
        whether it is stored: stored, it is applied as if answered; not stored, it fails as a
        plain refusal (nothing changed). While that cannot be told the write stays in doubt and
        fails with OutcomeUnknown ("may or may not"): the game keeps it unapplied and settles
        it before its next write (`_settle_doubt`), so the game never differs from the store.
        An end of turn is not kept in doubt: it is stored again until it is (the same turn
        stored twice is stored once)."""
        if not failure.check(OutcomeUnknown):
            return failure
        doubt = failure.value
        log.warn(
            "game {game}: the answer to a write ({kind}) was lost: looking whether it is stored ({error})",
            game=self.setup.name,
            kind=kind_of(write.change),
            error=doubt,
        )
        d = defer.maybeDeferred(self.store.find_write, self.id, write, doubt)

        def found(sequence: int | None) -> Any:
            if sequence is None:
                log.info("game {game}: that write is not stored", game=self.setup.name)
                raise StoreUnavailable(f"{doubt}; the write is not stored")
            log.info(
                "game {game}: that write is stored (record {sequence})",
                game=self.setup.name,
                sequence=sequence,
            )
            return stored(sequence)

        def still_unknown(lookup_failure):
            lookup_failure.trap(OutcomeUnknown)
            if not isinstance(write.change, TurnEnded):
                self._doubt = (write, lookup_failure.value, stored)
            log.warn(
                "game {game}: whether that write is stored cannot be told yet ({error}); "
                "the game writes nothing until it can",
                game=self.setup.name,
                error=lookup_failure.value,
            )
            return lookup_failure

        return d.addCallbacks(found, still_unknown)

    def _settle_doubt(self) -> defer.Deferred:
        """Before any write: settle the write left in doubt, if any (applied if it is stored,
        forgotten if not); fails with StoreUnavailable, having sent nothing, while it cannot be."""
        if self._doubt is None:
            return defer.succeed(None)
        write, doubt, stored = self._doubt
        d = defer.maybeDeferred(self.store.find_write, self.id, write, doubt)

        def found(sequence: int | None) -> None:
            self._doubt = None
            if sequence is None:
                log.info("game {game}: the write in doubt is not stored", game=self.setup.name)
                return
            log.info("game {game}: the write in doubt is stored: applied now", game=self.setup.name)
            stored(sequence)

        def unknown(failure):
            failure.trap(OutcomeUnknown)
            raise StoreUnavailable(f"an earlier write may or may not be stored ({failure.value})")

        return d.addCallbacks(found, unknown)

    def _told(self, record: ChangeRecord) -> None:
        self.last_change = max(self.last_change, record.sequence)
        for follower in list(self._followers):
            try:
                follower(record, self.snapshot)
            except Exception:
                log.failure("game {game}: a change follower failed", game=self.setup.name)

    def _preview(self, **fields: Any) -> GameSnapshot:
        """The current snapshot with `fields` replaced: the game as a change would leave it
        (what the outbox rule judges; never published)."""
        caches: dict[str, Any] = {"_derived": {}}
        if "state" in fields:
            caches["state_cache"] = {}
        return replace(self.snapshot, announcement=None, **caches, **fields)

    # -- the deadline --------------------------------------------------------------------------

    def _deadline_key(self) -> tuple[int, float | None]:
        return (self._state.turn + 1, self.timer.deadline)

    def _deadline_step(self) -> StoreDeadline | None:
        """The deadline as the timer has it now, when it is not the one stored (none while a
        turn is being resolved: its end stores the next turn's)."""
        if self.busy:
            return None
        key = self._deadline_key()
        if self._is_stored(key):
            return None
        return StoreDeadline(*key)

    def _is_stored(self, key: tuple[int, float | None]) -> bool:
        """`key` is the deadline stored (none is stored without a turn: None)."""
        stored = self._stored_deadline
        if key[1] is None:
            return stored is None or stored[1] is None
        return key == stored

    def _follow_deadline(self) -> None:
        """The timer moved the deadline (or started a turn's clock): store it, as a write of its
        own once the writes under way are done (those store it themselves)."""
        if self._closed or self._deadline_held or self._ready_pending():
            return
        if self._is_stored(self._deadline_key()) and not self._clock_started:
            return
        d = self._lock.run(self._store_deadline)
        d.addErrback(
            lambda failure: log.warn(
                "game {game}: storing the turn deadline failed: {error}",
                game=self.setup.name,
                error=failure.getErrorMessage(),
            )
        )

    def _store_deadline(self) -> defer.Deferred:
        started, self._clock_started = self._clock_started, False
        if self._closed or self._ready_pending():
            return defer.succeed(None)
        step = self._deadline_step()
        if step is None and not started:
            return defer.succeed(None)
        turn, deadline = self._deadline_key()
        change = DeadlineChanged(self._state.turn, deadline, started)
        return self._write(change, (StoreDeadline(turn, deadline),), lambda: None)

    def _ready_pending(self) -> bool:
        """A turn is being resolved: its end stores the next turn's deadline."""
        return self.busy
