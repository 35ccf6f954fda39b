"""Following the running games: their snapshots become events, and events go to the outbox.

`GameFollower.follow(game)` subscribes to a game (anything with `snapshot` and `subscribe`, as
`server.game.game.Game` has; this module never imports it) and looks at every snapshot it publishes:

* the timer announced the start of a turn (also the first): "turn_started" for each player who
  acts in it, and "conflict" for each whose conflicts changed since the last turn;
* one player who acts has not finished, the others have: "last_one";
* the game is over: "game_over" for every player;
* a deadline is known: a reminder timer at `deadline - reminder_lead`, which tells the players
  who have not finished by then ("reminder"). A turn shorter than the lead has none.

The first snapshot of a game followed (at start, a game loaded or claimed later) derives the
current turn's events again: whatever a crash kept from the outbox is queued now, and what was
queued already is not queued twice (same idempotency key). A reminder whose time passed while
the server was away is sent at once, if the deadline has not.

The listener runs inside the game's publish (also at the end of a turn): it only compares
snapshots and appends to the outbox's list; the database work happens later, elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.logger import Logger

from server.database.notification_outbox import OutboxEntry
from server.model.snapshot import GameSnapshot
from server.model.timer_settings import TIMER_STARTED
from server.notifications import events

log = Logger()


@dataclass
class _Watch:
    """What the follower remembers of one game."""

    game: Any
    unsubscribe: Callable[[], None]
    latest: GameSnapshot | None = None
    turn: int = -1
    sent: set[str] = field(default_factory=set)
    conflicts: dict[int, tuple] = field(default_factory=dict)  # player -> signature last told
    finished: tuple | None = None  # (finished, removed, stand-ins) last looked at
    reminder: IDelayedCall | None = None
    reminder_at: float | None = None


class GameFollower:
    def __init__(self, outbox, clock: IReactorTime, reminder_lead: float):
        self.outbox = outbox
        self.clock = clock
        self.reminder_lead = reminder_lead
        self._watches: dict[int, _Watch] = {}

    @property
    def followed(self) -> tuple[int, ...]:
        return tuple(self._watches)

    def follow(self, game: Any) -> None:
        """Follow `game` from now on (again, when it is a new object for the same game id)."""
        game_id = game.snapshot.game_id
        old = self._watches.get(game_id)
        if old is not None:
            if old.game is game:
                return
            self._drop(old)
        watch = _Watch(game, lambda: None)
        self._watches[game_id] = watch
        watch.unsubscribe = game.subscribe(lambda snapshot: self._seen(watch, snapshot))
        self._seen(watch, game.snapshot, first=True)

    def forget(self, game_id: int) -> None:
        watch = self._watches.pop(game_id, None)
        if watch is not None:
            self._drop(watch)

    def stop(self) -> None:
        for game_id in list(self._watches):
            self.forget(game_id)

    def _drop(self, watch: _Watch) -> None:
        watch.unsubscribe()
        self._cancel_reminder(watch)

    # -- snapshots ------------------------------------------------------------------------

    def _seen(self, watch: _Watch, snapshot: GameSnapshot, first: bool = False) -> None:
        if self._watches.get(snapshot.game_id) is not watch:
            return
        if getattr(watch.game, "closed", False):
            self.forget(snapshot.game_id)  # the game left this process (another node runs it)
            return
        if snapshot.resolving:
            return
        watch.latest = snapshot
        now = self.clock.seconds()
        found: list[OutboxEntry] = []
        turn = events.open_turn(snapshot)
        new_turn = turn != watch.turn
        if new_turn:
            watch.turn = turn
            watch.sent.clear()
            watch.finished = None
            self._cancel_reminder(watch)
        if snapshot.over:
            for player in self._players(snapshot):
                self._add(watch, found, events.game_over(snapshot, player, now))
        elif snapshot.started:
            announcement = snapshot.announcement
            if first or (announcement is not None and announcement.reason == TIMER_STARTED):
                acting = snapshot.acting_players()
                for player in acting:
                    self._add(watch, found, events.turn_started(snapshot, player, now))
                for player in self._players(snapshot):
                    signature = events.conflict_signature(snapshot, player)
                    if signature and watch.conflicts.get(player) != signature:
                        entry = events.conflict(snapshot, player, now)
                        if entry is not None:
                            self._add(watch, found, entry)
                    watch.conflicts[player] = signature
            # who the turn waits for changes with a finish, a removal, a seat the stand-in
            # takes or gives back
            waits = (snapshot.finished, snapshot.removed_players, snapshot.stand_ins())
            if waits != watch.finished:
                watch.finished = waits
                acting = snapshot.acting_players()
                waiting = [p for p in acting if p not in snapshot.finished]
                if len(acting) >= 2 and len(waiting) == 1:
                    self._add(watch, found, events.last_one(snapshot, waiting[0], now))
            self._arm_reminder(watch, snapshot, now, first)
        if found:
            self.outbox.add(found)

    @staticmethod
    def _players(snapshot: GameSnapshot) -> list[int]:
        return [p.id for p in snapshot.state.players if p.id not in snapshot.removed_players]

    @staticmethod
    def _add(watch: _Watch, found: list[OutboxEntry], entry: OutboxEntry) -> None:
        if entry.key not in watch.sent:
            watch.sent.add(entry.key)
            found.append(entry)

    # -- reminders ------------------------------------------------------------------------

    def _arm_reminder(self, watch: _Watch, snapshot: GameSnapshot, now: float, first: bool) -> None:
        """Time the reminder of this turn by its deadline (again when the deadline moves).

        When the lead is longer than what is left, a turn that starts so short gets none (its
        start said when it ends); a turn the server came back into, or whose deadline moved,
        gets it at once."""
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
        snapshot = watch.latest
        if snapshot is None or self._watches.get(snapshot.game_id) is not watch:
            return
        if getattr(watch.game, "closed", False):
            self.forget(snapshot.game_id)
            return
        if watch.turn != turn or snapshot.over or snapshot.resolving:
            return
        now = self.clock.seconds()
        found: list[OutboxEntry] = []
        for player in snapshot.waiting_for():
            self._add(watch, found, events.reminder(snapshot, player, now))
        if found:
            self.outbox.add(found)
