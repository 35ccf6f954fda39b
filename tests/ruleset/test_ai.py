"""The computer player (`ruleset.ai`) at every level: orders `check_order` accepts, decisions
from the seat's view alone, the same decision for the same view, stream and budget; `hard`'s
search within its budget; and a short fixed-seed tournament (`ruleset.tournament`)."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ruleset import DEFAULT_BOARD, Order, Phase, check_order
from ruleset.ai import Level, ai_rng, decide, parse_level, stop_after
from ruleset.ai.greedy import normal_orders
from ruleset.ai.search import candidate_turns, hard_orders
from ruleset.ai.worlds import sample_world, unseen_kinds
from ruleset.kinds import FULL_POOL, Role
from ruleset.seat import seat_view
from ruleset.simulator import play_game, set_up
from ruleset.tournament import game_specs, main, play, summary, wilson
from ruleset.visibility import visible_to

from .test_properties import boards, player_counts, seeds
from .test_stand_in import _hide_differently, assert_accepted_one_by_one, states_of_a_game

LEVELS = list(Level)
TINY = 6  # playouts: enough to exercise the search, quick enough for property tests


def ai(state, player, level, accepted=(), budget=TINY):
    seat = seat_view(state, player, accepted)
    return decide(seat, level, ai_rng(state.seed, state.turn + 1, player), budget=budget)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=seeds, players=player_counts, board=boards, level=st.sampled_from(LEVELS), data=st.data())
def test_every_level_gives_only_orders_check_order_accepts(seed, players, board, level, data):
    history = states_of_a_game(seed, players, board)
    if not history:
        return
    state, given_orders = data.draw(st.sampled_from(history))
    player = data.draw(st.integers(1, players))
    theirs = [o for o in given_orders if o.player == player]
    accepted = theirs[: data.draw(st.integers(0, len(theirs)))]
    if any(check_order(state, o, accepted[:i]) is not None for i, o in enumerate(accepted)):
        return
    orders = ai(state, player, level, accepted)
    assert all(o.player == player for o in orders)
    assert_accepted_one_by_one(state, orders, accepted)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=seeds, players=player_counts, level=st.sampled_from(LEVELS), data=st.data())
def test_no_level_reads_what_the_seat_cannot_see(seed, players, level, data):
    """Opponents' colonist kinds, their scores and the pool's make-up are hidden (R27): states
    that differ only there give the same decision."""
    history = states_of_a_game(seed, players)
    state, _ = data.draw(st.sampled_from(history))
    player = data.draw(st.integers(1, players))
    rng = random.Random(data.draw(seeds))
    other = _hide_differently(state, player, rng)
    total = sum(state.pool)
    cut = sorted(rng.randint(0, total) for _ in range(3))
    other = replace(other, pool=(cut[0], cut[1] - cut[0], cut[2] - cut[1], total - cut[2]))
    assert seat_view(other, player) == seat_view(state, player)
    assert ai(other, player, level) == ai(state, player, level)


@pytest.mark.parametrize("level", LEVELS)
def test_the_same_view_stream_and_budget_give_the_same_orders(level):
    state = set_up(4, DEFAULT_BOARD, 11)
    assert ai(state, 2, level) == ai(state, 2, level)


@pytest.mark.parametrize("level", LEVELS)
def test_games_of_each_level_end(level):
    def strategy(state, player, rng):
        return list(decide(seat_view(state, player), level, rng, budget=3, depth=2))

    record = play_game(3, set_up(3, DEFAULT_BOARD, 2).board, 2, strategy, max_turns=400, stall_turns=60)
    assert record.state.phase is Phase.OVER


def test_a_world_agrees_with_the_seat_view():
    state = set_up(4, DEFAULT_BOARD, 5)
    seat = seat_view(state, 2)
    world = sample_world(seat, random.Random(1))
    mine = visible_to(world, 2)
    assert (mine.fleets, mine.colonies, mine.scores, mine.pool_total) == (
        seat.view.fleets,
        seat.view.colonies,
        seat.view.scores,
        seat.view.pool_total,
    )
    hidden = sum(1 for f in world.fleets.values() if f.role is Role.COLONIST and f.owner != 2)
    assert sum(unseen_kinds(seat)) == sum(FULL_POOL) - 6 >= hidden + sum(world.pool)


def test_hard_offers_normals_answer_first_and_keeps_it_without_evidence():
    state = set_up(4, DEFAULT_BOARD, 7)
    seat = seat_view(state, 1)
    normal = normal_orders(seat, random.Random(ai_rng(7, 1, 1).random()))
    turns = candidate_turns(seat, ai_rng(7, 1, 1))
    assert turns[0] == normal and len(set(turns)) == len(turns) > 1
    stopped = hard_orders(seat, ai_rng(7, 1, 1), iterations=200, should_stop=lambda: True)
    assert stopped == normal  # stopped before any playout: normal's answer


def test_hard_stops_when_asked_and_within_its_budget():
    state = set_up(4, DEFAULT_BOARD, 7)
    seat = seat_view(state, 1)
    calls = []

    def stop_after_ten() -> bool:
        calls.append(1)
        return len(calls) > 10

    orders = hard_orders(seat, ai_rng(7, 1, 1), iterations=500, should_stop=stop_after_ten)
    assert len(calls) == 11 and orders
    assert_accepted_one_by_one(state, orders)


def test_a_time_bound_stops_the_search_at_its_bound_with_the_best_so_far():
    """`stop_after` on the caller's clock (here one that moves 0.1 s per reading): the search asks
    before every playout and answers when a second has passed, however large its budget."""
    now = [0.0]

    def clock() -> float:
        now[0] += 0.1
        return now[0]

    raised = [False]
    should_stop = stop_after(1.0, clock, lambda: raised[0])
    assert now[0] == 0.1 and not should_stop()  # started at 0.1, now 0.2
    state = set_up(4, DEFAULT_BOARD, 7)
    seat = seat_view(state, 1)
    orders = hard_orders(seat, ai_rng(7, 1, 1), iterations=100_000, should_stop=should_stop)
    assert 1.1 <= now[0] <= 1.3 and orders  # stopped at its bound, after a few playouts
    assert_accepted_one_by_one(state, orders)
    raised[0] = True
    later = stop_after(60.0, clock, lambda: raised[0])
    assert later()  # the other reason to stop counts too


def test_a_finished_game_gets_no_orders_at_any_level():
    record = play_game(2, DEFAULT_BOARD, 1)
    for level in LEVELS:
        assert ai(record.state, 1, level) == ()


def test_levels_by_name():
    assert parse_level(" Hard ") is Level.HARD
    with pytest.raises(ValueError, match="easy, normal, hard"):
        parse_level("expert")


def test_wilson_interval():
    low, high = wilson(20, 40)
    assert low == pytest.approx(0.352, abs=0.001) and high == pytest.approx(0.648, abs=0.001)
    assert wilson(0, 0) == (0.0, 1.0)


def test_a_short_fixed_seed_tournament():
    """Two games (the default map and a random small one), seats rotated; the standing's places."""
    players = [Level.HARD, Level.NORMAL, Level.EASY]
    specs = game_specs(players, 2, seed=4, budget=4, depth=2)
    assert [s.levels for s in specs] == [tuple(players), (Level.NORMAL, Level.EASY, Level.HARD)]
    results = [play(spec) for spec in specs]
    assert results == [play(spec) for spec in specs]  # deterministic
    assert [r.default_map for r in results] == [True, False]
    out = summary(results, players)
    assert out["games"] == 2
    assert sum(entry["seat_games"] for entry in out["levels"].values()) == 3 * out["ended"]
    for entry in out["levels"].values():
        assert 1 <= entry["mean_place"] <= 3 and 0 <= entry["win_rate"] <= 1


def test_the_tournament_command(capsys):
    assert main(["--players", "normal,easy", "--games", "2", "--seed", "1", "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert "normal" in out and "easy" in out and "95 % CI" in out
    with pytest.raises(SystemExit):
        main(["--players", "normal,expert"])


def test_orders_do_not_repeat_across_fleets():
    state = set_up(4, DEFAULT_BOARD, 3)
    for level in LEVELS:
        orders: tuple[Order, ...] = ai(state, 1, level)
        assert len({o.fleet for o in orders}) == len(orders)


def test_tournament_runs_merge(tmp_path, capsys):
    """`--merge` adds up runs: counts, win shares and places weighted by seat-games."""
    paths = []
    for seed in (1, 2):
        assert (
            main(["--players", "normal,easy", "--games", "2", "--seed", str(seed), "--jobs", "1", "--json"])
            == 0
        )
        path = tmp_path / f"run{seed}.json"
        path.write_text(capsys.readouterr().out)
        paths.append(str(path))
    assert main(["--merge", *paths, "--json"]) == 0
    merged = json.loads(capsys.readouterr().out)
    parts = [json.loads(Path(p).read_text()) for p in paths]
    assert merged["games"] == 4
    for level in ("normal", "easy"):
        assert merged["levels"][level]["wins"] == sum(p["levels"][level]["wins"] for p in parts)
        assert merged["levels"][level]["seat_games"] == 4
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(SystemExit):
        main(["--merge", str(bad)])
