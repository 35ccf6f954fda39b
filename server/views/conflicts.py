"""A conflict as a document: rendered once, for the web pages, the JSON API and the notifications.

`conflict_document(snapshot, index)` is the conflict with both sides (the game page and
`/api/games/NAME`); `conflicts_of(snapshot, player)` is the same documents seen from one side,
for the player who is in them (the "conflict" notification).
"""

from __future__ import annotations

from typing import Any

from ruleset import Phase
from server.model.snapshot import GameSnapshot


def conflict_document(snapshot: GameSnapshot, index: int) -> dict[str, Any]:
    """The `index`-th queued conflict (0 is fought first; `running` in a combat turn)."""
    state = snapshot.state
    conflict = state.conflicts[index]
    board = state.board

    def side(fleet_id: int, strength: int | None) -> dict[str, Any]:
        fleet = state.fleets[fleet_id]
        at = state.leader_at.get(fleet_id)
        return {
            "fleet": fleet_id,
            "owner": fleet.owner,
            "owner_name": state.player(fleet.owner).name if state.has_player(fleet.owner) else "",
            "at": None if at is None else board.system_id(at),
            "strength": strength,
        }

    return {
        "internal": conflict.internal,
        "kind": conflict.kind.label,
        "running": index == 0 and state.phase is Phase.COMBAT,
        "reinforcement_kind": conflict.reinforcement_kind.label,
        "unification": None if conflict.unification is None else board.system_id(conflict.unification),
        "attacker": side(conflict.attacker, conflict.attacker_strength),
        "defender": side(conflict.defender, conflict.defender_strength),
    }


def conflicts_of(snapshot: GameSnapshot, player: int) -> list[dict[str, Any]]:
    """The conflicts `player` is in, each from their side: a war or a revolt, of which leaders,
    their role, the opponent's name, whether it is fought this turn, the unification system."""
    found = []
    for index in range(len(snapshot.state.conflicts)):
        document = conflict_document(snapshot, index)
        attacker, defender = document["attacker"], document["defender"]
        if player not in (attacker["owner"], defender["owner"]):
            continue
        mine, theirs = (attacker, defender) if attacker["owner"] == player else (defender, attacker)
        found.append(
            {
                "type": "revolt" if document["internal"] else "war",
                "leader_kind": document["kind"],
                "role": "attacker" if mine is attacker else "defender",
                "opponent": theirs["owner_name"],
                "running": document["running"],
                "unification_system": document["unification"],
            }
        )
    return found
