"""The bot's seat view built from the wire (`clients.seat_frames`): the same `SeatView` the
server's stand-in gets, and the computer player's orders sent as intents the rules accept."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clients.bot_view import Intent, LeaderInfo, MyFleet, Square, View
from clients.seat_frames import HIDDEN_FLEET_IDS, AiStrategy, RandomStrategy, WireBoardError, seat_from_view
from clients.tae_model import ColonyKind, FleetKind
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
from ruleset.ai import Level
from ruleset.regions import region_of_each_member
from ruleset.seat import seat_view
from ruleset.simulator import RandomPlayer, set_up

M, S, P, R = ColonyKind.MERCHANT, ColonyKind.SCIENTIST, ColonyKind.SETTLER, ColonyKind.MINING
COLONIST, LEADER, BOMBER = FleetKind.COLONIST, FleetKind.LEADER, FleetKind.BOMBER

_KIND = {Kind.MERCHANT: M, Kind.SCIENTIST: S, Kind.SETTLER: P, Kind.MINING: R}
_ROLE = {Role.COLONIST: COLONIST, Role.LEADER: LEADER, Role.BOMBER: BOMBER}


def view_of_state(state, me: int, exact_regions: bool = True) -> View:
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
    )


def intent_orders(state, me: int, intents: list[Intent]) -> list[Order]:
    types = {OrderType(t).title: OrderType(t) for t in range(5)}
    return [Order(me, i.fleet, types[i.order], i.target or 0) for i in intents if not i.alternate]


SMALL_MAP = "..A....M..\n...MM.....\n.A..M..A..\n....MM....\n..A.....A.\n.....M....\n"


def played_state(seed: int, turns: int, players: int, small: bool):
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
    return state


games = dict(
    seed=st.integers(0, 10_000), turns=st.integers(0, 40), players=st.integers(2, 4), small=st.booleans()
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**games)
def test_the_seat_built_from_the_wire_is_the_rulesets_own(seed, turns, players, small):
    state = played_state(seed, turns, players, small)
    for me in range(1, players + 1):
        ours = seat_from_view(view_of_state(state, me)).seat
        theirs = seat_view(state, me)
        assert ours.board.coords == theirs.board.coords
        assert ours.board.terrain.replace("A", ".") == theirs.board.terrain.replace("A", ".")
        assert ours.player == me and ours.allowed == theirs.allowed
        mine = {fid: f for fid, f in theirs.view.fleets.items() if f.owner == me}
        assert {fid: f for fid, f in ours.view.fleets.items() if f.owner == me} == mine
        leaders = {fid: f for fid, f in theirs.view.fleets.items() if f.role is Role.LEADER}
        assert {fid: f for fid, f in ours.view.fleets.items() if f.role is Role.LEADER} == leaders
        hidden = [f for f in ours.view.fleets.values() if f.id >= HIDDEN_FLEET_IDS]
        assert all(f.kind is None and f.owner != me for f in hidden)
        assert len(hidden) == sum(
            1 for f in state.fleets.values() if f.role is Role.COLONIST and f.owner != me
        )
        view, real = ours.view, theirs.view
        assert (view.colonies, view.artifacts, view.destroyed, view.scores) == (
            real.colonies,
            real.artifacts,
            real.destroyed,
            real.scores,
        )


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**games, level=st.sampled_from(list(Level)))
def test_every_ai_order_from_the_wire_is_accepted(seed, turns, players, small, level):
    state = played_state(seed, turns, players, small)
    if state.phase is Phase.OVER:
        return
    strategy = AiStrategy(level, seed, budget=8)
    for me in range(1, players + 1):
        intents = strategy.decide(view_of_state(state, me))
        orders = intent_orders(state, me, intents)
        accepted: list[Order] = []
        for order in orders:
            assert check_order(state, order, accepted) is None, (order, intents)
            accepted.append(order)


@pytest.mark.parametrize("seed", range(4))
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


def test_the_intents_carry_the_servers_system_ids():
    """A server numbering its systems its own way: the AI reasons on the ruleset's board and the
    bot sends the server's ids."""
    state = set_up(2, seed=3)
    view = view_of_state(state, 1)
    shifted = {
        pos: Square(s.x, s.y, s.system_id + 5000, s.terrain, s.colony, s.artifact, s.destroyed, s.region)
        for pos, s in view.squares.items()
    }
    moved = View(**{**view.__dict__, "squares": shifted})
    plain = AiStrategy(Level.NORMAL, 1).decide(view)
    renamed = AiStrategy(Level.NORMAL, 1).decide(moved)
    assert plain and [i.target + 5000 if i.target is not None else None for i in plain] == [
        i.target for i in renamed
    ]


def test_a_board_with_a_gap_is_refused_with_a_reason():
    view = view_of_state(set_up(2, seed=1), 1)
    squares = dict(view.squares)
    del squares[(1, 0)]
    with pytest.raises(WireBoardError, match="gap"):
        seat_from_view(View(**{**view.__dict__, "squares": squares}))


def test_a_finished_game_or_a_bystanders_combat_gives_no_intents():
    view = view_of_state(set_up(2, seed=1), 1)
    assert AiStrategy().decide(View(**{**view.__dict__, "over": True})) == []
