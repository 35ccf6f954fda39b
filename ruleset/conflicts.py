"""Starting and resolving conflicts (R16–R19a, R21), and the messages that announce them."""

from __future__ import annotations

from dataclasses import replace

from . import messages as text
from .board import ARTIFACT
from .kinds import Kind
from .messages import Phrase, Side
from .position import Position
from .state import Conflict
from .turn_log import TurnLog


def still_valid(position: Position, conflict: Conflict) -> bool:
    """R19: both leaders on the board, and still facing each other."""
    a = position.leader_at.get(conflict.attacker)
    d = position.leader_at.get(conflict.defender)
    if a is None or d is None:
        return False
    labels = position.labels()
    if conflict.internal:
        return a in labels and labels.get(a) == labels.get(d)
    assert conflict.unification is not None
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


def _side(position: Position, leader: int, strength: int) -> Side:
    return Side(
        position.player(position.owner(leader)),
        position.piece(leader),
        position.system(position.leader_at[leader]),
        strength,
    )


def start_next_conflict(position: Position, log: TurnLog) -> bool:
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
        if not log.telling:  # no message and no event to keep (`TurnLog.note` keeps none either)
            return True
        unification = None if conflict.unification is None else position.system(conflict.unification)
        body = text.combat_starts(
            conflict.internal,
            conflict.kind,
            _side(position, conflict.attacker, a),
            _side(position, conflict.defender, d),
            unification,
        )
        log.tell_all(sorted(position.names), text.COMBAT, body)
        log.note(
            "conflict started",
            position.owner(conflict.attacker),
            conflict.attacker,
            conflict.unification,
            f"{'internal' if conflict.internal else 'external'} {conflict.kind.label} {a}:{d}",
        )
        return True
    return False


def resolve_conflict(position: Position, reinforcements: dict[int, int], log: TurnLog) -> Phrase | None:
    """Fight the running conflict (R18) and apply the result; the "Combat Complete!" body (None
    when the log tells nothing)."""
    # The conflict stays queued until its results are applied: while it is, its unification
    # system is not a region member and the two sides remain separate regions (R16, R19).
    conflict = position.conflicts[0]
    assert conflict.attacker_strength is not None and conflict.defender_strength is not None
    attacker_owner = position.owner(conflict.attacker)
    defender_owner = position.owner(conflict.defender)
    attack = conflict.attacker_strength + reinforcements.get(attacker_owner, 0)
    defence = conflict.defender_strength + reinforcements.get(defender_owner, 0)
    # A tie goes to the defender (ruling, BOARD).
    loser_id = conflict.defender if attack > defence else conflict.attacker
    if log.telling:
        if attack > defence:
            winner, loser = (
                _side(position, conflict.attacker, attack),
                _side(position, conflict.defender, defence),
            )
        else:
            winner, loser = (
                _side(position, conflict.defender, defence),
                _side(position, conflict.attacker, attack),
            )
    winner_owner = defender_owner if loser_id == conflict.attacker else attacker_owner

    doomed: list[int] = []
    if conflict.internal:
        position.send_home(loser_id)
        gain = 1
        position.scores[winner_owner][Kind.SCIENTIST] += gain
    else:
        labels = position.labels()
        losing_region = labels[position.leader_at[loser_id]]
        # Artifact systems (terrain 'A', with or without their artifact) are never removed (R16).
        doomed = sorted(
            cell
            for cell, label in labels.items()
            if label == losing_region
            and position.colonies.get(cell) is conflict.kind
            and position.board.terrain[cell] != ARTIFACT
        )
        position.send_home(loser_id)
        position.remove_colonies(doomed)
        gain = 1 + len(doomed)
        position.scores[winner_owner][conflict.kind] += gain
    position.conflicts.pop(0)
    position.conflicts_changed()
    log.note(
        "conflict resolved",
        winner_owner,
        conflict.defender if loser_id == conflict.attacker else conflict.attacker,
        conflict.unification,
        f"{conflict.kind.label} {attack}:{defence} removed {len(doomed)}",
    )
    went_home = position.withdraw_unsupported_leaders()
    for leader, left in went_home:
        log.note("leader sent home", position.owner(leader), leader, left, "unsupported")
    if not log.telling:
        return None
    return text.battle_won(
        winner,
        loser,
        conflict.kind,
        conflict.internal,
        [position.system(cell) for cell in doomed],
        gain,
        [position.piece(fid) for fid, _ in went_home],
    )
