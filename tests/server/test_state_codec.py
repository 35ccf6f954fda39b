"""server.database.state_codec: game states, messages, events and set-ups survive JSON exactly."""

import json
import random
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ruleset import (
    DEFAULT_BOARD,
    EndReason,
    GameState,
    Kind,
    Mention,
    MentionKind,
    Message,
    Order,
    OrderType,
    Phase,
    add_player,
    end_game,
    game_rng,
    new_game,
    parse_map,
    resolve_turn,
)
from ruleset.board import grid_map_text
from ruleset.simulator import RandomPlayer, set_up
from server.database import state_codec as codec
from server.model.store import GameSetup
from server.model.timer_settings import TIMER_KINDS, TimerSettings

pytestmark = pytest.mark.timeout(60)

BOARDS = [
    DEFAULT_BOARD,
    parse_map(grid_map_text(7, 5, 4)),
    parse_map("A.M\n.A.\n..M\n"),
    parse_map("\n.A.\nMA.\n"),
]
PLAYER = RandomPlayer()


def played(board, players, seed, turns):
    """States, messages and events of a real game: random legal orders, up to `turns` turns."""
    state = set_up(players, board, seed)
    history = [(state, (), ())]
    while state.phase is not Phase.OVER and state.turn < turns:
        turn = state.turn + 1
        orders = [o for p in state.players for o in PLAYER(state, p.id, game_rng(seed, turn, f"p{p.id}"))]
        outcome = resolve_turn(state, orders, game_rng(seed, turn))
        state = outcome.state
        history.append((state, outcome.messages, outcome.events))
    return history


def through_json(data):
    return json.loads(json.dumps(data))


def assert_same_state(decoded: GameState, state: GameState):
    assert decoded == state
    # equal, and alike in the ways equality does not see
    assert list(decoded.fleets) == list(state.fleets)
    assert list(decoded.leader_at.items()) == list(state.leader_at.items())
    assert list(decoded.colonies.items()) == list(state.colonies.items())
    assert all(type(k) is int for k in decoded.fleets)
    assert all(type(k) is Kind for k in decoded.colonies.values())
    assert all(type(p.scores) is tuple for p in decoded.players)
    assert type(decoded.artifacts) is frozenset and type(decoded.pool) is tuple
    assert decoded.phase is state.phase
    if state.result is not None:
        assert list(decoded.result.final) == list(state.result.final)
        assert all(type(v) is tuple for v in decoded.result.distributed.values())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    board=st.sampled_from(BOARDS),
    players=st.integers(1, 5),
    seed=st.integers(0, 2**40),
    turns=st.integers(0, 80),
)
def test_states_of_real_games_round_trip(board, players, seed, turns):
    for state, messages, events in played(board, players, seed, turns):
        data = codec.encode_state(state)
        assert through_json(data) == data  # only JSON-native values
        decoded = codec.decode_state(through_json(data))
        assert_same_state(decoded, state)
        assert codec.encode_state(decoded) == data
        assert codec.decode_messages(through_json(codec.encode_messages(messages))) == messages
        assert codec.decode_events(through_json(codec.encode_events(events))) == events


def test_finished_games_keep_their_result():
    for seed in range(3):
        final = played(DEFAULT_BOARD, 4, seed, 1000)[-1][0]
        assert final.phase is Phase.OVER and final.result is not None
        decoded = codec.state_from_json(codec.state_to_json(final))
        assert_same_state(decoded, final)
        assert decoded.result.reason is final.result.reason


def test_messages_keep_their_mentions():
    history = played(DEFAULT_BOARD, 3, 7, 40)
    messages = [m for _, turn_messages, _ in history for m in turn_messages]
    assert any(m.mentions for m in messages)
    assert codec.decode_messages(through_json(codec.encode_messages(messages))) == tuple(messages)
    one = Message(2, 5, "COMBAT!", "text", (Mention(MentionKind.PLAYER, 1), Mention(MentionKind.SYSTEM, 40)))
    assert codec.encode_message(one) == [2, 5, "COMBAT!", "text", [[2, 1], [1, 40]]]


def test_messages_stored_before_mentions_still_decode():
    assert codec.decode_message([1, 3, "Turn complete", "Your Current Score: "]) == Message(
        1, 3, "Turn complete", "Your Current Score: "
    )


def frozen_conflict_state():
    """A game that ended (R24, empty pool) with an external conflict left unfought (R25a)."""
    board = parse_map("A.A.A..\n.......\n.......\n")
    c = board.cell_at
    state = new_game(board, seed=0, pool=(0, 0, 0, 0))
    state, _ = add_player(state, "ann", hand=[Kind.MERCHANT] + [Kind.SETTLER] * 5)
    state, _ = add_player(state, "bob", hand=[Kind.SETTLER] * 6)
    leaders = {state.leader(1, Kind.SETTLER).id: c(1, 1), state.leader(2, Kind.SETTLER).id: c(3, 1)}
    colonies = {**state.colonies, c(1, 0): Kind.SCIENTIST, c(3, 0): Kind.SCIENTIST}
    state = replace(state, colonies=colonies, leader_at=leaders)
    order = Order(1, state.hand(1)[0].id, OrderType.COLONIZE, board.system_id(c(2, 1)))
    return resolve_turn(state, [order], game_rng(0, 1)).state


def test_frozen_conflicts_and_every_end_reason_are_kept():
    ended = frozen_conflict_state()
    assert ended.phase is Phase.OVER and ended.conflicts and ended.result.reason is EndReason.POOL
    decoded = codec.state_from_json(codec.state_to_json(ended))
    assert_same_state(decoded, ended)
    assert decoded.unification_cells == ended.unification_cells
    state = set_up(2, DEFAULT_BOARD, 3)
    for reason in EndReason:
        over = end_game(state, reason).state
        assert codec.decode_state(through_json(codec.encode_state(over))).result.reason is reason


def test_results_stored_before_the_end_reason_still_decode():
    """Before R24a and end_game, a game ended by artifacts (at most 2 left) or by the empty pool."""
    by_pool = codec.encode_state(frozen_conflict_state())
    del by_pool["result"]["reason"]
    assert codec.decode_state(by_pool).result.reason is EndReason.POOL
    state = set_up(2, DEFAULT_BOARD, 3)
    few = replace(state, artifacts=frozenset(sorted(state.artifacts)[:2]))
    by_artifacts = codec.encode_state(end_game(few, EndReason.ARTIFACTS).state)
    del by_artifacts["result"]["reason"]
    assert codec.decode_state(by_artifacts).result.reason is EndReason.ARTIFACTS


def test_order_of_mappings_is_kept_even_when_not_ascending():
    state = set_up(3, DEFAULT_BOARD, 5)
    shuffled = list(state.fleets.items())
    random.Random(1).shuffle(shuffled)
    state = replace(state, fleets=dict(shuffled), leader_at={9999: 3, 5: 1})
    decoded = codec.decode_state(through_json(codec.encode_state(state)))
    assert list(decoded.fleets) == [fid for fid, _ in shuffled]
    assert list(decoded.leader_at.items()) == [(9999, 3), (5, 1)]


def test_a_board_is_built_once_and_the_default_board_is_shared():
    state = set_up(2, DEFAULT_BOARD, 1)
    assert codec.decode_state(through_json(codec.encode_state(state))).board is DEFAULT_BOARD
    other = set_up(2, BOARDS[1], 1)
    first = codec.decode_state(through_json(codec.encode_state(other))).board
    assert codec.decode_state(through_json(codec.encode_state(other))).board is first


timers = st.builds(
    TimerSettings,
    kind=st.sampled_from(TIMER_KINDS),
    turn_length=st.integers(0, 10**6),
    turn_players_min=st.integers(0, 64),
    turn_player_threshold=st.integers(0, 100),
    turn_length_over_threshold=st.integers(0, 10**6),
    turn_length_under_threshold=st.integers(0, 10**6),
)
setups = st.builds(
    GameSetup,
    name=st.text(min_size=1, max_size=40),
    map_text=st.none() | st.sampled_from([b.to_text() for b in BOARDS]),
    seed=st.integers(-(2**63), 2**63 - 1),
    timer=timers,
    max_players=st.integers(0, 100),
    auto_add=st.booleans(),
    account_creation=st.booleans(),
    description=st.text(max_size=200),
    ctime=st.integers(0, 2**40),
)


@settings(max_examples=50, deadline=None)
@given(setup=setups)
def test_setups_round_trip(setup):
    data = codec.encode_setup(setup)
    assert through_json(data) == data
    assert codec.decode_setup(through_json(data)) == setup


@pytest.mark.parametrize(
    "mangle",
    [
        lambda d: d.update(v=99),
        lambda d: d.pop("fleets"),
        lambda d: d.update(phase="sideways"),
        lambda d: d.update(fleets=[[1, 2]]),
        lambda d: d.update(colonies=[[3, 17]]),
    ],
)
def test_what_is_not_a_state_is_refused_with_a_codec_error(mangle):
    data = codec.encode_state(set_up(2, DEFAULT_BOARD, 3))
    mangle(data)
    with pytest.raises(codec.CodecError):
        codec.decode_state(data)


def test_broken_messages_events_and_setups_are_refused():
    with pytest.raises(codec.CodecError):
        codec.decode_message([1, 2, "subject"])
    with pytest.raises(codec.CodecError):
        codec.decode_message([1, 2, "subject", "body", [[99, 1]]])
    with pytest.raises(codec.CodecError):
        codec.decode_event(None)
    with pytest.raises(codec.CodecError):
        codec.decode_setup({"name": "x"})
