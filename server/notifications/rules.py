"""What each change of a game tells whom: a change record → the notifications it causes.

`entries_for(change, before, after, now)` is the outbox rule the notifications hand every game
they follow (`server.game.records`: `Game.notify_with`). The game calls it before it stores a
write, with the snapshot before the change and a preview of the one after, and stores the
entries it gives in the write's transaction: a notification is stored with its change or not
at all, and a crash after the commit loses none.

* `TurnEnded`: "game_over" to every player when the game ended; else "turn_started" to each
  player who acts in the new turn, and "conflict" to each whose conflicts the turn changed;
* `DeadlineChanged` that started a turn's clock (the game's first turn): "turn_started" and
  "conflict" as for a new turn;
* `TurnFinished` and every `SeatChanged` but a join (a removal, a seat the stand-in takes or
  gives back): "last_one" when exactly one of two or more players who act has not finished.

Reminders are not changes: `server.notifications.follower` times them by the deadline the
records carry. Every entry has the idempotency key of `server.notifications.events`, so one
that is derived twice is kept once.
"""

from __future__ import annotations

from server.model.changes import JOINED, Change, DeadlineChanged, SeatChanged, TurnEnded, TurnFinished
from server.model.outbox_entry import OutboxEntry
from server.model.snapshot import GameSnapshot
from server.notifications import events


def entries_for(change: Change, before: GameSnapshot, after: GameSnapshot, now: float) -> list[OutboxEntry]:
    """The notifications `change` causes (see the module docstring)."""
    if isinstance(change, TurnEnded):
        if after.over:
            return [events.game_over(after, player, now) for player in _players(after)]
        return _turn_started(before, after, now)
    if isinstance(change, DeadlineChanged) and change.turn_started:
        return _turn_started(None, after, now)
    if isinstance(change, TurnFinished) or (isinstance(change, SeatChanged) and change.action != JOINED):
        return _last_one(after, now)
    return []


def _players(snapshot: GameSnapshot) -> list[int]:
    return [p.id for p in snapshot.state.players if p.id not in snapshot.removed_players]


def _turn_started(before: GameSnapshot | None, after: GameSnapshot, now: float) -> list[OutboxEntry]:
    found = [events.turn_started(after, player, now) for player in after.acting_players()]
    for player in _players(after):
        signature = events.conflict_signature(after, player)
        if signature and (before is None or events.conflict_signature(before, player) != signature):
            entry = events.conflict(after, player, now)
            if entry is not None:
                found.append(entry)
    return found


def _last_one(after: GameSnapshot, now: float) -> list[OutboxEntry]:
    if not after.started or after.over:
        return []
    acting = after.acting_players()
    waiting = [p for p in acting if p not in after.finished]
    if len(acting) >= 2 and len(waiting) == 1:
        return [events.last_one(after, waiting[0], now)]
    return []
