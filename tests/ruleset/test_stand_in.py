"""The stand-in (`ruleset.stand_in`): legal orders on any state, only the player's own view,
deterministic, and games it plays end."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from ruleset import DEFAULT_BOARD, Kind, Order, OrderType, Phase, Role, check_order, end_game
from ruleset.orders import ORDERS_PER_TURN
from ruleset.simulator import GameDidNotEnd, RandomPlayer, play_game, set_up
from ruleset.stand_in import seat_view, stand_in_orders, stand_in_rng
from ruleset.state import EndReason, GameState

from .test_properties import boards, player_counts, seeds


def states_of_a_game(seed: int, players: int, board=DEFAULT_BOARD) -> list[tuple[GameState, list[Order]]]:
    """Every state before a turn of a game of random players, with the orders given in it."""
    seen: list[tuple[GameState, list[Order]]] = []

    def observe(state, orders, outcome) -> None:
        seen.append((state, list(orders)))

    try:
        play_game(players, board, seed, observer=observe, max_turns=120, stall_turns=20)
    except GameDidNotEnd:
        pass
    return seen


def stand_in(state: GameState, player: int, accepted=()) -> tuple[Order, ...]:
    return stand_in_orders(
        seat_view(state, player, accepted), stand_in_rng(state.seed, state.turn + 1, player)
    )


def assert_accepted_one_by_one(state: GameState, orders, accepted=()) -> None:
    mine = [o for o in accepted]
    for order in orders:
        problem = check_order(state, order, mine)
        assert problem is None, (order, problem)
        mine.append(order)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=seeds, players=player_counts, board=boards, data=st.data())
def test_the_stand_in_gives_only_orders_check_order_accepts(seed, players, board, data):
    history = states_of_a_game(seed, players, board)
    if not history:
        return
    state, given_orders = data.draw(st.sampled_from(history))
    player = data.draw(st.integers(1, players))
    # The player may have given some orders of the turn before the stand-in took the seat.
    theirs = [o for o in given_orders if o.player == player]
    accepted = theirs[: data.draw(st.integers(0, len(theirs)))]
    orders = stand_in(state, player, accepted)
    event(f"{state.phase.value}: {len(orders)} orders")
    assert all(o.player == player for o in orders)
    assert_accepted_one_by_one(state, orders, accepted)
    if state.phase is Phase.NORMAL:
        assert len(accepted) + len(orders) <= ORDERS_PER_TURN
    else:
        assert all(o.type == OrderType.REINFORCE for o in orders)


@settings(max_examples=15, deadline=None)
@given(seed=seeds, players=player_counts)
def test_games_of_stand_ins_end(seed, players):
    def strategy(state, player, rng):
        orders = stand_in(state, player)
        assert_accepted_one_by_one(state, orders)
        return list(orders)

    record = play_game(players, DEFAULT_BOARD, seed, strategies=strategy)
    assert record.state.phase is Phase.OVER


def test_one_stand_in_among_random_players_plays_to_the_end():
    random_player = RandomPlayer()

    def strategy(state, player, rng):
        return list(stand_in(state, player)) if player == 2 else random_player(state, player, rng)

    record = play_game(4, DEFAULT_BOARD, 7, strategies=strategy)
    assert record.state.phase is Phase.OVER
    assert any(o.player == 2 for turn in record.orders for o in turn)


def _hide_differently(state: GameState, viewer: int, rng: random.Random) -> GameState:
    """The same game except for what `viewer` cannot see: opponents' colonist kinds and scores."""
    fleets = {
        fid: replace(f, kind=rng.choice(list(Kind))) if f.role is Role.COLONIST and f.owner != viewer else f
        for fid, f in state.fleets.items()
    }
    players = tuple(
        p if p.id == viewer else replace(p, scores=tuple(rng.randrange(20) for _ in range(5)))
        for p in state.players
    )
    return replace(state, fleets=fleets, players=players)


@settings(max_examples=40, deadline=None)
@given(seed=seeds, players=player_counts, data=st.data())
def test_the_stand_in_sees_only_what_its_player_sees(seed, players, data):
    history = states_of_a_game(seed, players)
    state, _ = data.draw(st.sampled_from(history))
    player = data.draw(st.integers(1, players))
    other = _hide_differently(state, player, random.Random(data.draw(seeds)))
    assert seat_view(other, player) == seat_view(state, player)
    assert stand_in(other, player) == stand_in(state, player)


def test_other_players_orders_are_not_passed_on():
    state = set_up(3, DEFAULT_BOARD, 5)
    theirs = [Order(1, f.id, int(OrderType.COLONIZE), 2) for f in state.hand(1)[:1]]
    assert seat_view(state, 2, theirs).accepted == ()
    assert seat_view(state, 1, theirs).accepted == tuple(theirs)


def test_the_same_seat_and_seed_give_the_same_orders_and_others_may_differ():
    state = set_up(4, DEFAULT_BOARD, 11)
    first = stand_in(state, 1)
    assert first == stand_in(state, 1)
    assert len(first) == ORDERS_PER_TURN
    assert {o.player for o in stand_in(state, 3)} == {3}


def test_two_accepted_orders_leave_nothing_to_give():
    state = set_up(2, DEFAULT_BOARD, 3)
    orders = stand_in(state, 1)
    assert len(orders) == 2
    assert stand_in(state, 1, orders) == ()
    assert len(stand_in(state, 1, orders[:1])) == 1
    assert stand_in(state, 1, orders[:1])[0].fleet != orders[0].fleet


def test_a_game_that_is_over_gets_no_orders():
    state = end_game(set_up(2, DEFAULT_BOARD, 3), EndReason.OPERATOR).state
    assert stand_in(state, 1) == ()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_in_a_combat_turn_a_combatant_reinforces_with_everything_it_may(seed):
    history = states_of_a_game(seed, 4)
    combats = [state for state, _ in history if state.phase is Phase.COMBAT]
    assert combats
    state = combats[0]
    conflict = state.active_conflict
    assert conflict is not None
    owners = {state.fleets[conflict.attacker].owner, state.fleets[conflict.defender].owner}
    for player in (p.id for p in state.players):
        orders = stand_in(state, player)
        eligible = [
            f.id for f in state.hand(player) if f.kind is conflict.reinforcement_kind and player in owners
        ]
        assert sorted(o.fleet for o in orders) == eligible
