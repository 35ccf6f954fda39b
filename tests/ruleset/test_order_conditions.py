"""R7a: the one table of target conditions (`ruleset.conditions`).

Static conditions (no other order of the turn can change them) are refused by Probe Order and
Insert Order (`check_order`, code 3, a reason naming the system) and checked again at execution;
dynamic ones are checked only when the order executes. Each listed static condition is refused
for each order type, one dynamic condition of each order type is still accepted, and random games
show that the two checks agree: an accepted order never fails for a static reason unless an
earlier order of the turn changed its target, and no refused order would have succeeded.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from ruleset import (
    Kind,
    Order,
    OrderType,
    Phase,
    ProblemCode,
    Role,
    add_player,
    check_order,
    game_rng,
    new_game,
    parse_map,
)
from ruleset.board import grid_map_text
from ruleset.conditions import CONDITIONS, Check
from ruleset.execution import execute
from ruleset.orders import allowed_order_types
from ruleset.position import Position
from ruleset.simulator import RandomPlayer, play_game
from ruleset.state import Conflict
from ruleset.turn import accepted_orders, resolve_turn
from ruleset.turn_log import TurnLog

# y=4 A.A.A..   artifact systems (0, 4), (2, 4), (4, 4)
# y=3 .......
# y=2 ..M.M.M   uninhabitable (2, 2), (4, 2), (6, 2)
# y=1 .......
# y=0 .......
BOARD = parse_map("A.A.A..\n.......\n..M.M.M\n.......\n.......\n")


def cell(x: int, y: int) -> int:
    found = BOARD.cell_at(x, y)
    assert found is not None
    return found


def system(x: int, y: int) -> int:
    return BOARD.system_id(cell(x, y))


def game(**changes):
    """ann (merchant, scientist, settler, mining) and bob (mining, settler); then `changes`."""
    state = new_game(BOARD, seed=1)
    state, _ = add_player(state, "ann", hand=[Kind.MERCHANT, Kind.SCIENTIST, Kind.SETTLER, Kind.MINING])
    state, _ = add_player(state, "bob", hand=[Kind.MINING, Kind.SETTLER])
    colonies = dict(state.colonies)
    colonies.update(changes.pop("colonies", {}))
    return replace(state, colonies=colonies, **changes)


def fleet(state, player: int, role: Role, kind: Kind | None = None) -> int:
    return next(
        f.id for f in state.fleets.values() if f.owner == player and f.role is role and f.kind is kind
    )


def order_for(state, order_type: OrderType, target: int, player: int = 1) -> Order:
    if order_type is OrderType.MOVE:
        return Order(player, fleet(state, player, Role.LEADER, Kind.MERCHANT), order_type, target)
    if order_type is OrderType.ATTACK:
        return Order(player, fleet(state, player, Role.BOMBER), order_type, target)
    kind = Kind.MINING if order_type is OrderType.COLONIZE_MINING else Kind.SETTLER
    return Order(player, fleet(state, player, Role.COLONIST, kind), order_type, target)


def executed_alone(state, order):
    """Execute `order` on `state` as it stands, bypassing the submission checks: the condition it
    fails (None when it succeeds) and the messages."""
    log = TurnLog(state.turn + 1)
    return execute(Position(state), order, state.rotation_order(), log), log.messages


# -- the table --------------------------------------------------------------------------------


def names(order_type: OrderType, check: Check) -> set[str]:
    return {c.name for c in CONDITIONS[order_type] if c.check is check}


def test_the_table_says_which_conditions_are_static_as_section_18_4_lists_them():
    assert names(OrderType.COLONIZE, Check.STATIC) == {
        "destroyed",
        "colonized",
        "pending unification",
        "uninhabitable",
    }
    assert names(OrderType.COLONIZE_MINING, Check.STATIC) == {
        "destroyed",
        "colonized",
        "pending unification",
        "habitable",
    }
    assert names(OrderType.MOVE, Check.STATIC) == {
        "destroyed",
        "colonized",
        "uninhabitable",
        "pending unification",
    }
    assert names(OrderType.ATTACK, Check.STATIC) == {"destroyed", "artifact", "pending unification"}
    # what earlier orders of the turn can change: leaders, scientist neighbours, regions, R14
    dynamic_colony = {"leader there", "three leader regions", "merges a pending conflict"}
    assert names(OrderType.COLONIZE, Check.DYNAMIC) == dynamic_colony
    assert names(OrderType.COLONIZE_MINING, Check.DYNAMIC) == dynamic_colony
    assert names(OrderType.MOVE, Check.DYNAMIC) == {
        "leader there",
        "joins regions",
        "no scientist",
        "region in conflict",
    }
    assert names(OrderType.ATTACK, Check.DYNAMIC) == set()
    assert CONDITIONS[OrderType.REINFORCE] == ()


# -- every static condition, per order type, is refused at submission ---------------------------

UNIFICATION = Conflict(internal=False, kind=Kind.SETTLER, attacker=0, defender=0, unification=cell(3, 1))

STATIC_CASES = {
    # name: (order type, target (x, y), state changes, the reason)
    "colonize destroyed": (
        OrderType.COLONIZE,
        (3, 0),
        {"destroyed": frozenset({cell(3, 0)})},
        "3, 0 is destroyed",
    ),
    "colonize colonized": (
        OrderType.COLONIZE,
        (3, 2),
        {"colonies": {cell(3, 2): Kind.MERCHANT}},
        "3, 2 is already colonized",
    ),
    "colonize artifact system": (OrderType.COLONIZE, (2, 4), {}, "2, 4 is already colonized"),
    "colonize pending unification": (
        OrderType.COLONIZE,
        (3, 1),
        {"colonies": {cell(3, 1): Kind.MERCHANT}, "conflicts": (UNIFICATION,)},
        "3, 1 is a pending unification system",
    ),
    "colonize uninhabitable": (
        OrderType.COLONIZE,
        (2, 2),
        {},
        "2, 2 is uninhabitable (M): only mining colonists can colonize it",
    ),
    "mining destroyed": (
        OrderType.COLONIZE_MINING,
        (6, 2),
        {"destroyed": frozenset({cell(6, 2)})},
        "6, 2 is destroyed",
    ),
    "mining colonized": (
        OrderType.COLONIZE_MINING,
        (4, 2),
        {"colonies": {cell(4, 2): Kind.MINING}},
        "4, 2 is already colonized",
    ),
    "mining pending unification": (
        OrderType.COLONIZE_MINING,
        (4, 2),
        {"colonies": {cell(4, 2): Kind.MINING}, "conflicts": (replace(UNIFICATION, unification=cell(4, 2)),)},
        "4, 2 is a pending unification system",
    ),
    "mining habitable": (
        OrderType.COLONIZE_MINING,
        (3, 0),
        {},
        "3, 0 is habitable: mining colonists can only colonize uninhabitable (M) systems",
    ),
    "move destroyed": (OrderType.MOVE, (1, 3), {"destroyed": frozenset({cell(1, 3)})}, "1, 3 is destroyed"),
    "move colonized": (OrderType.MOVE, (0, 4), {}, "0, 4 is already colonized"),
    "move uninhabitable": (OrderType.MOVE, (2, 2), {}, "2, 2 is uninhabitable (M): leaders cannot enter it"),
    "move pending unification": (
        OrderType.MOVE,
        (3, 1),
        {"colonies": {cell(3, 1): Kind.MERCHANT}, "conflicts": (UNIFICATION,)},
        "3, 1 is a pending unification system",
    ),
    "attack destroyed": (
        OrderType.ATTACK,
        (3, 0),
        {"destroyed": frozenset({cell(3, 0)})},
        "3, 0 is already destroyed",
    ),
    "attack artifact": (OrderType.ATTACK, (4, 4), {}, "4, 4 carries an alien artifact"),
    "attack pending unification": (
        OrderType.ATTACK,
        (3, 1),
        {"colonies": {cell(3, 1): Kind.MERCHANT}, "conflicts": (UNIFICATION,)},
        "3, 1 is a pending unification system",
    ),
}


def _with_conflict_leaders(state, changes):
    """A queued conflict needs real leaders: ann's and bob's settler leaders, at home is enough here."""
    if "conflicts" in changes:
        conflict = changes["conflicts"][0]
        changes["conflicts"] = (
            replace(
                conflict, attacker=state.leader(1, Kind.SETTLER).id, defender=state.leader(2, Kind.SETTLER).id
            ),
        )
    return changes


@pytest.mark.parametrize("name", sorted(STATIC_CASES))
def test_a_static_condition_is_refused_with_code_3_and_the_reason(name):
    order_type, (x, y), changes, reason = STATIC_CASES[name]
    base = game()
    state = replace(game(**_with_conflict_leaders(base, dict(changes))))
    order = order_for(state, order_type, system(x, y))
    problem = check_order(state, order)
    assert problem is not None and problem.code is ProblemCode.UNAVAILABLE_TEMPORARILY
    assert problem.message == reason
    # a board planet means its system (R8): the same refusal
    assert check_order(state, replace(order, target=system(x, y) + 1)) == problem
    # and it could not have succeeded: executed anyway, it fails, for the same reason
    failed, messages = executed_alone(state, order)
    assert failed is not None and failed.check is Check.STATIC
    assert messages[0].body.endswith(f": {reason}.")


def test_the_limits_come_first_and_refused_orders_do_not_count_against_them():
    state = game(destroyed=frozenset({cell(3, 0)}))
    settler = fleet(state, 1, Role.COLONIST, Kind.SETTLER)
    merchant = fleet(state, 1, Role.COLONIST, Kind.MERCHANT)
    scientist = fleet(state, 1, Role.COLONIST, Kind.SCIENTIST)
    first = Order(1, settler, OrderType.COLONIZE, system(1, 0))
    second = Order(1, merchant, OrderType.COLONIZE, system(1, 1))
    third = Order(1, scientist, OrderType.COLONIZE, system(3, 0))
    assert check_order(state, third).message == "3, 0 is destroyed"
    assert check_order(state, third, [first, second]).message == "At most 2 orders per player per turn."
    assert check_order(state, replace(third, target=system(1, 0)), [first]).message == (
        "System already targeted for an action this turn."
    )


# -- one dynamic condition of each order type is still accepted --------------------------------


def test_colonize_onto_a_leader_is_accepted_since_the_leader_may_move_away():
    leader = game().leader(2, Kind.SCIENTIST).id
    scientists = {cell(1, 2): Kind.SCIENTIST, cell(3, 2): Kind.SCIENTIST}
    state = game(colonies=scientists, leader_at={leader: cell(1, 3)})
    order = order_for(state, OrderType.COLONIZE, system(1, 3))
    assert check_order(state, order) is None
    failed, messages = executed_alone(state, order)
    assert failed.name == "leader there" and failed.check is Check.DYNAMIC
    assert messages[0].body == (
        'Your fleet "Colonist Fleet" could not colonize 1, 3: 1, 3 is occupied by bob\'s Scientist Leader.'
    )
    # and it succeeds when bob's leader moves away first (bob first in the rotation)
    move = Order(2, leader, OrderType.MOVE, system(3, 3))
    after = resolve_turn(replace(state, rotation=1), [order, move], game_rng(1, 1)).state
    assert after.colonies.get(cell(1, 3)) is Kind.SETTLER and after.leader_at[leader] == cell(3, 3)


def test_colonize_mining_next_to_three_leader_regions_is_accepted_since_regions_change():
    # (4, 2) is M; around it three regions with a leader each: (4, 3) next to the artifact system
    # (4, 4), (3, 2) next to a scientist colony at (3, 1), (5, 2) next to one at (5, 1).
    base = game()
    leaders = {
        base.leader(1, Kind.MERCHANT).id: cell(4, 3),
        base.leader(1, Kind.SCIENTIST).id: cell(3, 2),
        base.leader(2, Kind.MERCHANT).id: cell(5, 2),
    }
    state = game(colonies={cell(3, 1): Kind.SCIENTIST, cell(5, 1): Kind.SCIENTIST}, leader_at=leaders)
    order = order_for(state, OrderType.COLONIZE_MINING, system(4, 2), player=2)
    assert check_order(state, order) is None
    failed, messages = executed_alone(state, order)
    assert failed.name == "three leader regions"
    assert messages[0].body == (
        'Your fleet "Colonist Fleet" could not colonize 4, 2: it would join three regions that hold leaders.'
    )
    # once ann's scientist leader has left, the same order succeeds (ann runs first)
    away = Order(1, base.leader(1, Kind.SCIENTIST).id, OrderType.MOVE, system(1, 3))
    state = game(
        colonies={cell(3, 1): Kind.SCIENTIST, cell(5, 1): Kind.SCIENTIST, cell(1, 2): Kind.SCIENTIST},
        leader_at=leaders,
    )
    after = resolve_turn(state, [order, away], game_rng(1, 1)).state
    assert after.colonies.get(cell(4, 2)) is Kind.MINING


def test_move_where_no_scientist_colony_is_yet_is_accepted():
    state = game()
    order = order_for(state, OrderType.MOVE, system(3, 0))
    assert check_order(state, order) is None
    failed, messages = executed_alone(state, order)
    assert failed.name == "no scientist"
    assert messages[0].body == (
        'Your fleet "Merchant Leader" could not move to 3, 0: no scientist colony is next to it.'
    )
    # an earlier colony of the turn makes it valid: ann's own scientist, lower fleet id, runs first
    scientist = Order(1, fleet(state, 1, Role.COLONIST, Kind.SCIENTIST), OrderType.COLONIZE, system(3, 1))
    after = resolve_turn(state, [order, scientist], game_rng(1, 1)).state
    assert after.leader_at[order.fleet] == cell(3, 0)


def test_attack_on_a_system_that_becomes_a_pending_unification_system_is_accepted():
    # bob's Attack on (3, 3) is accepted; ann, first in the rotation, joins two settler regions there.
    base = game()
    leaders = {base.leader(1, Kind.SETTLER).id: cell(1, 4), base.leader(2, Kind.SETTLER).id: cell(5, 4)}
    state = game(leader_at=leaders, colonies={cell(2, 3): Kind.SETTLER, cell(4, 3): Kind.SETTLER})
    attack = order_for(state, OrderType.ATTACK, system(3, 3), player=2)
    colonize = Order(1, fleet(state, 1, Role.COLONIST, Kind.MERCHANT), OrderType.COLONIZE, system(3, 3))
    assert check_order(state, attack) is None and check_order(state, colonize) is None
    outcome = resolve_turn(state, [attack, colonize], game_rng(1, 1))
    assert cell(3, 3) in outcome.state.unification_cells and cell(3, 3) not in outcome.state.destroyed
    failures = [m.body for m in outcome.messages if m.subject == "Attack order failed"]
    assert failures == [
        'Your fleet "Bomber" could not attack 3, 3: 3, 3 became a pending unification system earlier '
        "this turn, when ann colonized it."
    ]


# -- properties: the submission check and execution agree ---------------------------------------

STATIC_NAMES = {c.name for conditions in CONDITIONS.values() for c in conditions if c.check is Check.STATIC}
R7A_CODE = ProblemCode.UNAVAILABLE_TEMPORARILY
NOT_R7A = {
    "Not allowed to add that order type.",
    "At most 2 orders per player per turn.",
    "System already targeted for an action this turn.",
    "That fleet already has its order for this turn.",
    "The game is over: no orders are accepted.",
}


class Prober:
    """A strategy that probes random orders on random systems (keeping those `check_order` accepts,
    at most two) and then plays like `RandomPlayer`; it remembers every R7a refusal."""

    def __init__(self):
        self.random_player = RandomPlayer()
        self.refused: dict[int, list[tuple[Order, str]]] = {}  # id(state) -> R7a refusals
        self.accepted_probes = 0

    def __call__(self, state, player_id, rng):
        if state.phase is not Phase.NORMAL:
            return self.random_player(state, player_id, rng)
        mine = [f for f in state.fleets.values() if f.owner == player_id]
        orders: list[Order] = []
        for _ in range(4):
            chosen = mine[rng.randrange(len(mine))]
            types = allowed_order_types(state, chosen.id)
            order = Order(
                player_id, chosen.id, types[0], state.board.system_id(rng.randrange(state.board.size))
            )
            problem = check_order(state, order, orders)
            if problem is None:
                orders.append(order)
                self.accepted_probes += 1
                if len(orders) == 2:
                    return orders
            elif problem.code == R7A_CODE and problem.message not in NOT_R7A:
                self.refused.setdefault(id(state), []).append((order, problem.message))
        for order in self.random_player(state, player_id, rng):
            if len(orders) < 2 and check_order(state, order, orders) is None:
                orders.append(order)
        return orders


def static_failures_are_caused_earlier_in_the_turn(before, orders, outcome) -> None:
    """An accepted order that fails a static condition does so only because an earlier order of the
    same turn colonized or destroyed its target."""
    changed: set[int] = set()
    for e in outcome.events:
        if e.kind == "order failed" and e.detail in STATIC_NAMES:
            assert e.cell in changed, (e, outcome.events)
            event(f"static failure caused earlier: {e.detail}")
        if e.kind in ("colonized", "destroyed"):
            changed.add(e.cell)


def refused_orders_would_have_failed(before, orders, refused) -> None:
    """Each order refused under R7a fails when executed anyway: at the start of the turn, and after
    every order the turn played (they cannot undo a static condition)."""
    if before.phase is not Phase.NORMAL:
        assert not refused  # the prober probes normal turns only
        return
    accepted = accepted_orders(before, orders)
    rotation = before.rotation_order()
    played = Position(before)
    log = TurnLog(before.turn + 1)
    for player_id in rotation:
        for order in sorted((o for o in accepted if o.player == player_id), key=lambda o: o.fleet):
            execute(played, order, rotation, log)
    for order, reason in refused:
        failed, messages = executed_alone(before, order)
        assert failed is not None and failed.check is Check.STATIC, (order, reason)
        assert messages[0].body.endswith(f": {reason}.")
        if order.fleet in played.fleets:  # not used by a later probe the prober kept
            assert execute(played, order, rotation, log) is not None, (order, reason)


boards = st.sampled_from(
    [
        BOARD,
        parse_map("A.A\n.M.\nA.A\n"),
        parse_map(grid_map_text(9, 7, 4)),
        parse_map("AMA.M\n..A..\nMM.AA\n"),
    ]
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(board=boards, players=st.integers(2, 4), seed=st.integers(0, 2**32 - 1))
def test_probe_and_execution_agree_in_random_games(board, players, seed):
    prober = Prober()
    refusals = 0

    def observe(before, orders, outcome):
        nonlocal refusals
        static_failures_are_caused_earlier_in_the_turn(before, orders, outcome)
        refused = prober.refused.pop(id(before), [])
        refused_orders_would_have_failed(before, orders, refused)
        refusals += len(refused)

    record = play_game(players, board, seed, strategies=prober, observer=observe, max_turns=400)
    assert record.ended
    event("some probes refused (R7a)" if refusals else "no probe refused")
