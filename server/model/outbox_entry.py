"""One notification for one player, as the outbox stores it (a row per channel of theirs)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class OutboxEntry:
    """An event for one player, to be written for each of their channels. `key` is its
    idempotency key: the outbox keeps one row per key and channel. It is due at `not_before`
    (a game clock time; 0: at once). `replaces` is the key of an earlier event that this one
    makes needless when that one is still waiting to be sent: it is then sent as part of this
    one, not as a message of its own."""

    game_id: int
    player_id: int
    key: str
    event: str
    payload: dict[str, Any]
    not_before: float = 0.0
    replaces: str | None = None
