"""Playing a scenario's turns: each order is submitted as the server would (`check_order`),
refusals are recorded, and the turn is resolved by the rules (`resolve_turn`)."""

from __future__ import annotations

from ..kinds import Kind, Role
from ..order_types import OrderType
from ..orders import NOT_ALLOWED, Order, ProblemCode, acting_players, check_order
from ..randomness import game_rng
from ..state import GameState, Phase
from ..turn import resolve_turn
from .setup import KIND_BY_LABEL, Scenario, ScenarioOrder

NO_SUCH_FLEET = "no such fleet"
GAME_OVER = "game over"


def play(scenario: Scenario) -> None:
    """Play every listed turn; refusals are recorded, not errors."""
    for orders in scenario.turns:
        _play_turn(scenario, orders)


def _play_turn(scenario: Scenario, orders: list[ScenarioOrder]) -> None:
    state = scenario.state
    number = state.turn + 1
    accepted: list[Order] = []

    def refuse(player: int, order_type: OrderType, code: int, reason: str) -> None:
        scenario.refused.append(
            {
                "turn": number,
                "player": state.player(player).name,
                "order": order_type.title,
                "code": int(code),
                "reason": reason,
            }
        )

    def submit(order: Order) -> None:
        problem = check_order(state, order, accepted)
        if problem is None:
            accepted.append(order)
        else:
            refuse(order.player, OrderType(order.type), problem.code, problem.message)

    for line in orders:
        if state.phase is Phase.OVER:
            for _ in range(line.count):
                refuse(line.player, line.type, NOT_ALLOWED.code, GAME_OVER)
            continue
        if line.type is OrderType.REINFORCE:
            conflict = state.active_conflict
            for _ in range(line.count):
                if conflict is None or line.player not in acting_players(state):
                    refuse(line.player, line.type, NOT_ALLOWED.code, NOT_ALLOWED.message)
                    continue
                fleet = _free_fleet(state, line.player, Role.COLONIST, conflict.reinforcement_kind, accepted)
                if fleet is None:
                    refuse(line.player, line.type, ProblemCode.NO_SUCH_THING, NO_SUCH_FLEET)
                    continue
                submit(Order(line.player, fleet, line.type))
            continue
        role, kind = _fleet_wanted(line)
        fleet = _free_fleet(state, line.player, role, kind, accepted)
        if fleet is None:
            refuse(line.player, line.type, ProblemCode.NO_SUCH_THING, NO_SUCH_FLEET)
            continue
        assert line.cell is not None  # set up checks that every order but Reinforce has a target
        submit(Order(line.player, fleet, line.type, state.board.system_id(line.cell)))

    if state.phase is Phase.OVER:
        return
    outcome = resolve_turn(state, accepted, game_rng(state.seed, number))
    for message in outcome.messages:
        scenario.messages[message.player].append(
            {"turn": message.turn, "subject": message.subject, "body": message.body}
        )
    scenario.state = outcome.state


def _fleet_wanted(line: ScenarioOrder) -> tuple[Role, Kind | None]:
    """The role and kind of fleet an order line names (`fleet = KIND`, or the order's default)."""
    if line.type is OrderType.ATTACK:
        return Role.BOMBER, None
    if line.type is OrderType.MOVE:
        assert line.fleet is not None
        return Role.LEADER, KIND_BY_LABEL[line.fleet]
    if line.fleet is None:  # ColonizeMining without a fleet: a mining colonist
        return Role.COLONIST, Kind.MINING
    return Role.COLONIST, KIND_BY_LABEL[line.fleet]


def _free_fleet(
    state: GameState, player: int, role: Role, kind: Kind | None, accepted: list[Order]
) -> int | None:
    """The player's lowest-id fleet of that role and kind with no order yet this turn."""
    busy = {o.fleet for o in accepted}
    for fleet in state.fleets.values():
        if fleet.owner == player and fleet.role is role and fleet.kind is kind and fleet.id not in busy:
            return fleet.id
    return None
