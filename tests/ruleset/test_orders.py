"""R6–R8, R11, R18: which orders an object takes and the refusals at submission."""

from dataclasses import replace

from ruleset import Order, OrderType, Phase, add_player, allowed_order_types, check_order, game_rng, new_game
from ruleset.board import DEFAULT_BOARD
from ruleset.kinds import Kind, Role
from ruleset.state import Conflict


def two_players():
    state = new_game(seed=3)
    state, _ = add_player(state, "ann", hand=[Kind.MERCHANT, Kind.SCIENTIST, Kind.SETTLER, Kind.MINING])
    state, _ = add_player(state, "bob", hand=[Kind.SCIENTIST, Kind.SCIENTIST])
    return state


def fleet(state, player, role, kind=None):
    return next(
        f.id
        for f in state.fleets.values()
        if f.owner == player and f.role is role and (kind is None or f.kind is kind)
    )


def system(x, y):
    return DEFAULT_BOARD.system_id(DEFAULT_BOARD.cell_at(x, y))


def test_ids_follow_refs_order_for_each_player():
    state = two_players()
    ann = state.player(1)
    assert (ann.home_system, ann.home_planet) == (354, 355)
    kinds = [(f.role, f.kind) for f in state.fleets_of(1)]
    assert kinds[:4] == [
        (Role.COLONIST, k) for k in (Kind.MERCHANT, Kind.SCIENTIST, Kind.SETTLER, Kind.MINING)
    ]
    assert kinds[4:8] == [(Role.LEADER, k) for k in Kind]
    assert kinds[8:] == [(Role.BOMBER, None)] * 2
    assert state.player(2).home_system == 354 + 2 + 4 + 4 + 2


def test_normal_turn_order_types_by_fleet():
    state = two_players()
    assert allowed_order_types(state, fleet(state, 1, Role.COLONIST, Kind.MERCHANT)) == (OrderType.COLONIZE,)
    assert allowed_order_types(state, fleet(state, 1, Role.COLONIST, Kind.MINING)) == (
        OrderType.COLONIZE_MINING,
    )
    assert allowed_order_types(state, fleet(state, 1, Role.LEADER)) == (OrderType.MOVE,)
    assert allowed_order_types(state, fleet(state, 1, Role.BOMBER)) == (OrderType.ATTACK,)
    assert allowed_order_types(state, state.player(1).home_planet) == ()
    assert allowed_order_types(state, system(0, 0)) == ()


def test_refusal_codes_follow_r7():
    state = two_players()
    merchant = fleet(state, 1, Role.COLONIST, Kind.MERCHANT)
    target = system(2, 0)
    # another player's fleet
    assert check_order(state, Order(2, merchant, OrderType.COLONIZE, target)).code == 4
    # a board planet's queue belongs to nobody
    assert check_order(state, Order(1, system(2, 0) + 1, OrderType.COLONIZE, target)).code == 4
    # the home planet takes no orders
    assert check_order(state, Order(1, state.player(1).home_planet, OrderType.MOVE, target)).code == 3
    # unknown order type
    assert check_order(state, Order(1, merchant, 9, target)).code == 4
    # wrong type for the fleet, and Reinforce in a normal turn
    assert check_order(state, Order(1, merchant, OrderType.MOVE, target)).code == 3
    assert check_order(state, Order(1, merchant, OrderType.REINFORCE)).code == 3
    # nonexistent target, and targets that are not board systems (R8)
    for bad in (99999, 0, 1, state.player(1).home_system, merchant):
        assert check_order(state, Order(1, merchant, OrderType.COLONIZE, bad)).code == 4, bad
    assert check_order(state, Order(1, merchant, OrderType.COLONIZE, target)) is None
    # a board planet means its system
    assert check_order(state, Order(1, merchant, OrderType.COLONIZE, target + 1)) is None


def test_two_orders_per_turn_and_one_per_system_and_fleet():
    state = two_players()
    merchant = fleet(state, 1, Role.COLONIST, Kind.MERCHANT)
    scientist = fleet(state, 1, Role.COLONIST, Kind.SCIENTIST)
    settler = fleet(state, 1, Role.COLONIST, Kind.SETTLER)
    first = Order(1, merchant, OrderType.COLONIZE, system(2, 0))
    assert check_order(state, first) is None
    same_fleet = check_order(state, Order(1, merchant, OrderType.COLONIZE, system(3, 0)), [first])
    assert same_fleet.code == 3
    same_system = check_order(state, Order(1, scientist, OrderType.COLONIZE, system(2, 0) + 1), [first])
    assert same_system.code == 3
    second = Order(1, scientist, OrderType.COLONIZE, system(3, 0))
    assert check_order(state, second, [first]) is None
    third = check_order(state, Order(1, settler, OrderType.COLONIZE, system(4, 0)), [first, second])
    assert third.code == 3
    # another player's orders do not count against ann, and may target the same system
    bob_order = Order(2, fleet(state, 2, Role.COLONIST), OrderType.COLONIZE, system(2, 0))
    assert check_order(state, bob_order, [first, second]) is None


def test_combat_turn_allows_only_the_combatants_reinforcements():
    state = two_players()
    ann_leader = state.leader(1, Kind.SCIENTIST).id
    bob_leader = state.leader(2, Kind.SCIENTIST).id
    conflict = Conflict(
        internal=True,
        kind=Kind.SCIENTIST,
        attacker=ann_leader,
        defender=bob_leader,
        attacker_strength=1,
        defender_strength=1,
    )
    combat = replace(
        state, phase=Phase.COMBAT, conflicts=(conflict,), leader_at={ann_leader: 0, bob_leader: 1}
    )
    ann_scientist = fleet(combat, 1, Role.COLONIST, Kind.SCIENTIST)
    ann_merchant = fleet(combat, 1, Role.COLONIST, Kind.MERCHANT)
    assert allowed_order_types(combat, ann_scientist) == (OrderType.REINFORCE,)
    assert allowed_order_types(combat, ann_merchant) == ()
    assert allowed_order_types(combat, ann_leader) == ()
    assert check_order(combat, Order(1, ann_scientist, OrderType.REINFORCE)) is None
    assert check_order(combat, Order(1, ann_merchant, OrderType.REINFORCE)).code == 3
    assert check_order(combat, Order(1, ann_scientist, OrderType.COLONIZE, system(2, 0))).code == 3
    assert (
        check_order(
            combat,
            Order(1, ann_scientist, OrderType.REINFORCE),
            [Order(1, ann_scientist, OrderType.REINFORCE)],
        ).code
        == 3
    )


def test_nothing_is_accepted_after_the_game_is_over():
    state = replace(two_players(), phase=Phase.OVER)
    merchant = fleet(state, 1, Role.COLONIST, Kind.MERCHANT)
    assert allowed_order_types(state, merchant) == ()
    assert check_order(state, Order(1, merchant, OrderType.COLONIZE, system(2, 0))).code == 3


def test_drawn_hands_come_from_the_pool():
    state = new_game(seed=11)
    for name in ("a", "b", "c"):
        state, _ = add_player(state, name, game_rng(11, 0, name))
    assert sum(state.pool) == 153 - 18
    assert all(len(state.hand(p.id)) == 6 for p in state.players)
