"""The computer player: one AI for the stand-in, the computer players and the bot.

It decides a seat's orders for a turn — in a combat turn, its reinforcements — from the seat's
view alone (`ruleset.seat.SeatView`: R27, never another player's hand or score), purely and
deterministically: the same view, stream and budget give the same orders. Three levels:

* `easy` (`ruleset.ai.easy`): legal and never stuck but careless; a new player beats it.
* `normal` (`ruleset.ai.greedy`): the greedy one-turn look-ahead.
* `hard` (`ruleset.ai.search`): a determinized Monte Carlo search whose playouts are played by a
  cheap greedy policy; `budget` playouts (`DEFAULT_ITERATIONS`), or fewer when the caller's
  `should_stop()` says so: in play, `stop_after(DEFAULT_SECONDS, time.monotonic)` bounds a
  decision to a second (0.9 s, and the playout under way).

Every order it gives is one `check_order` accepts in sequence after the seat's accepted orders.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from enum import Enum

from ..orders import Order
from ..randomness import game_rng
from ..seat import SeatView
from .easy import easy_orders
from .greedy import normal_orders
from .search import DEFAULT_DEPTH, DEFAULT_ITERATIONS, DEFAULT_SECONDS, hard_orders, stop_after


class Level(str, Enum):
    """How well the computer plays."""

    EASY = "easy"
    NORMAL = "normal"
    HARD = "hard"


LEVEL_NAMES = tuple(level.value for level in Level)


def parse_level(text: str) -> Level:
    """A level by name (case-insensitive); ValueError naming the levels otherwise."""
    try:
        return Level(text.strip().lower())
    except ValueError:
        raise ValueError(f"unknown AI level {text!r}: choose one of {', '.join(LEVEL_NAMES)}") from None


def ai_rng(seed: int, turn: int, player: int) -> random.Random:
    """The AI's stream for `player`'s seat in `turn` of the game with `seed` (like `game_rng`)."""
    return game_rng(seed, turn, f"stand-in {player}")


def decide(
    seat: SeatView,
    level: Level,
    rng: random.Random,
    *,
    budget: int = DEFAULT_ITERATIONS,
    depth: int = DEFAULT_DEPTH,
    should_stop: Callable[[], bool] | None = None,
) -> tuple[Order, ...]:
    """The seat's orders for the turn at `level`, in the order to insert them."""
    if level is Level.EASY:
        return easy_orders(seat, rng)
    if level is Level.NORMAL:
        return normal_orders(seat, rng)
    return hard_orders(seat, rng, budget, depth, should_stop)


__all__ = [
    "DEFAULT_ITERATIONS",
    "DEFAULT_SECONDS",
    "LEVEL_NAMES",
    "Level",
    "ai_rng",
    "decide",
    "parse_level",
    "stop_after",
]
