"""`normal`: the greedy player, a one-turn look-ahead over every order the seat can give.

In a normal turn it places the colonist that scores best for itself (R13: a point for its own
leader, weighted towards its weakest category; a point for an opponent counts against), brings a
leader home from its home system next to a scientist colony when it can, never bombs and never
starts a revolt; it joins regions (which may start a war) only when no other colony is left. The
first order is given even when nothing scores, so a game of greedy players still ends (the pool
runs out, R24). In a combat turn it reinforces with every colonist it may. Ties are broken by the
seeded stream it is handed, so a seat's orders follow from its view and that stream.

It keeps R11's limits (two orders, one per fleet, one per system) and refuses targets with the
ruleset's own static conditions (`ruleset.conditions.refusal`, what `check_order` runs), so
`check_order` accepts every order it gives. It also avoids what would make an order fail at
execution by its own doing (a system with a leader on it, a colony joining two regions whose
war R14 refuses, a move into a region whose leader is in a pending conflict).

`choices` (every scored single order) and `pick` (the best compatible ones) are shared with
`easy` (which picks worse on purpose) and `hard` (which searches among the best).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass

from ..conditions import refusal
from ..kinds import Kind, Role
from ..orders import ORDERS_PER_TURN, Order, OrderType
from ..regions import region_of_each_member
from ..seat import SeatView, public_pieces
from ..state import Phase

# What an order is worth to the greedy player, in points for itself.
OWN_POINT = 1.0  # a point for one of its leaders
WEAKEST_BONUS = 0.5  # extra when the point lifts its weakest category (R25: the minimum counts)
OPPONENT_POINT = -0.5  # a point for an opponent's leader
NOBODY = 0.05  # a colony that scores for nobody
JOINING = -1.0  # a colony that joins regions (it may start a war): only when nothing else is left
LEADER_HOME_RETURN = 0.9  # a leader brought onto the board from its home system
LEADER_PER_COLONY = 0.1  # per colony of the leader's kind in the region it joins
TIE_BREAK = 1e-3  # the seeded jitter between orders worth the same


@dataclass(frozen=True, slots=True)
class Choice:
    """One order the seat could give, and what the greedy player thinks it is worth."""

    value: float
    fleet: int
    order_type: OrderType
    cell: int

    def order(self, seat: SeatView) -> Order:
        return Order(seat.player, self.fleet, int(self.order_type), seat.board.system_id(self.cell))


def free_fleets(seat: SeatView) -> dict[int, tuple[OrderType, ...]]:
    """The seat's fleets that take an order now and have none yet this turn."""
    ordered = {order.fleet for order in seat.accepted}
    return {fid: types for fid, types in seat.allowed.items() if types and fid not in ordered}


def reinforcements(seat: SeatView) -> tuple[Order, ...]:
    """Every colonist the seat may send to the running conflict (R18), in ascending id."""
    free = free_fleets(seat)
    return tuple(
        Order(seat.player, fid, int(OrderType.REINFORCE))
        for fid in sorted(free)
        if OrderType.REINFORCE in free[fid]
    )


def is_combat_turn(seat: SeatView) -> bool:
    return any(OrderType.REINFORCE in types for types in free_fleets(seat).values())


def slots_left(seat: SeatView) -> int:
    return ORDERS_PER_TURN - len(seat.accepted)


def taken_cells(seat: SeatView) -> set[int]:
    """Systems the seat's accepted orders of this turn already target (R11)."""
    taken = set()
    for order in seat.accepted:
        cell = seat.board.cell_of_object(order.target)
        if cell is not None:
            taken.add(cell)
    return taken


def compatible(seat: SeatView, choice: Choice, picked: list[Choice]) -> bool:
    """One order per fleet and system (R11), and neither order spoils the other (next door)."""
    neighbours = seat.board.neighbours
    return not any(
        choice.fleet == p.fleet or choice.cell == p.cell or choice.cell in neighbours[p.cell] for p in picked
    )


def pick(seat: SeatView, ranked: list[Choice], slots: int) -> list[Choice]:
    """The best compatible choices: the first always (the game moves on), a second when it is worth it."""
    picked: list[Choice] = []
    for choice in ranked:
        if len(picked) >= slots:
            break
        if picked and choice.value <= 0:
            break
        if compatible(seat, choice, picked):
            picked.append(choice)
    return picked


def ranked_choices(seat: SeatView, rng: random.Random) -> list[Choice]:
    """Every single order the seat may give now, best first (ties broken by `rng`)."""
    free = free_fleets(seat)
    if not free or slots_left(seat) <= 0:
        return []
    return sorted(
        choices(seat, free, taken_cells(seat), rng), key=lambda c: (-c.value, c.fleet, c.cell, c.order_type)
    )


def normal_orders(seat: SeatView, rng: random.Random) -> tuple[Order, ...]:
    """The greedy player's orders for the seat this turn, in the order to insert them."""
    if seat.view.phase is Phase.OVER:
        return ()
    if is_combat_turn(seat):
        return reinforcements(seat)
    picked = pick(seat, ranked_choices(seat, rng), slots_left(seat))
    return tuple(c.order(seat) for c in picked)


def choices(
    seat: SeatView, free: Mapping[int, tuple[OrderType, ...]], taken: set[int], rng: random.Random
) -> list[Choice]:
    """Every colonization and leader move the seat's free fleets may give, each with its value."""
    view, board = seat.view, seat.board
    pieces = public_pieces(seat)
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

    found: list[Choice] = []
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
                    found.append(Choice(value + rng.random() * TIE_BREAK, fid, order_type, cell))
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
                    found.append(Choice(value + rng.random() * TIE_BREAK, fid, order_type, cell))
    return found
