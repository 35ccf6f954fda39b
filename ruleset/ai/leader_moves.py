"""Leader moves the greedy player does not consider, offered to `hard`'s search as candidates.

* **Collecting artifacts (R22)**: the seat's merchant leader (at home or on the board) moved next
  to a region that holds two or more artifacts and no merchant leader; at the end of the turn its
  owner takes all of them but one, and artifacts are wildcards in the final score (R25).
* **Relocating a leader** already on the board (R9: a leader may move from one system to
  another) into a region where more colonies of its kind stand than where it is.
* **Joining regions for their artifacts** (`artifact_joins`): a colony that merges regions with
  no war (no leader kind on two sides, R16; not three leader regions, R14; no region in a
  pending conflict) into one that holds two or more artifacts and the seat's merchant leader as
  its only merchant, which collects them at the end of the turn.

Each is a `greedy.Choice` valued like the greedy player's orders, and each keeps the conditions
`check_order` and R9 put on a move (habitable, empty, next to a scientist colony, bordering at
most one region; never into a region whose leader is in a pending conflict, never a revolt).
"""

from __future__ import annotations

import random

from ..conditions import refusal
from ..kinds import Kind, Role
from ..orders import OrderType
from ..regions import region_of_each_member
from ..seat import SeatView, public_pieces
from ..visibility import FleetView
from .greedy import Choice, free_fleets, taken_cells

ARTIFACT_POINT = 1.5  # per artifact the move collects
RELOCATION_PER_COLONY = 0.2  # per colony of its kind more than where the leader stands


def leader_moves(seat: SeatView, rng: random.Random) -> list[Choice]:
    view, board = seat.view, seat.board
    free = free_fleets(seat)
    movers = [
        view.fleets[fid]
        for fid, types in free.items()
        if OrderType.MOVE in types and view.fleets[fid].role is Role.LEADER
    ]
    if not movers:
        return []
    pieces = public_pieces(seat)
    leader_on = {f.at: f for f in view.fleets.values() if f.role is Role.LEADER and f.at is not None}
    labels = region_of_each_member(board, view.colonies, leader_on, view.unification)
    kinds_in: dict[int, set[Kind]] = {}
    for cell, leader in leader_on.items():
        if cell in labels and leader.kind is not None:
            kinds_in.setdefault(labels[cell], set()).add(leader.kind)
    fighting = {fid for c in view.conflicts for fid in (c.attacker, c.defender)}
    in_conflict = {labels[cell] for cell, f in leader_on.items() if f.id in fighting and cell in labels}
    artifacts_in: dict[int, int] = {}
    for cell in view.artifacts:
        if cell in labels:
            artifacts_in[labels[cell]] = artifacts_in.get(labels[cell], 0) + 1
    colonies_in: dict[int, list[int]] = {}
    for cell, kind in view.colonies.items():
        if cell in labels:
            colonies_in.setdefault(labels[cell], [0, 0, 0, 0])[kind] += 1
    taken = taken_cells(seat)
    targets: list[tuple[int, int]] = []  # (cell, the one region it borders)
    for cell in range(board.size):
        if cell in taken or cell in leader_on or refusal(pieces, OrderType.MOVE, cell) is not None:
            continue
        if not any(view.colonies.get(n) is Kind.SCIENTIST for n in board.neighbours[cell]):
            continue
        around = {labels[n] for n in board.neighbours[cell] if n in labels}
        if len(around) == 1:
            targets.append((cell, next(iter(around))))
    found: list[Choice] = []
    for leader in movers:
        if leader.kind is None or leader.id in fighting:
            continue
        kind = leader.kind
        here = labels.get(leader.at) if leader.at is not None else None
        here_count = colonies_in.get(here, [0, 0, 0, 0])[kind] if here is not None else 0
        for cell, region in targets:
            if region in in_conflict or region == here:
                continue
            if kind in kinds_in.get(region, set()):
                continue  # a revolt (R17)
            if kind is Kind.MERCHANT and artifacts_in.get(region, 0) >= 2:
                value = ARTIFACT_POINT * (artifacts_in[region] - 1)
            elif leader.at is not None:
                gain = colonies_in.get(region, [0, 0, 0, 0])[kind] - here_count
                if gain <= 1:
                    continue
                value = RELOCATION_PER_COLONY * min(gain, 6)
            else:
                continue  # from home: the greedy player's own moves cover it
            found.append(Choice(value + rng.random() * 1e-3, leader.id, OrderType.MOVE, cell))
    found.sort(key=lambda c: (-c.value, c.fleet, c.cell))
    return found


def artifact_joins(seat: SeatView, rng: random.Random) -> list[Choice]:
    """Colonies that merge regions, without a war, into one where the seat's merchant collects."""
    view, board = seat.view, seat.board
    free = free_fleets(seat)
    colonists: dict[OrderType, int] = {}  # order type -> the seat's first free colonist that takes it
    for fid in sorted(free):
        fleet = view.fleets[fid]
        if fleet.role is not Role.COLONIST:
            continue
        for order_type in free[fid]:
            if order_type in (OrderType.COLONIZE, OrderType.COLONIZE_MINING):
                colonists.setdefault(order_type, fid)
    if not colonists:
        return []
    leader_on = {f.at: f for f in view.fleets.values() if f.role is Role.LEADER and f.at is not None}
    labels = region_of_each_member(board, view.colonies, leader_on, view.unification)
    leaders_in: dict[int, list[FleetView]] = {}
    for cell, leader in leader_on.items():
        if cell in labels:
            leaders_in.setdefault(labels[cell], []).append(leader)
    mine = {
        labels[f.at]
        for f in view.fleets.values()
        if f.role is Role.LEADER and f.owner == seat.player and f.kind is Kind.MERCHANT and f.at in labels
    }
    if not mine:
        return []
    fighting = {fid for c in view.conflicts for fid in (c.attacker, c.defender)}
    in_conflict = {labels[cell] for cell, f in leader_on.items() if f.id in fighting and cell in labels}
    artifacts_in: dict[int, int] = {}
    for cell in view.artifacts:
        if cell in labels:
            artifacts_in[labels[cell]] = artifacts_in.get(labels[cell], 0) + 1
    pieces = public_pieces(seat)
    taken = taken_cells(seat)
    found: list[Choice] = []
    for cell in range(board.size):
        if cell in taken or cell in leader_on:
            continue
        around = {labels[n] for n in board.neighbours[cell] if n in labels}
        if len(around) < 2 or not around & mine or around & in_conflict:
            continue
        artifacts = sum(artifacts_in.get(r, 0) for r in around)
        if artifacts < 2:
            continue
        kinds = [leader.kind for r in around for leader in leaders_in.get(r, [])]
        if len(kinds) != len(set(kinds)):
            continue  # a leader kind on two sides: a war (R16), no merge this turn
        if sum(1 for r in around if leaders_in.get(r)) >= 3:
            continue  # R14
        for order_type, fid in colonists.items():
            if refusal(pieces, order_type, cell) is None:
                value = ARTIFACT_POINT * (artifacts - 1)
                found.append(Choice(value + rng.random() * 1e-3, fid, order_type, cell))
    found.sort(key=lambda c: (-c.value, c.fleet, c.cell))
    return found
