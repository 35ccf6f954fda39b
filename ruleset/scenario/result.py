"""The JSON result of a played scenario, exactly as scenario-format.md lists it (keys in its order)."""

from __future__ import annotations

from ..kinds import KINDS, Role, Score
from ..regions import group_regions, label_regions
from .setup import Scenario


def result(scenario: Scenario) -> dict[str, object]:
    """The result document: position, players, pool, conflicts, messages, refusals, final result."""
    state = scenario.state
    board = state.board
    names = {p.id: p.name for p in state.players}

    def at(cell: int) -> list[int]:
        return list(board.coords[cell])

    unification = state.unification_cells
    members = (set(state.colonies) | set(state.leader_at.values())) - unification
    regions = group_regions(label_regions(board, members))
    leaders = sorted(
        (
            (state.fleets[fid].owner, state.fleets[fid].colonist_kind.label, cell)
            for fid, cell in state.leader_at.items()
        ),
        key=lambda item: (item[0], item[1]),
    )
    players = []
    for p in state.players:
        hand = {k.label: 0 for k in KINDS}
        bombers = 0
        home = []
        for fleet in state.fleets.values():
            if fleet.owner != p.id:
                continue
            if fleet.role is Role.COLONIST:
                hand[fleet.colonist_kind.label] += 1
            elif fleet.role is Role.BOMBER:
                bombers += 1
            elif fleet.id not in state.leader_at:
                home.append(fleet.colonist_kind.label)
        players.append(
            {
                "name": p.name,
                "scores": {s.label: p.scores[s] for s in Score},
                "hand": hand,
                "bombers": bombers,
                "leaders_home": sorted(home),
            }
        )
    conflicts = [
        {
            "type": "internal" if c.internal else "external",
            "leader": c.kind.label,
            "attacker": names[state.fleets[c.attacker].owner],
            "defender": names[state.fleets[c.defender].owner],
            "attacker_strength": c.attacker_strength,
            "defender_strength": c.defender_strength,
        }
        for c in state.conflicts
    ]
    outcome = None
    if state.result is not None:
        outcome = {
            "final": {names[pid]: score for pid, score in sorted(state.result.final.items())},
            "winners": [names[pid] for pid in state.result.winners],
        }
    order = state.rotation_order()
    return {
        "turn": state.turn + 1,
        "phase": state.phase.value,
        "colonies": [
            {"at": at(cell), "kind": state.colonies[cell].label, "artifact": cell in state.artifacts}
            for cell in sorted(state.colonies)
        ],
        "destroyed": [at(cell) for cell in sorted(state.destroyed)],
        "leaders": [{"owner": names[owner], "kind": kind, "at": at(cell)} for owner, kind, cell in leaders],
        "regions": [[at(cell) for cell in cells] for _, cells in sorted(regions.items())],
        "players": players,
        "pool": {k.label: state.pool[k] for k in KINDS},
        "next_first": names[order[0]] if order else None,
        "pending_conflicts": conflicts,
        "messages": {names[pid]: scenario.messages[pid] for pid in sorted(names)},
        "refused": scenario.refused,
        "result": outcome,
    }
