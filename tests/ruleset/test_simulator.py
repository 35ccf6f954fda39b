"""The headless simulator: complete games, pluggable strategies, clear errors for games whose
players never act, and orders the server would accept."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ruleset import (
    DEFAULT_BOARD,
    EndReason,
    Kind,
    Order,
    OrderType,
    Phase,
    add_player,
    check_order,
    new_game,
    parse_map,
)
from ruleset.board import grid_map_text
from ruleset.ending import stalemate
from ruleset.position import Position
from ruleset.simulator import GameDidNotEnd, GameRecord, RandomPlayer, play_game, replay, set_up

# 12×7 systems: five artifacts in a ring form one region, so a merchant leader that moves next to
# them collects four and the game ends (R22, R12(3)) long before the small board fills up.
SMALL_MAP = parse_map("""\
............
....AAA.....
....A.A.....
............
.MM......MM.
............
...M....M...
""")


def game_over_bodies(record: GameRecord, outcome_messages) -> list[str]:
    return [m.body for m in outcome_messages if m.subject == "GAME OVER!"]


class LastMessages:
    def __init__(self):
        self.messages = ()

    def __call__(self, before, orders, outcome):
        self.messages = outcome.messages


@pytest.mark.parametrize("board", [DEFAULT_BOARD, SMALL_MAP], ids=["default map", "small map"])
@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_complete_games_end_with_winners(board, players, seed):
    last = LastMessages()
    record = play_game(players, board, seed, observer=last)
    state = record.state
    assert record.ended and state.phase is Phase.OVER
    assert record.turns == state.turn == len(record.orders) > 0
    assert len(state.players) == players
    assert state.result is not None and state.result.winners
    assert set(record.winners) <= {p.name for p in state.players}
    bodies = game_over_bodies(record, last.messages)
    assert len(bodies) == players
    assert all(" ".join(record.winners[:1]) in body for body in bodies)
    # No orders are accepted once the game is over (R25).
    assert check_order(state, Order(1, next(iter(state.fleets)), OrderType.COLONIZE, 2)) is not None


def test_the_small_map_ends_by_artifact_collection():
    reasons = set()

    def watch(before, orders, outcome):
        reasons.update(e.detail for e in outcome.events if e.kind == "game over")

    for seed in range(10):
        play_game(3, SMALL_MAP, seed, observer=watch)
    assert "artifacts" in reasons


def test_sixteen_players_on_a_big_map():
    record = play_game(16, parse_map(grid_map_text(64, 64)), seed=5)
    assert record.ended and len(record.state.players) == 16


def test_players_join_with_their_own_set_up_streams():
    state = set_up(3, DEFAULT_BOARD, seed=9)
    assert [p.name for p in state.players] == ["P1", "P2", "P3"]
    assert sum(state.pool) == 153 - 18
    assert set_up(3, DEFAULT_BOARD, seed=9) == state
    assert set_up(3, DEFAULT_BOARD, seed=10) != state


def test_same_seed_same_record_and_replay():
    one, two = play_game(4, seed=42), play_game(4, seed=42)
    assert one == two
    assert play_game(4, seed=43).orders != one.orders
    assert replay(one)[-1].state == one.state


def test_random_orders_are_accepted_in_sequence_and_use_both_turn_kinds():
    kinds = set()

    def check(before, orders, outcome):
        accepted = []
        for order in orders:
            assert check_order(before, order, accepted) is None
            accepted.append(order)
        kinds.update(OrderType(o.type) for o in orders)
        if before.phase is Phase.NORMAL:
            per_player = {}
            for o in orders:
                per_player[o.player] = per_player.get(o.player, 0) + 1
            assert all(n <= 2 for n in per_player.values())

    for seed in range(5):
        play_game(4, seed=seed, observer=check)
    assert kinds == set(OrderType)


def test_the_random_player_shares_its_per_turn_targets():
    player = RandomPlayer()
    state = set_up(4)
    first = player.candidates(state)
    player(state, 1, __import__("random").Random(1))
    assert player.candidates(state) is first
    assert len(first.habitable) == DEFAULT_BOARD.terrain.count(".")
    assert len(first.mining) == DEFAULT_BOARD.terrain.count("M")
    # Leaders may only go next to a scientist colony: here, next to an artifact system.
    assert first.leader_targets and all(
        any(n in state.artifacts for n in DEFAULT_BOARD.neighbours[c]) for c in first.leader_targets
    )


def test_strategies_are_pluggable():
    seen = []

    def passive(state, player_id, rng):
        seen.append(player_id)
        return []

    random_player = RandomPlayer()
    # One per player, or a mapping with a default: player 2 never acts, the game still ends.
    record = play_game(3, seed=1, strategies={2: passive, None: random_player})
    assert record.ended and set(seen) == {2}
    assert all(o.player != 2 for turn in record.orders for o in turn)
    record = play_game(2, seed=1, strategies=[random_player, random_player])
    assert record.ended
    with pytest.raises(ValueError):
        play_game(3, strategies=[random_player])


def test_players_that_never_act_stall_the_game():
    with pytest.raises(GameDidNotEnd) as stuck:
        play_game(2, seed=0, strategies=lambda state, pid, rng: [], stall_turns=5)
    assert stuck.value.reason == "stalled" and stuck.value.record.turns == 5
    assert "5 normal turns" in str(stuck.value)


def test_max_turns_is_a_clear_error():
    with pytest.raises(GameDidNotEnd) as stuck:
        play_game(4, seed=0, max_turns=3)
    assert stuck.value.reason == "max_turns" and stuck.value.record.turns == 3
    assert "after 3 turns" in str(stuck.value)


def test_a_full_board_ends_in_a_stalemate():
    """R24a: three artifacts and nowhere to go. No colonist can be placed, so neither other end
    condition (≤ 2 artifacts, an empty pool) could ever be reached: the game ends in turn 1."""
    board = parse_map("AAA\n")
    record = play_game(2, board, seed=0)
    assert record.ended and record.turns == 1
    assert record.state.result.reason is EndReason.STALEMATE


def test_only_miners_and_no_mining_systems_left_is_a_stalemate():
    """R24a: every hand holds only mining colonists and every 'M' system is taken, while habitable
    systems are still empty. Leaders could wander for ever; the game ends in turn 1."""
    board = parse_map("A...A\n.....\nMM.A.\n")
    state = new_game(board, seed=3)
    for name in ("P1", "P2"):
        state, _ = add_player(state, name, hand=[Kind.MINING] * 6, bombers=0)
    mines = {board.cell_at(0, 0): Kind.MINING, board.cell_at(1, 0): Kind.MINING}
    state = replace(state, colonies={**state.colonies, **mines}, pool=(0, 0, 0, 36 - 12 - 2))
    assert stalemate(Position(state))
    record = play_game(state=state)
    assert record.ended and record.turns == 1
    assert record.state.result.reason is EndReason.STALEMATE
    assert len(record.state.colonies) == len(state.colonies)


def test_no_stalemate_while_colonists_can_be_placed():
    assert not stalemate(Position(set_up(4)))
    assert not stalemate(Position(set_up(2, parse_map("A.A\n.A.\n"))))
