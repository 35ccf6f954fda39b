"""`easy`: a beginner's opponent, legal and never stuck, but careless.

It sees the same orders as `normal` (`greedy.ranked_choices`) but does not weigh them well: each
order is the best one only a third of the time, otherwise a random one of the colonizations and
leader moves it may give, so it often places a colony where an opponent's leader scores it, lets
its weakest category lag and leaves leaders at home. It gives a single order in half of its turns
and, in a conflict, sends a random number of its eligible colonists (often too few). How a new
player beats it: put leaders of each kind next to scientist colonies early, extend the regions
where your leaders stand, and watch for its colonies that feed your leaders.
"""

from __future__ import annotations

import random

from ..orders import Order
from ..seat import SeatView
from ..state import Phase
from .greedy import Choice, compatible, is_combat_turn, ranked_choices, reinforcements, slots_left

BEST_CHANCE = 1 / 3  # how often an order is the greedy player's best one
SECOND_ORDER_CHANCE = 0.5  # how often it gives a second order


def easy_orders(seat: SeatView, rng: random.Random) -> tuple[Order, ...]:
    if seat.view.phase is Phase.OVER:
        return ()
    if is_combat_turn(seat):
        eligible = list(reinforcements(seat))
        return tuple(sorted(rng.sample(eligible, rng.randint(0, len(eligible))), key=lambda o: o.fleet))
    ranked = ranked_choices(seat, rng)
    if not ranked:
        return ()
    slots = min(slots_left(seat), 1 if rng.random() >= SECOND_ORDER_CHANCE else 2)
    picked: list[Choice] = []
    while len(picked) < slots:
        open_ = [c for c in ranked if compatible(seat, c, picked)]
        if not open_:
            break
        picked.append(open_[0] if rng.random() < BEST_CHANCE else open_[rng.randrange(len(open_))])
    return tuple(c.order(seat) for c in picked)
