"""The stand-in: the ruleset's own player for a seat whose player is away.

When a player is absent (they missed turns), on vacation or has resigned, the server lets the
stand-in give that seat's orders, so the game goes on without waiting for them. It is the
computer player (`ruleset.ai`) at the level the operator chose (`normal` unless configured),
deciding from the seat's view alone (`ruleset.seat.seat_view`, R27): it sees only what the
player could see, and `check_order` accepts every order it gives. Its stream,
`stand_in_rng(seed, turn, player)`, makes a seat's orders follow from its view and the game seed.
"""

from __future__ import annotations

import random

from .ai import Level, ai_rng, decide
from .orders import Order
from .seat import SeatView, seat_view

__all__ = ["SeatView", "seat_view", "stand_in_orders", "stand_in_rng"]

stand_in_rng = ai_rng


def stand_in_orders(
    seat: SeatView, rng: random.Random, level: Level = Level.NORMAL, budget: int = 200
) -> tuple[Order, ...]:
    """The orders the stand-in gives for the seat this turn, in the order to insert them."""
    return decide(seat, level, rng, budget=budget)
