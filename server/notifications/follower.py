"""Following the running games: the outbox rule, and the reminders timed by each turn's deadline.

`GameFollower.follow(game)` hands the game the outbox rule (`server.notifications.rules`: what
each change tells whom, stored in the change's transaction) and follows its change records
(`follow_changes`; this module never imports `server.game`):

* a record that may have stored notifications (`NOTIFYING`) wakes the delivery worker;
* a record that moves the deadline (`TurnEnded`, `DeadlineChanged`, `ClockControlled`) times
  the turn's reminder at `deadline - reminder_lead`: it tells the players who have not
  finished by then ("reminder"). A turn shorter than the lead has none.

When a game is followed (at start, a game loaded or claimed later) the reminder of its open
turn is timed from its snapshot; one whose time passed while the server was away is sent at
once, if the deadline has not. Reminders go through the outbox (`server.notifications.outbox`),
and their idempotency keys make sure that none is queued twice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.logger import Logger

from server.model.changes import (
    ChangeRecord,
    ClockControlled,
    DeadlineChanged,
    SeatChanged,
    TurnEnded,
    TurnFinished,
)
from server.model.outbox_entry import OutboxEntry
from server.model.snapshot import GameSnapshot
from server.notifications import events, rules

log = Logger()

#: The changes whose write may have stored notifications (`server.notifications.rules`).
NOTIFYING = (TurnEnded, DeadlineChanged, TurnFinished, SeatChanged)
#: The changes that move the open turn's deadline.
DEADLINE_MOVES = (TurnEnded, DeadlineChanged, ClockControlled)


@dataclass
class _Watch:
    """What the follower remembers of one game."""

    game: Any
    stop: Callable[[], None]
    latest: GameSnapshot
    turn: int = -1
    reminder: IDelayedCall | None = None
    reminder_at: float | None = None


class GameFollower:
    def __init__(
        self,
        outbox,
        clock: IReactorTime,
        reminder_lead: float,
        wake: Callable[[int], None] | None = None,
        gather: float = 0.0,
    ):
        self.outbox = outbox
        self.clock = clock
        self.reminder_lead = reminder_lead
        self.rule = rules.rule_gathering(gather)
        self.wake = wake  # the delivery worker: rows were stored
        self._watches: dict[int, _Watch] = {}

    @property
    def followed(self) -> tuple[int, ...]:
        return tuple(self._watches)

    def follow(self, game: Any) -> None:
        """Follow `game` from now on (again, when it is a new object for the same game id)."""
        snapshot = game.snapshot
        old = self._watches.get(snapshot.game_id)
        if old is not None:
            if old.game is game:
                return
            self._drop(old)
        watch = _Watch(game, lambda: None, snapshot)
        self._watches[snapshot.game_id] = watch
        game.notify_with(self.rule)
        stop_following = game.follow_changes(lambda record, after: self._changed(watch, record, after))

        def stop() -> None:
            stop_following()
            game.notify_with(None)

        watch.stop = stop
        if not snapshot.over and snapshot.started:
            self._arm_reminder(watch, snapshot, self.clock.seconds(), first=True)

    def forget(self, game_id: int) -> None:
        watch = self._watches.pop(game_id, None)
        if watch is not None:
            self._drop(watch)

    def stop(self) -> None:
        for game_id in list(self._watches):
            self.forget(game_id)

    def _drop(self, watch: _Watch) -> None:
        watch.stop()
        self._cancel_reminder(watch)

    # -- change records ------------------------------------------------------------------------

    def _changed(self, watch: _Watch, record: ChangeRecord, snapshot: GameSnapshot) -> None:
        if self._watches.get(record.game_id) is not watch:
            return
        if watch.game.closed:
            self.forget(record.game_id)  # the game left this process (another node runs it)
            return
        watch.latest = snapshot
        change = record.change
        if isinstance(change, NOTIFYING) and self.wake is not None:
            self.wake(1)
        if isinstance(change, DEADLINE_MOVES):
            if snapshot.over:
                self._cancel_reminder(watch)
            else:
                self._arm_reminder(watch, snapshot, self.clock.seconds(), first=False)

    # -- reminders ------------------------------------------------------------------------

    def _arm_reminder(self, watch: _Watch, snapshot: GameSnapshot, now: float, first: bool) -> None:
        """Time the reminder of this turn by its deadline (again when the deadline moves).

        When the lead is longer than what is left, a turn that starts so short gets none (its
        start said when it ends); a turn the server came back into, or whose deadline moved,
        gets it at once."""
        turn = events.open_turn(snapshot)
        if turn != watch.turn:
            watch.turn = turn
            self._cancel_reminder(watch)
        if self.reminder_lead <= 0:
            return
        deadline = snapshot.deadline
        if deadline is None or deadline <= now:
            self._cancel_reminder(watch)
            return
        at = deadline - self.reminder_lead
        if at == watch.reminder_at:
            return
        moved = watch.reminder_at is not None
        self._cancel_reminder(watch)
        watch.reminder_at = at
        if at <= now and not (first or moved):
            return
        watch.reminder = self.clock.callLater(max(0.0, at - now), self._remind, watch, watch.turn)

    def _cancel_reminder(self, watch: _Watch) -> None:
        if watch.reminder is not None and watch.reminder.active():
            watch.reminder.cancel()
        watch.reminder = None
        watch.reminder_at = None

    def _remind(self, watch: _Watch, turn: int) -> None:
        watch.reminder = None
        if self._watches.get(watch.latest.game_id) is not watch:
            return
        if watch.game.closed:
            self.forget(watch.latest.game_id)
            return
        snapshot = watch.game.snapshot
        if events.open_turn(snapshot) != turn or snapshot.over or snapshot.resolving:
            return
        now = self.clock.seconds()
        found: list[OutboxEntry] = [
            events.reminder(snapshot, player, now) for player in snapshot.waiting_for()
        ]
        if found:
            self.outbox.add(found)
