"""Starting and resolving conflicts (R16–R19a, R21)."""

from __future__ import annotations

from dataclasses import replace

from . import messages as text
from .board import ARTIFACT
from .execution import TurnLog
from .kinds import Kind
from .position import Position
from .state import Conflict


def still_valid(position: Position, conflict: Conflict) -> bool:
    """R19: both leaders on the board, and still facing each other."""
    a = position.leader_at.get(conflict.attacker)
    d = position.leader_at.get(conflict.defender)
    if a is None or d is None:
        return False
    labels = position.labels()
    if conflict.internal:
        return a in labels and labels.get(a) == labels.get(d)
    around = position.bordering_regions(conflict.unification)
    return labels.get(a) in around and labels.get(d) in around and labels.get(a) != labels.get(d)


def initial_strength(position: Position, conflict: Conflict, leader: int) -> int:
    """Internal: adjacent scientist colonies. External: colonies of the kind in the leader's region."""
    cell = position.leader_at[leader]
    if conflict.internal:
        return sum(1 for n in position.neighbours[cell] if position.colonies.get(n) is Kind.SCIENTIST)
    labels = position.labels()
    label = labels[cell]
    return sum(1 for c, lab in labels.items() if lab == label and position.colonies.get(c) is conflict.kind)


def start_next_conflict(position: Position, names: dict[int, str], log: TurnLog) -> bool:
    """Discard queued conflicts that are no longer valid; start the first valid one (R19).

    Returns True when a conflict started, i.e. the next turn is a combat turn.
    """
    while position.conflicts:
        conflict = position.conflicts[0]
        if not still_valid(position, conflict):
            position.conflicts.pop(0)
            position.conflicts_changed()
            log.note(
                "conflict discarded",
                fleet=conflict.attacker,
                cell=conflict.unification,
                detail=conflict.kind.label,
            )
            continue
        a = initial_strength(position, conflict, conflict.attacker)
        d = initial_strength(position, conflict, conflict.defender)
        position.conflicts[0] = replace(conflict, attacker_strength=a, defender_strength=d)
        attacker, defender = position.owner(conflict.attacker), position.owner(conflict.defender)
        body = text.combat_starts(conflict.internal, names[attacker], a, names[defender], d)
        for player_id in names:
            log.tell(player_id, text.COMBAT, body)
        log.note(
            "conflict started",
            attacker,
            conflict.attacker,
            conflict.unification,
            f"{'internal' if conflict.internal else 'external'} {conflict.kind.label} {a}:{d}",
        )
        return True
    return False


def resolve_conflict(
    position: Position, reinforcements: dict[int, int], names: dict[int, str], log: TurnLog
) -> tuple[int, int]:
    """Fight the running conflict (R18): returns (winner's player id, winner's total strength)."""
    # The conflict stays queued until its results are applied: while it is, its unification
    # system is not a region member and the two sides remain separate regions (R16, R19).
    conflict = position.conflicts[0]
    attacker_owner = position.owner(conflict.attacker)
    defender_owner = position.owner(conflict.defender)
    attack = conflict.attacker_strength + reinforcements.get(attacker_owner, 0)
    defence = conflict.defender_strength + reinforcements.get(defender_owner, 0)
    if attack > defence:
        winner, loser, strength = conflict.attacker, conflict.defender, attack
    else:  # a tie goes to the defender (ruling, BOARD)
        winner, loser, strength = conflict.defender, conflict.attacker, defence
    winner_owner = position.owner(winner)

    if conflict.internal:
        position.send_home(loser)
        position.scores[winner_owner][Kind.SCIENTIST] += 1
        removed = 0
    else:
        labels = position.labels()
        losing_region = labels[position.leader_at[loser]]
        # Artifact systems (terrain 'A', with or without their artifact) are never removed (R16).
        doomed = [
            cell
            for cell, label in labels.items()
            if label == losing_region
            and position.colonies.get(cell) is conflict.kind
            and position.board.terrain[cell] != ARTIFACT
        ]
        position.send_home(loser)
        for cell in doomed:
            position.remove_colony(cell)
        removed = len(doomed)
        position.scores[winner_owner][conflict.kind] += 1 + removed
    position.conflicts.pop(0)
    position.conflicts_changed()
    log.note(
        "conflict resolved",
        winner_owner,
        winner,
        conflict.unification,
        f"{conflict.kind.label} {attack}:{defence} removed {removed}",
    )
    for withdrawn in position.withdraw_unsupported_leaders():
        log.note("leader sent home", position.owner(withdrawn), withdrawn, detail="unsupported")
    return winner_owner, strength
