"""One notification for one player, as the outbox stores it (a row per channel of theirs)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class OutboxEntry:
    """An event for one player, to be written for each of their channels. `key` is its
    idempotency key: the outbox keeps one row per key and channel."""

    game_id: int
    player_id: int
    key: str
    event: str
    payload: dict[str, Any]
