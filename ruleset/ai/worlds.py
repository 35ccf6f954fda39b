"""Determinization: full game states that agree with everything a seat can see (R27).

What the seat cannot see is the kinds of its opponents' colonist fleets and of the colonists
left in the pool (it sees their numbers), and its opponents' scores. A *world* fills these in:
the unseen colonists are the full pool minus the seat's own hand and the colonies on the board
that came from the pool (every colony but the artifact systems'); they are shuffled and dealt to
the opponents' hidden fleets first and to the pool next (what is left had been removed from the
game: lost wars, bombings, reinforcements). Opponents' scores are unknown and start at zero, so
a search judges what a playout *gains* them. The same view and stream give the same world, and
two views that differ only in what the seat cannot see cannot give different worlds.
"""

from __future__ import annotations

import random

from ..board import ARTIFACT
from ..kinds import FULL_POOL, KINDS, Kind, Role
from ..seat import SeatView
from ..state import Fleet, GameState, Player


def unseen_kinds(seat: SeatView) -> list[int]:
    """How many colonists of each kind the seat cannot place: not in its hand nor on the board."""
    view, terrain = seat.view, seat.board.terrain
    counts = list(FULL_POOL)
    for fleet in view.fleets.values():
        if fleet.owner == seat.player and fleet.role is Role.COLONIST and fleet.kind is not None:
            counts[fleet.kind] -= 1
    for cell, kind in view.colonies.items():
        if terrain[cell] != ARTIFACT:
            counts[kind] -= 1
    return [max(0, n) for n in counts]


def sample_world(seat: SeatView, rng: random.Random) -> GameState:
    """One full state consistent with the seat's view, the hidden kinds drawn with `rng`."""
    view = seat.view
    hidden = sorted(
        f.id
        for f in view.fleets.values()
        if f.role is Role.COLONIST and f.kind is None and f.owner != seat.player
    )
    counts = unseen_kinds(seat)
    bag = [kind for kind in KINDS for _ in range(counts[kind])]
    need = len(hidden) + view.pool_total
    while len(bag) < need:  # more colonists than the counts allow (a view from an unusual set-up)
        bag.append(KINDS[rng.randrange(len(KINDS))])
    rng.shuffle(bag)
    dealt = dict(zip(hidden, bag, strict=False))
    pool = [0, 0, 0, 0]
    for drawn in bag[len(hidden) : need]:
        pool[drawn] += 1
    fleets: dict[int, Fleet] = {}
    leader_at: dict[int, int] = {}
    for fid in sorted(view.fleets):
        seen = view.fleets[fid]
        dealt_kind = dealt.get(fid, seen.kind)
        fleets[fid] = Fleet(fid, seen.owner, seen.role, None if dealt_kind is None else Kind(dealt_kind))
        if seen.at is not None:
            leader_at[fid] = seen.at
    players = tuple(
        Player(pid, name, 0, 0, view.scores if pid == seat.player else (0, 0, 0, 0, 0))
        for pid, name in view.players
    )
    ids = [pid for pid, _ in view.players]
    rotation = ids.index(seat.rotation[0]) if seat.rotation and seat.rotation[0] in ids else 0
    return GameState(
        board=seat.board,
        seed=0,
        turn=view.turn,
        phase=view.phase,
        rotation=rotation,
        players=players,
        fleets=fleets,
        leader_at=leader_at,
        colonies=dict(view.colonies),
        artifacts=view.artifacts,
        destroyed=view.destroyed,
        pool=(pool[0], pool[1], pool[2], pool[3]),
        conflicts=view.conflicts,
        next_object_id=max([seat.board.first_free_id, *fleets]) + 1,
    )
