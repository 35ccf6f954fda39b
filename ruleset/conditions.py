"""The conditions an order's target system must meet, in one table (R7a, R9, R10, R14, R17, R20).

Every condition is either

* STATIC: once it fails, no other order of the same turn can make it pass (a destroyed system
  stays destroyed, a colony is never removed in a normal turn but by bombing, which destroys the
  system, terrain never changes). Probe Order and Insert Order refuse an order that fails one
  (`check_order`, Fail code 3, R7a), and execution checks it again: there it can newly fail only
  because an earlier order of the turn changed the target, and the failure message says which;
* DYNAMIC: earlier orders of the turn can change it either way (a leader standing on the target
  may move away, a scientist colony may appear next to it, regions may grow or merge), so it is
  checked only when the order executes.

`CONDITIONS[order_type]` lists them in the order they are checked; the first that fails is the
reason. Submission (`ruleset.orders.check_order`), execution (`ruleset.execution`) and the
stalemate end (R24a, `ruleset.ending`) all read this table, so a rule is written once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Set
from dataclasses import dataclass
from enum import Enum
from typing import Protocol

from . import messages as text
from .board import UNINHABITABLE, Board
from .kinds import Kind
from .messages import Phrase
from .order_types import OrderType
from .position import Position
from .state import Fleet


class Check(Enum):
    """When a condition is checked."""

    STATIC = "static"  # at submission (R7a) and at execution
    DYNAMIC = "dynamic"  # at execution only


class Pieces(Protocol):
    """What static conditions read: both a `GameState` (at submission) and a `Position` (while a
    turn is resolved) provide it."""

    @property
    def board(self) -> Board: ...
    @property
    def destroyed(self) -> Set[int]: ...
    @property
    def colonies(self) -> Mapping[int, Kind]: ...
    @property
    def artifacts(self) -> Set[int]: ...
    @property
    def unification_cells(self) -> Set[int]: ...


@dataclass(frozen=True, slots=True)
class StaticCondition:
    """A condition no order of the turn can undo once it fails.

    `refusal(system)` is the reason given at submission ("3, 2 is already colonized");
    `changed(system, by)` the reason at execution when an earlier order of the turn made it fail
    (`by` names who), or None when no order can make it fail (terrain, artifacts).
    """

    name: str
    fails: Callable[[Pieces, int], bool]
    refusal: Callable[[Phrase], Phrase]
    changed: Callable[[Phrase, Phrase], Phrase] | None = None

    @property
    def check(self) -> Check:
        return Check.STATIC


@dataclass(frozen=True, slots=True)
class DynamicCondition:
    """A condition checked when the order executes: `reason(position, cell, fleet)` is called
    only when `fails(position, cell, fleet)`; the fleet's owner reads the reason."""

    name: str
    fails: Callable[[Position, int, Fleet], bool]
    reason: Callable[[Position, int, Fleet], Phrase]

    @property
    def check(self) -> Check:
        return Check.DYNAMIC


Condition = StaticCondition | DynamicCondition


# -- static ------------------------------------------------------------------------------------

DESTROYED = StaticCondition(
    "destroyed", lambda pieces, cell: cell in pieces.destroyed, text.is_destroyed, text.destroyed_this_turn
)
ALREADY_DESTROYED = StaticCondition(
    "destroyed",
    lambda pieces, cell: cell in pieces.destroyed,
    text.is_already_destroyed,
    text.destroyed_this_turn,
)
UNIFICATION = StaticCondition(
    "pending unification",
    lambda pieces, cell: cell in pieces.unification_cells,
    text.is_unification,
    text.unification_this_turn,
)
COLONIZED = StaticCondition(
    "colonized", lambda pieces, cell: cell in pieces.colonies, text.is_colonized, text.colonized_this_turn
)
UNINHABITABLE_FOR_COLONISTS = StaticCondition(
    "uninhabitable",
    lambda pieces, cell: pieces.board.terrain[cell] == UNINHABITABLE,
    text.is_uninhabitable_for_colonists,
)
HABITABLE_FOR_MINERS = StaticCondition(
    "habitable",
    lambda pieces, cell: pieces.board.terrain[cell] != UNINHABITABLE,
    text.is_habitable_for_miners,
)
UNINHABITABLE_FOR_LEADERS = StaticCondition(
    "uninhabitable",
    lambda pieces, cell: pieces.board.terrain[cell] == UNINHABITABLE,
    text.is_uninhabitable_for_leaders,
)
ARTIFACT = StaticCondition("artifact", lambda pieces, cell: cell in pieces.artifacts, text.carries_artifact)

# -- dynamic -----------------------------------------------------------------------------------


def _leader_there(position: Position, cell: int, fleet: Fleet) -> bool:
    return cell in position.leader_on


def _leader_there_reason(position: Position, cell: int, fleet: Fleet) -> Phrase:
    leader = position.leader_on[cell]
    by = position.piece(leader, viewer=fleet.owner)
    if leader in position.arrived:
        return text.taken_this_turn(position.system(cell), by)
    return text.occupied(position.system(cell), by)


def _joins_three_leader_regions(position: Position, cell: int, fleet: Fleet) -> bool:
    """R14: a colony may not border three or more regions that hold leaders."""
    bordering = position.bordering_regions(cell)
    if len(bordering) < 3:
        return False
    return sum(1 for label in bordering if position.leaders_in(label)) >= 3


def _merging_conflict_leader(position: Position, cell: int) -> int | None:
    """R14, R18.1: the leader in a pending conflict whose region a merging colony would join."""
    if not position.conflicts:
        return None
    bordering = position.bordering_regions(cell)
    if len(bordering) < 2:
        return None
    for label in sorted(bordering):
        leader = position.conflict_leader_in(label)
        if leader is not None:
            return leader
    return None


def _merges_conflict_region(position: Position, cell: int, fleet: Fleet) -> bool:
    return bool(position.conflicts) and _merging_conflict_leader(position, cell) is not None


def _merges_conflict_region_reason(position: Position, cell: int, fleet: Fleet) -> Phrase:
    leader = _merging_conflict_leader(position, cell)
    assert leader is not None
    return text.merges_conflict_region(position.piece(leader, viewer=fleet.owner))


def _joins_regions(position: Position, cell: int, fleet: Fleet) -> bool:
    """R9: a leader may border at most one region (counted after lifting it)."""
    return len(position.bordering_regions(cell)) > 1


def _joins_regions_reason(position: Position, cell: int, fleet: Fleet) -> Phrase:
    return text.joins_regions(len(position.bordering_regions(cell)))


def _no_scientist(position: Position, cell: int, fleet: Fleet) -> bool:
    return not position.borders_scientist(cell)


def _no_scientist_reason(position: Position, cell: int, fleet: Fleet) -> Phrase:
    return text.no_scientist_next_to_it()


def _region_conflict_leader(position: Position, cell: int) -> int | None:
    """R17: the leader in a pending conflict in the one region a Move would enter."""
    bordering = position.bordering_regions(cell)
    if len(bordering) != 1:
        return None
    return position.conflict_leader_in(next(iter(bordering)))


def _region_in_conflict(position: Position, cell: int, fleet: Fleet) -> bool:
    return _region_conflict_leader(position, cell) is not None


def _region_in_conflict_reason(position: Position, cell: int, fleet: Fleet) -> Phrase:
    leader = _region_conflict_leader(position, cell)
    assert leader is not None
    return text.region_in_conflict(position.piece(leader, viewer=fleet.owner))


LEADER_THERE = DynamicCondition("leader there", _leader_there, _leader_there_reason)
THREE_LEADER_REGIONS = DynamicCondition(
    "three leader regions", _joins_three_leader_regions, lambda p, c, f: text.joins_three_leader_regions()
)
MERGES_CONFLICT_REGION = DynamicCondition(
    "merges a pending conflict", _merges_conflict_region, _merges_conflict_region_reason
)
JOINS_REGIONS = DynamicCondition("joins regions", _joins_regions, _joins_regions_reason)
NO_SCIENTIST = DynamicCondition("no scientist", _no_scientist, _no_scientist_reason)
REGION_IN_CONFLICT = DynamicCondition("region in conflict", _region_in_conflict, _region_in_conflict_reason)

# -- the table ---------------------------------------------------------------------------------

_COLONY_PLACE = (DESTROYED, UNIFICATION, COLONIZED)
_COLONY_REGIONS = (LEADER_THERE, THREE_LEADER_REGIONS, MERGES_CONFLICT_REGION)

CONDITIONS: Mapping[OrderType, tuple[Condition, ...]] = {
    # R10, R14
    OrderType.COLONIZE: (*_COLONY_PLACE, UNINHABITABLE_FOR_COLONISTS, *_COLONY_REGIONS),
    OrderType.COLONIZE_MINING: (*_COLONY_PLACE, HABITABLE_FOR_MINERS, *_COLONY_REGIONS),
    # R9, R17 (checked after the moving leader is lifted from where it stands)
    OrderType.MOVE: (
        DESTROYED,
        UNIFICATION,
        COLONIZED,
        UNINHABITABLE_FOR_LEADERS,
        LEADER_THERE,
        JOINS_REGIONS,
        NO_SCIENTIST,
        REGION_IN_CONFLICT,
    ),
    # R20
    OrderType.ATTACK: (ALREADY_DESTROYED, ARTIFACT, UNIFICATION),
    OrderType.REINFORCE: (),
}


_STATIC: Mapping[OrderType, tuple[StaticCondition, ...]] = {
    order_type: tuple(c for c in conditions if isinstance(c, StaticCondition))
    for order_type, conditions in CONDITIONS.items()
}
_DYNAMIC: Mapping[OrderType, tuple[DynamicCondition, ...]] = {
    order_type: tuple(c for c in conditions if isinstance(c, DynamicCondition))
    for order_type, conditions in CONDITIONS.items()
}
# Every list checks its static conditions first, so the two halves keep the table's order.
assert all(CONDITIONS[t] == _STATIC[t] + _DYNAMIC[t] for t in CONDITIONS)


# The same tables as (condition, its test) pairs, for the checks that run for every order.
_STATIC_TESTS = {t: tuple((c, c.fails) for c in conditions) for t, conditions in _STATIC.items()}
_DYNAMIC_TESTS = {t: tuple((c, c.fails) for c in conditions) for t, conditions in _DYNAMIC.items()}


def refusal(pieces: Pieces, order_type: OrderType, cell: int) -> Phrase | None:
    """The reason to refuse an order at submission: the first static condition it fails (R7a)."""
    for condition, fails in _STATIC_TESTS[order_type]:
        if fails(pieces, cell):
            return condition.refusal(text.system(pieces.board, cell))
    return None


def failure(
    position: Position, order_type: OrderType, fleet: Fleet, cell: int
) -> tuple[Condition, Phrase] | None:
    """The first condition the order fails as the position stands now, and the reason, or None."""
    for static in _STATIC[order_type]:
        if static.fails(position, cell):
            target = position.system(cell)
            by = position.changer(cell)
            if by is not None and static.changed is not None:
                return static, static.changed(target, by)
            return static, static.refusal(target)
    for dynamic in _DYNAMIC[order_type]:
        if dynamic.fails(position, cell, fleet):
            return dynamic, dynamic.reason(position, cell, fleet)
    return None


def failed_condition(position: Position, order_type: OrderType, fleet: Fleet, cell: int) -> Condition | None:
    """The first condition the order fails as the position stands now, without its reason's text
    (`failure` with the text): turn resolution without messages runs this one."""
    for static, fails in _STATIC_TESTS[order_type]:
        if fails(position, cell):
            return static
    for dynamic, fails_now in _DYNAMIC_TESTS[order_type]:
        if fails_now(position, cell, fleet):
            return dynamic
    return None


def has_valid_target(position: Position, order_type: OrderType, fleet: Fleet) -> bool:
    """Whether some system passes every condition for `fleet`'s order as the position stands (R24a)."""
    static = [c.fails for c in _STATIC[order_type]]
    dynamic = [c.fails for c in _DYNAMIC[order_type]]
    for cell in range(position.board.size):
        for fails in static:
            if fails(position, cell):
                break
        else:
            for fails_now in dynamic:
                if fails_now(position, cell, fleet):
                    break
            else:
                return True
    return False
