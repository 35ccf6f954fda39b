"""Orders and the checks they get at submission (R6–R8, R7a, R11, R18), and who acts in a turn.

`check_order` is what the server runs for Insert Order and Probe Order, and what turn resolution
runs again before executing, so an order is judged by one function. Problems are values carrying
the TP Fail code the server sends (R7). The conditions on an order's target are one table,
`ruleset.conditions`: the static ones are checked here (R7a), every one again when the order
executes (`ruleset.execution`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from enum import IntEnum

from .conditions import refusal
from .kinds import Kind, Role
from .order_types import ORDER_DESCRIPTIONS as ORDER_DESCRIPTIONS
from .order_types import ORDER_NAMES as ORDER_NAMES
from .order_types import ORDER_TYPES
from .order_types import ORDER_TYPES_BY_NAME as ORDER_TYPES_BY_NAME
from .order_types import TARGET_PARAMETER_DESCRIPTION as TARGET_PARAMETER_DESCRIPTION
from .order_types import TARGET_PARAMETER_NAME as TARGET_PARAMETER_NAME
from .order_types import OrderType as OrderType
from .state import Fleet, GameState, Phase

ORDERS_PER_TURN = 2
# Enum members read in hot loops, as plain names (reading `Phase.OVER` goes through the enum
# metaclass's __getattr__ hook, several times slower than a global).
_OVER, _REINFORCE = Phase.OVER, OrderType.REINFORCE
_LEADER = Role.LEADER
_MOVE_ONLY, _ATTACK_ONLY = (OrderType.MOVE,), (OrderType.ATTACK,)


class ProblemCode(IntEnum):
    """What kind of refusal a `Problem` is. R7 names them by their TP Fail codes, so the values
    are those codes; the server maps them to its wire enum in one place."""

    FRAME = 1
    UNAVAILABLE_PERMANENTLY = 2
    UNAVAILABLE_TEMPORARILY = 3
    NO_SUCH_THING = 4
    PERMISSION_DENIED = 5


@dataclass(frozen=True, slots=True)
class Problem:
    """Why an order is refused: the TP Fail code and a message for the player."""

    code: ProblemCode
    message: str


NO_SUCH_QUEUE = Problem(ProblemCode.NO_SUCH_THING, "No such Object Order Queue")
NO_SUCH_ORDER_TYPE = Problem(ProblemCode.NO_SUCH_THING, "No such order type")
NOT_ALLOWED = Problem(ProblemCode.UNAVAILABLE_TEMPORARILY, "Not allowed to add that order type.")
GAME_IS_OVER = Problem(ProblemCode.UNAVAILABLE_TEMPORARILY, "The game is over: no orders are accepted.")
NO_SUCH_SYSTEM = Problem(ProblemCode.NO_SUCH_THING, "No such star system on the board")
TOO_MANY_ORDERS = Problem(
    ProblemCode.UNAVAILABLE_TEMPORARILY, f"At most {ORDERS_PER_TURN} orders per player per turn."
)
SYSTEM_ALREADY_TARGETED = Problem(
    ProblemCode.UNAVAILABLE_TEMPORARILY, "System already targeted for an action this turn."
)
FLEET_ALREADY_ORDERED = Problem(
    ProblemCode.UNAVAILABLE_TEMPORARILY, "That fleet already has its order for this turn."
)


@dataclass(frozen=True, slots=True)
class Order:
    """An order of `player` on object `fleet`; `target` is a star system (or board planet) id."""

    player: int
    fleet: int
    type: int
    target: int = 0


# A colonist's normal order, by kind (Kind values index the tuple): only miners settle 'M'.
_COLONIST_ORDERS: tuple[tuple[OrderType, ...], ...] = (
    (OrderType.COLONIZE,),  # merchant
    (OrderType.COLONIZE,),  # scientist
    (OrderType.COLONIZE,),  # settler
    (OrderType.COLONIZE_MINING,),  # mining
)
assert _COLONIST_ORDERS[Kind.MINING] == (OrderType.COLONIZE_MINING,)


def allowed_order_types(state: GameState, object_id: int) -> tuple[OrderType, ...]:
    """The order types object `object_id` takes in the next turn (R6, R18); () for non-fleets."""
    fleet = state.fleets.get(object_id)
    if fleet is None or state.phase is Phase.OVER:
        return ()
    return _fleet_order_types(state, fleet)


def _fleet_order_types(state: GameState, fleet: Fleet) -> tuple[OrderType, ...]:
    """`allowed_order_types` of a fleet of a game that is not over."""
    conflict = state.active_conflict
    if conflict is not None:
        if (
            fleet.role is Role.COLONIST
            and fleet.kind is conflict.reinforcement_kind
            and fleet.owner in acting_players(state)
        ):
            return (OrderType.REINFORCE,)
        return ()
    if fleet.role is _LEADER:
        return _MOVE_ONLY
    if fleet.kind is None:  # a bomber
        return _ATTACK_ONLY
    return _COLONIST_ORDERS[fleet.kind]


def owns_queue(state: GameState, player: int, object_id: int) -> bool:
    """Whether `player` owns the order queue of `object_id` (fleets and home planets have one)."""
    fleet = state.fleets.get(object_id)
    if fleet is not None:
        return fleet.owner == player
    return state.has_player(player) and state.player(player).home_planet == object_id


def check_order(state: GameState, order: Order, accepted: Iterable[Order] = ()) -> Problem | None:
    """The problem with submitting `order` now, given the orders already accepted this turn.

    Checks run in REF's order (R7): the queue is the player's, the order type exists, the type
    is allowed on that object now, the target names a board system (R8), then the limits of R11,
    then the static conditions on the target (R7a, `ruleset.conditions`).
    """
    if state.phase is _OVER:
        return GAME_IS_OVER
    fleet = state.fleets.get(order.fleet)
    if fleet is None or fleet.owner != order.player:
        if fleet is not None or not owns_queue(state, order.player, order.fleet):
            return NO_SUCH_QUEUE
    if order.type not in ORDER_NAMES:
        return NO_SUCH_ORDER_TYPE
    order_type = ORDER_TYPES[order.type]
    if fleet is None or order_type not in _fleet_order_types(state, fleet):
        return NOT_ALLOWED
    player = order.player
    mine: list[Order] = []
    for other in accepted:  # (a loop: a comprehension is a call of its own in Python 3.11)
        if other.player == player:
            mine.append(other)
    for other in mine:
        if other.fleet == order.fleet:
            return FLEET_ALREADY_ORDERED
    if order_type is _REINFORCE:  # the one order without a target
        return None
    board = state.board
    cell = board.cell_of_object(order.target)
    if cell is None:
        return NO_SUCH_SYSTEM
    if len(mine) >= ORDERS_PER_TURN:
        return TOO_MANY_ORDERS
    for other in mine:
        if board.cell_of_object(other.target) == cell:
            return SYSTEM_ALREADY_TARGETED
    reason = refusal(state, order_type, cell)
    if reason is not None:
        return Problem(ProblemCode.UNAVAILABLE_TEMPORARILY, reason.text)
    return None


def acting_players(state: GameState, removed: Collection[int] = ()) -> tuple[int, ...]:
    """Who must act in the next turn, in ascending id: every player in a normal turn, the two
    combatants' owners in a combat turn (R18), nobody once the game is over. Players in
    `removed` (taken out of the game by an operator) are never waited for."""
    if state.phase is Phase.OVER:
        return ()
    conflict = state.active_conflict
    if conflict is not None:
        owners = {state.fleets[conflict.attacker].owner, state.fleets[conflict.defender].owner}
        return tuple(sorted(owners.difference(removed)))
    return tuple(p.id for p in state.players if p.id not in removed)
