"""The stand-in: the ruleset's own player for a seat whose player is away.

When a player is absent (they missed turns), on vacation or has resigned, the server lets the
stand-in give that seat's orders, so the game goes on without waiting for them. Two promises:

* **It sees only what the player could see.** It decides from a `SeatView`: the player's R27
  view (`visible_to`: their own colonist kinds and scores, the public board, never an opponent's
  hand or score), the board, the order types the player's fleets take now and the orders the
  player already gave this turn. `seat_view` is the only place that reads the full state, and it
  passes on nothing more; two states that differ only in what the player cannot see give the
  same `SeatView`, so the same orders.
* **Its orders are legal.** It keeps R11's limits (two orders, one per fleet, one per system)
  and refuses targets with the ruleset's own static conditions (`ruleset.conditions.refusal`,
  what `check_order` runs), so `check_order` accepts every order it gives. It also avoids what
  would make an order fail at execution by its own doing (a system with a leader on it, a
  colony joining two regions, a move into a region whose leader is in a pending conflict).

How it plays: simply, and never stuck. In a normal turn it places the colonist that scores best
for itself (R13: a point for its own leader, weighted towards its weakest category; a point for
an opponent counts against), brings a leader home from its home system next to a scientist
colony when it can, never bombs and never starts a revolt; it joins regions (which may start a
war) only when no other colony is left. The first order is given even when nothing scores, so a
game of stand-ins still ends (the pool runs out, R24). In a
combat turn it reinforces with every colonist it may. Ties are broken by the seeded
`stand_in_rng(seed, turn, player)`, so a seat's orders follow from its view and the game seed.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .board import Board
from .conditions import refusal
from .kinds import Kind, Role
from .orders import ORDERS_PER_TURN, Order, OrderType, allowed_order_types
from .randomness import game_rng
from .regions import region_of_each_member
from .state import GameState, Phase
from .visibility import PlayerView, visible_to

# What an order is worth to the stand-in, in points for itself.
OWN_POINT = 1.0  # a point for one of its leaders
WEAKEST_BONUS = 0.5  # extra when the point lifts its weakest category (R25: the minimum counts)
OPPONENT_POINT = -0.5  # a point for an opponent's leader
NOBODY = 0.05  # a colony that scores for nobody
JOINING = -1.0  # a colony that joins regions (it may start a war): only when nothing else is left
LEADER_HOME_RETURN = 0.9  # a leader brought onto the board from its home system
LEADER_PER_COLONY = 0.1  # per colony of the leader's kind in the region it joins
TIE_BREAK = 1e-3  # the seeded jitter between orders worth the same


@dataclass(frozen=True, slots=True)
class SeatView:
    """Everything the stand-in knows when it plays `player`'s seat for one turn."""

    player: int
    view: PlayerView
    board: Board
    allowed: Mapping[int, tuple[OrderType, ...]]  # own fleet id -> order types it takes now
    accepted: tuple[Order, ...] = ()  # the player's own orders already accepted this turn


def seat_view(state: GameState, player: int, accepted: Sequence[Order] = ()) -> SeatView:
    """What `player` sees of `state` (R27), with the order types of their own fleets and their
    own accepted orders of the coming turn (other players' orders are never passed on)."""
    allowed = {
        fleet.id: allowed_order_types(state, fleet.id)
        for fleet in state.fleets.values()
        if fleet.owner == player
    }
    own = tuple(order for order in accepted if order.player == player)
    return SeatView(player, visible_to(state, player), state.board, allowed, own)


def stand_in_rng(seed: int, turn: int, player: int) -> random.Random:
    """The stand-in's tie-breaking stream for `player`'s seat in `turn` (like `game_rng`)."""
    return game_rng(seed, turn, f"stand-in {player}")


@dataclass(frozen=True, slots=True)
class _PublicPieces:
    """The public pieces of a view, as `ruleset.conditions.refusal` reads them."""

    board: Board
    destroyed: frozenset[int]
    colonies: Mapping[int, Kind]
    artifacts: frozenset[int]
    unification_cells: frozenset[int]


@dataclass(frozen=True, slots=True)
class _Choice:
    value: float
    fleet: int
    order_type: OrderType
    cell: int


def stand_in_orders(seat: SeatView, rng: random.Random) -> tuple[Order, ...]:
    """The orders the stand-in gives for the seat this turn, in the order to insert them."""
    view = seat.view
    if view.phase is Phase.OVER:
        return ()
    ordered = {order.fleet for order in seat.accepted}
    free = {fid: types for fid, types in seat.allowed.items() if types and fid not in ordered}
    if any(OrderType.REINFORCE in types for types in free.values()):
        return tuple(
            Order(seat.player, fid, int(OrderType.REINFORCE))
            for fid in sorted(free)
            if OrderType.REINFORCE in free[fid]
        )
    slots = ORDERS_PER_TURN - len(seat.accepted)
    if slots <= 0 or not free:
        return ()
    taken = set()
    for order in seat.accepted:
        cell = seat.board.cell_of_object(order.target)
        if cell is not None:
            taken.add(cell)
    choices = sorted(
        _choices(seat, free, taken, rng), key=lambda c: (-c.value, c.fleet, c.cell, c.order_type)
    )
    picked: list[_Choice] = []
    for choice in choices:
        if len(picked) >= slots:
            break
        if picked and choice.value <= 0:
            break  # the first order keeps the game moving; a second only when it is worth it
        if any(
            choice.fleet == p.fleet or choice.cell == p.cell or choice.cell in seat.board.neighbours[p.cell]
            for p in picked
        ):
            continue  # one order per fleet and system (R11), and neither order spoils the other
        picked.append(choice)
    return tuple(Order(seat.player, c.fleet, int(c.order_type), seat.board.system_id(c.cell)) for c in picked)


def _choices(
    seat: SeatView, free: Mapping[int, tuple[OrderType, ...]], taken: set[int], rng: random.Random
) -> list[_Choice]:
    view, board = seat.view, seat.board
    pieces = _PublicPieces(board, view.destroyed, view.colonies, view.artifacts, view.unification)
    leader_on = {f.at: f for f in view.fleets.values() if f.role is Role.LEADER and f.at is not None}
    labels = region_of_each_member(board, view.colonies, leader_on, view.unification)
    leaders_in: dict[int, list[tuple[int, Kind]]] = {}
    for cell, leader in leader_on.items():
        if cell in labels and leader.kind is not None:
            leaders_in.setdefault(labels[cell], []).append((leader.owner, leader.kind))
    fighting = {fid for c in view.conflicts for fid in (c.attacker, c.defender)}
    conflict_regions = {labels[cell] for cell, f in leader_on.items() if f.id in fighting and cell in labels}
    colonies_in: dict[int, list[Kind]] = {}
    for cell, kind in view.colonies.items():
        if cell in labels:
            colonies_in.setdefault(labels[cell], []).append(kind)
    weakest = min(view.scores[:4])

    def bordering(cell: int) -> set[int]:
        return {labels[n] for n in board.neighbours[cell] if n in labels}

    def worth_of_point(region: int, kind: Kind) -> float:
        leaders = leaders_in.get(region, [])
        owner = next((o for o, k in leaders if k is kind), None)
        if owner is None and kind is not Kind.SETTLER:
            owner = next((o for o, k in leaders if k is Kind.SETTLER), None)
            kind = Kind.SETTLER
        if owner is None:
            return NOBODY
        if owner != seat.player:
            return OPPONENT_POINT
        return OWN_POINT + (WEAKEST_BONUS if view.scores[kind] == weakest else 0.0)

    choices: list[_Choice] = []
    for fid in sorted(free):
        fleet = view.fleets[fid]
        for order_type in free[fid]:
            if order_type in (OrderType.COLONIZE, OrderType.COLONIZE_MINING) and fleet.kind is not None:
                for cell in range(board.size):
                    if cell in taken or cell in leader_on or refusal(pieces, order_type, cell) is not None:
                        continue
                    regions = bordering(cell)
                    if len(regions) > 1:
                        # Joining regions scores nothing and may start a war (R16): a last resort,
                        # and never where R14 refuses it at execution.
                        if regions & conflict_regions or sum(1 for r in regions if r in leaders_in) >= 3:
                            continue
                        value = JOINING
                    else:
                        value = worth_of_point(next(iter(regions)), fleet.kind) if regions else NOBODY
                    choices.append(_Choice(value + rng.random() * TIE_BREAK, fid, order_type, cell))
            elif order_type is OrderType.MOVE and fleet.at is None and fleet.kind is not None:
                for cell in range(board.size):
                    if cell in taken or cell in leader_on or refusal(pieces, order_type, cell) is not None:
                        continue
                    if not any(view.colonies.get(n) is Kind.SCIENTIST for n in board.neighbours[cell]):
                        continue  # R9: next to a scientist colony
                    regions = bordering(cell)
                    if len(regions) > 1:
                        continue  # R9: at most one region
                    region = next(iter(regions), None)
                    if region is not None:
                        if region in conflict_regions:
                            continue  # R17: not into a region in a pending conflict
                        if any(k is fleet.kind for _, k in leaders_in.get(region, [])):
                            continue  # it would start a revolt (R17)
                    same_kind = colonies_in.get(region, []).count(fleet.kind) if region is not None else 0
                    value = LEADER_HOME_RETURN + LEADER_PER_COLONY * min(same_kind, 5)
                    choices.append(_Choice(value + rng.random() * TIE_BREAK, fid, order_type, cell))
    return choices
