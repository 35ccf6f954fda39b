"""Drawing colonists from the pool (R3): like a bag, in proportion to the ships left."""

from __future__ import annotations

import random

from .kinds import KINDS, Kind


def draw(pool: list[int], rng: random.Random) -> Kind | None:
    """Take one colonist out of `pool` (counts by kind, mutated); None when the pool is empty."""
    total = pool[0] + pool[1] + pool[2] + pool[3]
    if total <= 0:
        return None
    pick = rng.randrange(total)
    for kind in KINDS:  # (a tuple: iterating the enum class itself is slower)
        if pick < pool[kind]:
            pool[kind] -= 1
            return kind
        pick -= pool[kind]
    raise AssertionError("unreachable: pick is below the total")
