"""`hard`: determinized Monte Carlo search over the seat's candidate turns.

Games like TaE (several players, hidden hands, chance in the draws) are searched over
*determinizations* (Cowling, Powley and Whitehouse, "Information Set Monte Carlo Tree Search",
IEEE TCIAIG 2012): a world is sampled consistently with what the seat can see
(`ruleset.ai.worlds`), the seat's candidate orders are played in it, then a few turns of every
player by the cheap policy (`ruleset.ai.playout`), and the position is evaluated. Here the tree
is one level deep (the seat's own turn); the statistics are shared across worlds, as in ISMCTS.

* Candidates: in a normal turn, `normal`'s answer, then the best compatible pairs and singles of
  the greedy player's ranked orders and of the leader moves it does not consider
  (`ruleset.ai.leader_moves`: collecting artifacts, relocating a leader, merging regions for
  their artifacts); in a combat turn, sending all, … 1, 0 of the eligible colonists.
* Every candidate of a round is played in the *same* worlds with the same playout streams, so
  they are compared on equal luck; successive halving keeps the better half of the others after
  each round, and `normal`'s answer stays to the end: another is chosen only when its mean beats
  it by `MARGIN` (the search changes the greedy choice on clear evidence only).
* Budget: `iterations` playouts in all (reproducible: the same view, stream and budget give the
  same orders); `should_stop()` (the caller's clock: the ruleset reads none; `stop_after` makes
  one of a time bound) ends the search early with the best answer so far, asked before every
  playout. Without a playout it answers as `normal`.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass

from ..orders import Order
from ..seat import SeatView
from ..state import Phase
from ..turn import resolve_turn
from .greedy import (
    Choice,
    compatible,
    is_combat_turn,
    normal_orders,
    ranked_choices,
    reinforcements,
    slots_left,
)
from .leader_moves import artifact_joins, leader_moves
from .playout import BoardFacts, all_quick_orders, evaluate
from .worlds import sample_world

# 100 playouts: hard won 55.1 % of 400 games against three normal at it (README), and a decision
# takes about a quarter of a second on this 2-core machine (tests.benchmarks.bench_ai).
DEFAULT_ITERATIONS = 100
# The time bound of a decision in play (the stand-in, the bot): a search still running then
# answers with its best so far, after the playout under way (a few milliseconds), so that a
# decision takes at most a second also on a busy machine (tests.benchmarks.bench_ai). Tournaments
# and tests use the iteration budget alone.
DEFAULT_SECONDS = 0.9
DEFAULT_DEPTH = 4  # turns played in a playout, the seat's own turn included
MAX_CANDIDATES = 8
TOP_SINGLES = 6  # ranked orders that candidate pairs are made of
TOP_EXTRA = 3  # leader moves the greedy player does not consider (`leader_moves`)
MARGIN = 0.15  # how much better than `normal`'s answer another must do, in points of evaluation


@dataclass
class _Candidate:
    orders: tuple[Order, ...]
    total: float = 0.0
    runs: int = 0

    @property
    def mean(self) -> float:
        return self.total / self.runs if self.runs else -math.inf


def candidate_turns(seat: SeatView, rng: random.Random) -> list[tuple[Order, ...]]:
    """The turns `hard` compares, `normal`'s answer first; distinct order sets."""
    if is_combat_turn(seat):
        eligible = reinforcements(seat)
        return [eligible[:n] for n in range(len(eligible), -1, -1)]
    normal = normal_orders(seat, random.Random(rng.random()))
    found: list[tuple[Order, ...]] = [normal]
    ranked = ranked_choices(seat, random.Random(rng.random()))[:TOP_SINGLES]
    extra_rng = random.Random(rng.random())
    extra = leader_moves(seat, extra_rng)[:TOP_EXTRA] + artifact_joins(seat, extra_rng)[:TOP_EXTRA]
    ranked = sorted(ranked + extra, key=lambda c: -c.value)
    sets: list[tuple[float, list[Choice]]] = []
    if slots_left(seat) >= 2:
        for i, a in enumerate(ranked):
            for b in ranked[i + 1 :]:
                if compatible(seat, b, [a]):
                    sets.append((a.value + b.value, [a, b]))
    sets.extend((c.value, [c]) for c in ranked)
    sets.sort(key=lambda s: -s[0])
    for _, chosen in sets:
        orders = tuple(c.order(seat) for c in chosen)
        if orders not in found and set(orders) != set(normal):
            found.append(orders)
        if len(found) >= MAX_CANDIDATES:
            break
    return found


def stop_after(
    seconds: float, clock: Callable[[], float], also: Callable[[], bool] | None = None
) -> Callable[[], bool]:
    """A `should_stop` that is true once `seconds` have passed on `clock` from now (or when
    `also()` is). The caller hands in its clock (`time.monotonic`): the ruleset reads none."""
    end = clock() + seconds
    if also is None:
        return lambda: clock() >= end
    return lambda: also() or clock() >= end


def playout(seat: SeatView, orders: tuple[Order, ...], world_seed: int, depth: int) -> float:
    """Play `orders` and `depth - 1` more turns in the world `world_seed` draws; the value for the seat."""
    rng = random.Random(world_seed)
    state = sample_world(seat, rng)
    cache: dict[int, BoardFacts] = {}
    player = seat.player
    for turn in range(depth):
        if state.phase is Phase.OVER:
            break
        everyone = all_quick_orders(state, rng, cache, player)
        if turn == 0:
            everyone = [o for o in everyone if o.player != player]
            everyone[:0] = [*seat.accepted, *orders]
        state = resolve_turn(state, everyone, rng, messages=False).state
    return evaluate(state, player)


def hard_orders(
    seat: SeatView,
    rng: random.Random,
    iterations: int = DEFAULT_ITERATIONS,
    depth: int = DEFAULT_DEPTH,
    should_stop: Callable[[], bool] | None = None,
) -> tuple[Order, ...]:
    """The seat's orders after a search of `iterations` playouts (fewer if `should_stop()`)."""
    if seat.view.phase is Phase.OVER:
        return ()
    turns = candidate_turns(seat, rng)
    if len(turns) <= 1 or iterations <= 0:
        return turns[0] if turns else ()
    candidates = [_Candidate(t) for t in turns]
    alive = list(candidates)
    rounds = max(1, math.ceil(math.log2(len(candidates) - 1)) + 1)
    spent = 0
    for round_index in range(rounds):
        share = (iterations - spent) // (rounds - round_index)
        worlds = max(1, share // len(alive))
        for _ in range(worlds):
            world_seed = rng.getrandbits(64)
            for candidate in alive:
                if spent >= iterations or (should_stop is not None and should_stop()):
                    return _best(candidates, alive)
                candidate.total += playout(seat, candidate.orders, world_seed, depth)
                candidate.runs += 1
                spent += 1
        if len(alive) > 2:
            # `normal`'s answer stays in: the others must beat it in the same worlds.
            rivals = sorted(alive[1:], key=lambda c: -c.mean)
            alive = [alive[0], *rivals[: max(1, len(rivals) // 2)]]
    return _best(candidates, alive)


def _best(candidates: list[_Candidate], alive: list[_Candidate]) -> tuple[Order, ...]:
    """The best answer so far: `normal`'s answer unless a rival's mean beats it by `MARGIN`
    (the search changes the greedy choice only on clear evidence)."""
    normal = candidates[0]
    rivals = [c for c in alive[1:] if c.runs]
    if not normal.runs or not rivals:
        return normal.orders
    best = max(rivals, key=lambda c: c.mean)
    return best.orders if best.mean > normal.mean + MARGIN else normal.orders
