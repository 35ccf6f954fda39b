"""The bot's decisions on hand-built views: legal orders only, scoring moves first, conflicts,
game over; and, against the rules engine, that every chosen order is accepted and executes."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clients.bot_random import RandomStrategy
from clients.bot_strategy import BotStrategy
from clients.bot_view import (
    CombatInfo,
    Intent,
    LeaderInfo,
    MyFleet,
    Square,
    View,
)
from clients.tae_model import ATTACK, COLONIZE, COLONIZE_MINING, MOVE, REINFORCE, ColonyKind, FleetKind
from ruleset import (
    Kind,
    Order,
    OrderType,
    Phase,
    Role,
    allowed_order_types,
    check_order,
    game_rng,
    parse_map,
    resolve_turn,
)
from ruleset.regions import region_of_each_member
from ruleset.simulator import RandomPlayer, set_up

M, S, P, R = ColonyKind.MERCHANT, ColonyKind.SCIENTIST, ColonyKind.SETTLER, ColonyKind.MINING
COLONIST, LEADER, BOMBER = FleetKind.COLONIST, FleetKind.LEADER, FleetKind.BOMBER
ME, THEM = 1, 2


# ------------------------------------------------------------------------------------------
# Hand-built views
# ------------------------------------------------------------------------------------------


def make_view(
    rows: list[str],
    *,
    colonies: dict | None = None,
    leaders=(),
    fleets=(),
    destroyed=(),
    scores=(0, 0, 0, 0, 0),
    hands=None,
    **extra,
) -> View:
    """A view of a map written like a map file (first line = highest row): '.' habitable,
    'M' uninhabitable, 'A' artifact system. Regions are computed as the server would."""
    height = len(rows)
    colonies = dict(colonies or {})
    squares = {}
    for line, row in enumerate(rows):
        y = height - 1 - line
        for x, char in enumerate(row):
            squares[(x, y)] = (char,)
    for (x, y), (char,) in list(squares.items()):
        if char == "A":
            colonies.setdefault((x, y), S)
    leader_cells = {l.pos for l in leaders if l.pos is not None}
    members = {p for p in squares if (p in colonies or p in leader_cells) and p not in destroyed}
    width = max(len(r) for r in rows)
    system_id = {p: 2 + 2 * (p[1] * width + p[0]) for p in squares}
    region = {}
    for start in sorted(members):
        if start in region:
            continue
        stack, component = [start], [start]
        region[start] = 0
        while stack:
            x, y = stack.pop()
            for n in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
                if n in members and n not in region:
                    region[n] = 0
                    stack.append(n)
                    component.append(n)
        label = min(system_id[p] for p in component)
        for p in component:
            region[p] = label
    view_squares = {
        p: Square(
            p[0],
            p[1],
            system_id[p],
            "M" if char == "M" else ".",
            colonies.get(p),
            char == "A",
            p in destroyed,
            region.get(p, 0),
        )
        for p, (char,) in squares.items()
    }
    if hands is None:
        hands = {ME: sum(1 for f in fleets if f.role is COLONIST), THEM: 6}
    return View(
        me=ME,
        squares=view_squares,
        leaders=tuple(leaders),
        fleets=tuple(fleets),
        scores=scores,
        hands=hands,
        name="me",
        players={ME: "me", THEM: "them"},
        **extra,
    )


def colonist(fid: int, kind: ColonyKind) -> MyFleet:
    return MyFleet(fid, COLONIST, kind, None, frozenset({COLONIZE_MINING if kind is R else COLONIZE}))


def leader(fid: int, kind: ColonyKind, pos=None) -> MyFleet:
    return MyFleet(fid, LEADER, kind, pos, frozenset({MOVE}))


def bomber(fid: int) -> MyFleet:
    return MyFleet(fid, BOMBER, None, None, frozenset({ATTACK}))


def chosen(intents: list[Intent]) -> list[Intent]:
    return [i for i in intents if not i.alternate]


def target_pos(view: View, intent: Intent):
    return next(p for p, s in view.squares.items() if s.system_id == intent.target)


MAP = [
    ".......",
    "...A...",
    ".......",
    "MMM....",
]


def test_opening_moves_two_leaders_next_to_the_artifact():
    fleets = [colonist(10 + i, k) for i, k in enumerate((M, S, P, R, S, M))]
    fleets += [leader(20, M), leader(21, S), leader(22, P), leader(23, R), bomber(30), bomber(31)]
    leaders = [LeaderInfo(20 + i, ME, k) for i, k in enumerate((M, S, P, R))]
    view = make_view(MAP, fleets=fleets, leaders=leaders)
    orders = chosen(BotStrategy().decide(view))
    assert len(orders) == 2
    assert all(o.order == MOVE for o in orders)
    targets = {target_pos(view, o) for o in orders}
    assert len(targets) == 2
    assert targets <= {(3, 1), (2, 2), (4, 2), (3, 3)}  # next to the artifact system at (3, 2)


def test_colonies_go_where_they_score_for_our_leaders():
    # Our settler leader sits next to the artifact: any non-settler colony joining that region
    # scores for us (R13); a merchant colonist far away would score for nobody.
    leaders = [
        LeaderInfo(20, ME, P, (3, 1)),
        LeaderInfo(21, ME, S),
        LeaderInfo(22, ME, M),
        LeaderInfo(23, ME, R),
    ]
    fleets = [colonist(10, M), colonist(11, R)]
    view = make_view(MAP, fleets=fleets, leaders=leaders, scores=(0, 1, 1, 1, 0))
    orders = chosen(BotStrategy().decide(view))
    assert orders[0].fleet == 10 and orders[0].order == COLONIZE
    pos = target_pos(view, orders[0])
    assert pos in {(2, 2), (4, 2), (3, 3), (2, 1), (4, 1), (3, 0)}
    assert "scores merchant for us" in orders[0].reason


def test_the_weakest_category_is_preferred():
    # Both colonists would score for our settler leader; money is our weakest category.
    leaders = [LeaderInfo(20, ME, P, (3, 1))]
    fleets = [colonist(10, S), colonist(11, M)]
    view = make_view(MAP, fleets=fleets, leaders=leaders, scores=(1, 5, 3, 3, 0))
    first = chosen(BotStrategy().decide(view))[0]
    assert first.fleet == 11


def test_never_scores_for_an_opponent():
    # The only region has the opponent's settler leader: joining it gives them points.
    leaders = [LeaderInfo(40, THEM, P, (3, 1))]
    fleets = [colonist(10, M)]
    view = make_view(MAP, fleets=fleets, leaders=leaders)
    for intent in BotStrategy().decide(view):
        pos = target_pos(view, intent)
        assert pos not in {(2, 2), (4, 2), (3, 3), (2, 1), (4, 1), (3, 0)}, intent


def test_merchant_leader_collects_artifacts():
    rows = [
        ".......",
        ".A.A...",
        ".......",
    ]
    # The two artifact systems are one region through the scientist colony between them.
    leaders = [LeaderInfo(20, ME, M), LeaderInfo(40, THEM, S, (5, 1))]
    fleets = [leader(20, M), colonist(10, R)]
    view = make_view(rows, colonies={(2, 1): S}, fleets=fleets, leaders=leaders)
    orders = chosen(BotStrategy().decide(view))
    assert orders[0].fleet == 20 and orders[0].order == MOVE
    assert "artifacts" in orders[0].reason
    assert target_pos(view, orders[0]) in {(1, 0), (2, 0), (3, 0), (1, 2), (2, 2), (3, 2), (0, 1), (4, 1)}


def test_only_legal_targets_terrain_occupied_and_destroyed():
    rows = [
        "MM.M",
        ".A..",
        "M.MM",
    ]
    leaders = [LeaderInfo(20, ME, R, (0, 1)), LeaderInfo(21, ME, P, (2, 1))]
    fleets = [
        colonist(10, R),
        colonist(11, R),
        colonist(12, S),
        leader(20, R, (0, 1)),
        leader(21, P, (2, 1)),
        bomber(30),
    ]
    view = make_view(rows, colonies={(3, 1): M}, fleets=fleets, leaders=leaders, destroyed={(0, 2)})
    intents = BotStrategy().decide(view)
    assert intents
    for intent in intents:
        pos = target_pos(view, intent)
        square = view.squares[pos]
        assert not square.destroyed and square.colony is None
        assert pos not in {(0, 1), (2, 1)}
        if intent.order == COLONIZE_MINING:
            assert square.terrain == "M"
        if intent.order == COLONIZE:
            assert square.terrain == "."
    orders = chosen(intents)
    assert len(orders) <= 2
    assert len({o.fleet for o in orders}) == len(orders) and len({o.target for o in orders}) == len(orders)


def test_respects_allowed_order_types_and_queued_orders():
    leaders = [LeaderInfo(20, ME, P, (3, 1))]
    locked = MyFleet(10, COLONIST, M, None, frozenset())  # the server allows it nothing now
    queued = MyFleet(11, COLONIST, S, None, frozenset({COLONIZE}), (("Colonize", 2 + 2 * (2 * 7 + 2)),))
    fleets = [locked, queued, colonist(12, M)]
    view = make_view(MAP, fleets=fleets, leaders=leaders)
    orders = BotStrategy().decide(view)
    assert {o.fleet for o in orders} <= {12}
    assert len(chosen(orders)) == 1  # one of the two orders of the turn is already queued
    assert all(target_pos(view, o) != (2, 2) for o in orders)


def test_passes_when_nothing_helps_then_plays_when_stalled():
    rows = ["A.", ".."]
    leaders = [LeaderInfo(40, THEM, P, (1, 1))]
    fleets = [colonist(10, M)]
    view = make_view(rows, fleets=fleets, leaders=leaders)
    assert BotStrategy().decide(view) == []  # every square scores for the opponent
    stalled = make_view(rows, fleets=fleets, leaders=leaders, stalled=3)
    (order,) = chosen(BotStrategy().decide(stalled))
    assert order.order == COLONIZE and order.value < 0


def test_game_over_means_no_orders():
    fleets = [colonist(10, M), leader(20, M)]
    view = make_view(MAP, fleets=fleets, leaders=[LeaderInfo(20, ME, M)], over=True)
    assert BotStrategy().decide(view) == []
    assert RandomStrategy(1).decide(view) == []


def reinforcing_view(combat: CombatInfo | None, eligible: int, other: int = 2, their_hand: int = 6):
    fleets = [MyFleet(10 + i, COLONIST, S, None, frozenset({REINFORCE})) for i in range(eligible)]
    fleets += [MyFleet(30 + i, COLONIST, M, None, frozenset()) for i in range(other)]
    return make_view(
        MAP, fleets=fleets, combat=combat, combat_turn=True, hands={ME: eligible + other, THEM: their_hand}
    )


def test_combatant_reinforces_just_enough_for_a_sure_win():
    # We defend 3 against 0 and they hold 2 colonists: 3 + 0 >= 0 + 2 already; ties are ours.
    view = reinforcing_view(CombatInfo(False, "them", 0, "me", 3), eligible=4, their_hand=2)
    assert BotStrategy().decide(view) == []
    # We attack 1 against 2; they hold 6: a sure win needs 2 + 6 + 1 - 1 = 8 > 4 eligible,
    # but 4 can beat their 2: send everything.
    view = reinforcing_view(CombatInfo(True, "me", 1, "them", 2), eligible=4)
    intents = BotStrategy().decide(view)
    assert [i.order for i in intents] == [REINFORCE] * 4 and {i.fleet for i in intents} == {10, 11, 12, 13}
    # We attack 1 against 2 and hold 3 that may reinforce; they hold 1: 2 + 1 + 1 - 1 = 3.
    view = reinforcing_view(CombatInfo(True, "me", 1, "them", 2), eligible=3, their_hand=1)
    assert len(BotStrategy().decide(view)) == 3
    view = reinforcing_view(CombatInfo(True, "me", 1, "them", 1), eligible=3, their_hand=1)
    assert len(BotStrategy().decide(view)) == 2


def test_combatant_does_not_waste_colonists_on_a_lost_cause():
    view = reinforcing_view(CombatInfo(False, "me", 0, "them", 9), eligible=2)
    assert BotStrategy().decide(view) == []


def test_combatant_with_unknown_strengths_sends_everything():
    view = reinforcing_view(None, eligible=2)
    assert len(BotStrategy().decide(view)) == 2


def test_bystander_sends_nothing_and_is_recognised():
    fleets = [MyFleet(10, COLONIST, S, None, frozenset())]
    view = make_view(MAP, fleets=fleets, combat=CombatInfo(True, "x", 1, "y", 1), combat_turn=True)
    assert view.bystander
    assert BotStrategy().decide(view) == []
    # A combatant with nothing to send is not a bystander: it must still finish the turn.
    view = make_view(MAP, fleets=fleets, combat=CombatInfo(True, "me", 1, "y", 1), combat_turn=True)
    assert not view.bystander


def test_revolt_only_when_it_can_be_won():
    # Their scientist leader at (3, 1) has 1 scientist neighbour; (2, 2) and (4, 2) touch the
    # same region. With three scientists in hand and more support we revolt; alone we do not.
    rows = [
        ".......",
        "..A.A..",
        "...A...",
        ".......",
    ]
    them = LeaderInfo(40, THEM, S, (3, 0))
    fleets = [leader(21, S)] + [colonist(10 + i, S) for i in range(3)]
    view = make_view(
        rows,
        colonies={(3, 2): S},
        fleets=fleets,
        leaders=[LeaderInfo(21, ME, S), them],
        hands={ME: 3, THEM: 0},
    )
    moves = [i for i in BotStrategy().decide(view) if i.order == MOVE]
    assert moves and "revolt" in moves[0].reason
    weak = make_view(
        rows,
        colonies={(3, 2): S},
        fleets=[leader(21, S)],
        leaders=[LeaderInfo(21, ME, S), them],
        hands={ME: 0, THEM: 6},
    )
    strategy = BotStrategy()
    for intent in strategy.decide(weak):
        assert "revolt" not in intent.reason or intent.value <= 0


# ------------------------------------------------------------------------------------------
# Against the rules engine: every chosen order is accepted and then executes
# ------------------------------------------------------------------------------------------

_KIND = {Kind.MERCHANT: M, Kind.SCIENTIST: S, Kind.SETTLER: P, Kind.MINING: R}
_ROLE = {Role.COLONIST: COLONIST, Role.LEADER: LEADER, Role.BOMBER: BOMBER}


def view_of_state(state, me: int, exact_regions: bool = True, stalled: int = 0) -> View:
    """What the wire would show player ``me`` of a ruleset state (R27: opponents' colonist
    kinds hidden; regions as the server labels them)."""
    board = state.board
    labels = region_of_each_member(board, state.colonies, state.leader_at.values(), state.unification_cells)
    squares = {}
    for cell, (x, y) in enumerate(board.coords):
        kind = state.colonies.get(cell)
        label = labels.get(cell)
        squares[(x, y)] = Square(
            x,
            y,
            board.system_id(cell),
            "M" if board.terrain[cell] == "M" else ".",
            _KIND.get(kind),
            cell in state.artifacts,
            cell in state.destroyed,
            0 if label is None else board.system_id(label),
        )
    leaders, fleets, hands = [], [], {}
    for fleet in state.fleets.values():
        pos = board.coords[state.leader_at[fleet.id]] if fleet.id in state.leader_at else None
        if fleet.role is Role.LEADER:
            leaders.append(LeaderInfo(fleet.id, fleet.owner, _KIND[fleet.kind], pos))
        if fleet.role is Role.COLONIST:
            hands[fleet.owner] = hands.get(fleet.owner, 0) + 1
        if fleet.owner == me:
            allowed = frozenset(OrderType(t).title for t in allowed_order_types(state, fleet.id))
            fleets.append(MyFleet(fleet.id, _ROLE[fleet.role], _KIND.get(fleet.kind), pos, allowed))
    return View(
        me=me,
        squares=squares,
        leaders=tuple(leaders),
        fleets=tuple(fleets),
        scores=state.player(me).scores,
        hands=hands,
        name=state.player(me).name,
        players={p.id: p.name for p in state.players},
        turn=state.turn,
        exact_regions=exact_regions,
        stalled=stalled,
    )


def intent_orders(state, me: int, intents: list[Intent]) -> list[Order]:
    types = {OrderType(t).title: OrderType(t) for t in range(5)}
    return [Order(me, i.fleet, types[i.order], i.target or 0) for i in intents if not i.alternate]


SMALL_MAP = "..A....M..\n...MM.....\n.A..M..A..\n....MM....\n..A.....A.\n.....M....\n"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    turns=st.integers(0, 40),
    players=st.integers(2, 4),
    small=st.booleans(),
    exact=st.booleans(),
    stalled=st.sampled_from([0, 5]),
)
def test_every_chosen_order_is_accepted_and_executes(seed, turns, players, small, exact, stalled):
    board = parse_map(SMALL_MAP) if small else None
    state = set_up(players, board, seed) if board is not None else set_up(players, seed=seed)
    random_player = RandomPlayer()
    for turn in range(1, turns + 1):
        if state.phase is Phase.OVER:
            break
        orders = []
        for pid in range(1, players + 1):
            orders.extend(random_player(state, pid, game_rng(seed, turn, f"player {pid}")))
        state = resolve_turn(state, orders, game_rng(seed, turn)).state
    if state.phase is Phase.OVER:
        return
    strategy = BotStrategy()
    for me in range(1, players + 1):
        view = view_of_state(state, me, exact_regions=exact, stalled=stalled)
        intents = strategy.decide(view)
        orders = intent_orders(state, me, intents)
        accepted = []
        for order in orders:
            assert check_order(state, order, accepted) is None, (order, intents)
            accepted.append(order)
        if state.phase is Phase.NORMAL:
            assert len(orders) <= 2
            outcome = resolve_turn(state, orders, random.Random(0))
            failures = [e for e in outcome.events if e.kind == "order failed"]
            assert not failures, (failures, intents)
        for intent in intents:  # alternates are legal on their own, too
            if intent.alternate:
                order = intent_orders(state, me, [Intent(intent.fleet, intent.order, intent.target)])[0]
                assert check_order(state, order, []) is None


@pytest.mark.parametrize("seed", range(5))
def test_random_strategy_orders_are_accepted(seed):
    state = set_up(3, seed=seed)
    strategy = RandomStrategy(seed)
    for turn in range(1, 25):
        if state.phase is Phase.OVER:
            break
        orders = []
        for pid in (1, 2, 3):
            mine = intent_orders(state, pid, strategy.decide(view_of_state(state, pid)))
            accepted = []
            for order in mine:
                assert check_order(state, order, accepted) is None
                accepted.append(order)
            orders.extend(mine)
        state = resolve_turn(state, orders, game_rng(seed, turn)).state
