"""What one player may see (R27): every object, but not opponents' colonist types or scores.

The server serialises these views and nothing else, so hidden information cannot leak through
any frame. The pool is shown only as a total: per-kind counts would let a player deduce the
opponents' hands from the colonies on the board.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .kinds import Kind, Role
from .state import Conflict, GameState, Phase


@dataclass(frozen=True, slots=True)
class FleetView:
    """A fleet as one player sees it: `kind` is None for an opponent's colonist (and bombers)."""

    id: int
    owner: int
    role: Role
    kind: Kind | None
    at: int | None  # board cell of a leader on the board; None = at its owner's home


@dataclass(frozen=True, slots=True)
class PlayerView:
    viewer: int
    turn: int
    phase: Phase
    players: tuple[tuple[int, str], ...]
    scores: tuple[int, int, int, int, int]
    fleets: Mapping[int, FleetView]
    colonies: Mapping[int, Kind]
    artifacts: frozenset[int]
    destroyed: frozenset[int]
    pool_total: int
    conflicts: tuple[Conflict, ...]
    unification: frozenset[int]


def visible_to(state: GameState, viewer: int) -> PlayerView:
    fleets = {}
    for fleet in state.fleets.values():
        hidden = fleet.role is Role.COLONIST and fleet.owner != viewer
        fleets[fleet.id] = FleetView(
            fleet.id, fleet.owner, fleet.role, None if hidden else fleet.kind, state.leader_at.get(fleet.id)
        )
    scores = state.player(viewer).scores if state.has_player(viewer) else (0, 0, 0, 0, 0)
    return PlayerView(
        viewer=viewer,
        turn=state.turn,
        phase=state.phase,
        players=tuple((p.id, p.name) for p in state.players),
        scores=scores,
        fleets=fleets,
        colonies=state.colonies,
        artifacts=state.artifacts,
        destroyed=state.destroyed,
        pool_total=sum(state.pool),
        conflicts=state.conflicts,
        unification=state.unification_cells,
    )
