"""How games end: the stalemate (R24a), the frozen board (R25a), the operator's `end_game`, and that
every game of random players ends within a bounded number of turns, on any small map."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from ruleset import (
    EndReason,
    GameOverError,
    Kind,
    Order,
    OrderType,
    Phase,
    SetupError,
    add_player,
    end_game,
    game_rng,
    join_rng,
    label_regions,
    new_game,
    parse_map,
    resolve_turn,
)
from ruleset.ending import stalemate
from ruleset.position import Position
from ruleset.simulator import play_game, set_up

from .test_properties import small_map_texts

# y=3 MM.MM   (2, 3): a leader spot next to the artifact (2, 2)
# y=2 MMAMM
# y=1 .A.A.   (2, 1) borders the artifacts (1, 1), (3, 1) and (2, 2): three regions
# y=0 MMMMM
CROSS = parse_map("MM.MM\nMMAMM\n.A.A.\nMMMMM\n")


def cross(*, third: str = "leader", p2_hand: tuple[Kind, ...] = (Kind.SETTLER,) * 6):
    """Two players holding no miners; merchant leaders at (0, 1) and (4, 1); at (2, 3) ann's
    scientist leader, or a scientist colony, or nothing."""
    state = new_game(CROSS, seed=2)
    state, _ = add_player(state, "ann", hand=[Kind.SETTLER] * 6)
    state, _ = add_player(state, "bob", hand=list(p2_hand))
    leaders = {
        state.leader(1, Kind.MERCHANT).id: CROSS.cell_at(0, 1),
        state.leader(2, Kind.MERCHANT).id: CROSS.cell_at(4, 1),
    }
    colonies = dict(state.colonies)
    if third == "leader":
        leaders[state.leader(1, Kind.SCIENTIST).id] = CROSS.cell_at(2, 3)
    elif third == "colony":
        colonies[CROSS.cell_at(2, 3)] = Kind.SCIENTIST
    return replace(state, leader_at=leaders, colonies=colonies)


# -- R24a ---------------------------------------------------------------------------------------


def test_a_stalemate_ends_the_game_after_the_refill():
    state = cross()
    assert stalemate(Position(state))
    outcome = resolve_turn(state, [], game_rng(2, 1))
    after = outcome.state
    assert after.phase is Phase.OVER and after.turn == 1
    assert after.result.reason is EndReason.STALEMATE and after.result.winners == (1, 2)
    assert [m.subject for m in outcome.messages] == ["GAME OVER!", "GAME OVER!"]
    assert (
        "The game ended in a stalemate: no colonist fleet could colonize any system."
        in outcome.messages[0].body
    )
    assert [e.detail for e in outcome.events if e.kind == "game over"] == ["stalemate"]


def test_a_mining_colonist_with_an_empty_mining_system_is_no_stalemate():
    state = cross(p2_hand=(Kind.SETTLER,) * 5 + (Kind.MINING,))
    assert not stalemate(Position(state))
    after = resolve_turn(state, [], game_rng(2, 1)).state
    assert after.phase is Phase.NORMAL and after.result is None


def test_three_regions_of_which_two_hold_leaders_are_no_stalemate():
    state = cross(third="colony")
    assert not stalemate(Position(state))
    assert resolve_turn(state, [], game_rng(2, 1)).state.phase is Phase.NORMAL
    # and the colony there is valid: it merges the three regions (two leaders, no conflict)
    order = Order(1, state.hand(1)[0].id, OrderType.COLONIZE, CROSS.system_id(CROSS.cell_at(2, 1)))
    assert CROSS.cell_at(2, 1) in resolve_turn(state, [order], game_rng(2, 1)).state.colonies


def test_no_stalemate_end_while_a_conflict_is_queued():
    """R24a is checked only when no conflict is queued: the combat turn is fought first."""
    board = parse_map("AAA\n.A.\n")  # four artifact systems; (0, 0) and (2, 0) are free
    state = new_game(board, seed=2)
    state, _ = add_player(state, "ann", hand=[Kind.SETTLER] * 6)
    state, _ = add_player(state, "bob", hand=[Kind.SETTLER] * 6)
    ann_scientist, bob_scientist = state.leader(1, Kind.SCIENTIST).id, state.leader(2, Kind.SCIENTIST).id
    state = replace(state, leader_at={ann_scientist: board.cell_at(0, 0)})
    move = Order(2, bob_scientist, OrderType.MOVE, board.system_id(board.cell_at(2, 0)))
    outcome = resolve_turn(state, [move], game_rng(2, 1))
    after = outcome.state
    assert stalemate(Position(after))  # no colonist has a target left ...
    assert after.phase is Phase.COMBAT  # ... but the internal conflict is fought first
    assert not [m for m in outcome.messages if m.subject == "GAME OVER!"]
    fought = resolve_turn(after, [], game_rng(2, 2)).state  # 2:2, the defender ann wins
    assert fought.phase is Phase.NORMAL and bob_scientist not in fought.leader_at


# -- R25a ---------------------------------------------------------------------------------------

ROW = parse_map("A.A.A..\n.......\n.......\n.......\n.......\n")


def test_an_external_conflict_is_left_unfought_when_the_pool_runs_out():
    state = new_game(ROW, seed=0, pool=(0, 0, 0, 0))
    state, _ = add_player(state, "ann", hand=[Kind.MERCHANT] + [Kind.SETTLER] * 5)
    state, _ = add_player(state, "bob", hand=[Kind.SETTLER] * 6)
    c = ROW.cell_at
    leaders = {state.leader(1, Kind.SETTLER).id: c(1, 1), state.leader(2, Kind.SETTLER).id: c(3, 1)}
    state = replace(
        state,
        colonies={**state.colonies, c(1, 0): Kind.SCIENTIST, c(3, 0): Kind.SCIENTIST},
        leader_at=leaders,
    )
    order = Order(1, state.hand(1)[0].id, OrderType.COLONIZE, ROW.system_id(c(2, 1)))
    after = resolve_turn(state, [order], game_rng(0, 1)).state
    assert after.phase is Phase.OVER and after.result.reason is EndReason.POOL
    (conflict,) = after.conflicts
    assert not conflict.internal and conflict.unification == c(2, 1) and not conflict.started
    assert after.unification_cells == {c(2, 1)}
    members = (set(after.colonies) | set(after.leader_at.values())) - after.unification_cells
    labels = label_regions(ROW, members)
    assert c(2, 1) not in labels and labels[c(1, 1)] != labels[c(3, 1)]


def test_an_internal_conflict_is_left_unfought_when_artifacts_run_out():
    board = parse_map("A.A...A\n.......\n.......\n")
    c = board.cell_at
    state = new_game(board, seed=0)
    state, _ = add_player(state, "ann", hand=[Kind.MERCHANT] * 6)
    state, _ = add_player(state, "bob", hand=[Kind.MERCHANT] * 6)
    leaders = {state.leader(1, Kind.MERCHANT).id: c(0, 1), state.leader(2, Kind.SCIENTIST).id: c(5, 1)}
    colonies = {**state.colonies, c(1, 2): Kind.MERCHANT, c(5, 0): Kind.SCIENTIST}
    state = replace(state, leader_at=leaders, colonies=colonies)
    move = Order(1, state.leader(1, Kind.SCIENTIST).id, OrderType.MOVE, board.system_id(c(4, 0)))
    after = resolve_turn(state, [move], game_rng(0, 1)).state
    assert after.phase is Phase.OVER and after.result.reason is EndReason.ARTIFACTS
    (conflict,) = after.conflicts
    assert conflict.internal and conflict.kind is Kind.SCIENTIST and not conflict.started
    assert after.leader_at[conflict.attacker] == c(4, 0)  # nothing else changes


# -- the operator's end -------------------------------------------------------------------------


def test_the_operator_ends_a_game_between_turns():
    state = set_up(3, seed=4)
    state = resolve_turn(state, [], game_rng(4, 1)).state
    outcome = end_game(state)
    ended = outcome.state
    assert ended.phase is Phase.OVER and ended.turn == state.turn == 1
    assert ended.result.reason is EndReason.OPERATOR
    assert replace(ended, phase=state.phase, result=None) == state  # the board is frozen as it stands
    assert [(m.player, m.subject, m.turn) for m in outcome.messages] == [
        (p, "GAME OVER!", 1) for p in (1, 2, 3)
    ]
    assert "The game was ended by the operator." in outcome.messages[0].body
    with pytest.raises(GameOverError):
        end_game(ended)
    with pytest.raises(GameOverError):
        resolve_turn(ended, [], game_rng(4, 2))


def test_the_operator_may_end_a_game_in_a_combat_phase_and_the_conflict_stays():
    state = new_game(ROW, seed=0)
    state, _ = add_player(state, "ann", hand=[Kind.MERCHANT] + [Kind.SETTLER] * 5)
    state, _ = add_player(state, "bob", hand=[Kind.SETTLER] * 6)
    c = ROW.cell_at
    leaders = {state.leader(1, Kind.SETTLER).id: c(1, 1), state.leader(2, Kind.SETTLER).id: c(3, 1)}
    state = replace(
        state,
        colonies={**state.colonies, c(1, 0): Kind.SCIENTIST, c(3, 0): Kind.SCIENTIST},
        leader_at=leaders,
    )
    order = Order(1, state.hand(1)[0].id, OrderType.COLONIZE, ROW.system_id(c(2, 1)))
    combat = resolve_turn(state, [order], game_rng(0, 1)).state
    assert combat.phase is Phase.COMBAT
    ended = end_game(combat).state
    assert ended.conflicts == combat.conflicts and ended.unification_cells == {c(2, 1)}


# -- every game ends ----------------------------------------------------------------------------

# Random players on maps of up to 10 x 8 systems end within ~30 turns (measured over thousands of
# games); the bound leaves a wide margin and still fails a game that goes on for ever.
TURN_BOUND = 400
POOLS = st.one_of(
    st.just((30, 57, 30, 36)),
    st.just((0, 0, 0, 60)),  # every hand all mining colonists
    st.just((0, 40, 0, 0)),
    st.tuples(*(st.integers(0, 6) for _ in range(4))),
)
SPECIAL_MAPS = st.sampled_from(["AAA\n", "A\n", "AMA\n", "MMM\nAAA\n", "A.A\n.M.\nA.A\n", "AA\nAA\n"])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    board=st.one_of(SPECIAL_MAPS, small_map_texts(), small_map_texts(min_artifacts=3)).map(parse_map),
    players=st.integers(1, 6),
    seed=st.integers(0, 2**32 - 1),
    pool=POOLS,
)
def test_every_game_ends_within_a_bounded_number_of_turns(board, players, seed, pool):
    state = new_game(board, seed, pool)
    try:
        for i in range(1, players + 1):
            state, _ = add_player(state, f"P{i}", join_rng(seed, i))
    except SetupError:
        assume(False)  # the pool cannot deal every hand
    record = play_game(state=state, max_turns=TURN_BOUND)  # GameDidNotEnd otherwise
    assert record.ended and record.turns <= TURN_BOUND
    event(f"ended by {record.state.result.reason.value}")
    event(f"{min(record.turns // 10 * 10, 30)}+ turns")


def test_a_game_without_players_resolves_a_turn():
    """An operator may end the turn of a game nobody has joined yet."""
    import random

    from ruleset import resolve_turn
    from ruleset.setup import new_game

    outcome = resolve_turn(new_game(seed=3), [], random.Random(3))
    assert outcome.state.turn == 1 and outcome.state.players == ()
