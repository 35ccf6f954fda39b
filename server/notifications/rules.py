"""What each change of a game tells whom: a change record → the notifications it causes.

`entries_for(change, before, after, now)` is the outbox rule the notifications hand every game
they follow (`server.game.records`: `Game.notify_with`). The game calls it before it stores a
write, with the snapshot before the change and a preview of the one after, and stores the
entries it gives in the write's transaction: a notification is stored with its change or not
at all, and a crash after the commit loses none.

* `TurnEnded`: "game_over" to every player when the game ended; else "turn_started" to each
  player who acts in the new turn, telling also the conflicts the turn changed for them, and
  "conflict" to one whose conflicts changed but who does not act: one message a player;
* `DeadlineChanged` that started a turn's clock (the game's first turn): "turn_started" and
  "conflict" as for a new turn;
* `TurnFinished` and every `SeatChanged` but a join (a removal, a seat the stand-in takes or
  gives back): "last_one" when exactly one of two or more players who act has not finished.
  A "turn_started" waits `gather` seconds before it is sent; a "last_one" that comes meanwhile
  is sent in its place (`OutboxEntry.replaces`), so that a turn that starts and at once waits
  only for one player pings that player once.

Reminders are not changes: `server.notifications.follower` times them by the deadline the
records carry. Every entry has the idempotency key of `server.notifications.events`, so one
that is derived twice is kept once.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from server.model.changes import JOINED, Change, DeadlineChanged, SeatChanged, TurnEnded, TurnFinished
from server.model.outbox_entry import OutboxEntry
from server.model.snapshot import GameSnapshot
from server.notifications import events


def entries_for(
    change: Change, before: GameSnapshot, after: GameSnapshot, now: float, gather: float = 0.0
) -> list[OutboxEntry]:
    """The notifications `change` causes (see the module docstring); `gather`: how long a
    "turn_started" waits to be sent (`events.turn_started`)."""
    if isinstance(change, TurnEnded):
        if after.over:
            return [events.game_over(after, player, now) for player in _players(after)]
        return _turn_started(before, after, now, gather)
    if isinstance(change, DeadlineChanged) and change.turn_started:
        return _turn_started(None, after, now, gather)
    if isinstance(change, TurnFinished) or (isinstance(change, SeatChanged) and change.action != JOINED):
        return _last_one(after, now)
    return []


def rule_gathering(gather: float) -> Callable[[Change, GameSnapshot, GameSnapshot, float], list[OutboxEntry]]:
    """`entries_for` with its "turn_started" sent `gather` seconds late (the operator's
    `[notifications] gather`), as the notifications hand it to every game they follow."""
    return functools.partial(entries_for, gather=gather)


def _players(snapshot: GameSnapshot) -> list[int]:
    return [p.id for p in snapshot.state.players if p.id not in snapshot.removed_players]


def _turn_started(
    before: GameSnapshot | None, after: GameSnapshot, now: float, gather: float
) -> list[OutboxEntry]:
    """One message a player: "turn_started" to each who acts, with their conflicts when those
    changed; "conflict" alone to one whose conflicts changed but who does not act."""
    acting = set(after.acting_players())
    found = []
    for player in _players(after):
        signature = events.conflict_signature(after, player)
        news = bool(signature) and (before is None or events.conflict_signature(before, player) != signature)
        if player in acting:
            found.append(events.turn_started(after, player, now, gather=gather, with_conflicts=news))
        elif news:
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
