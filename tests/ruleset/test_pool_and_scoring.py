"""R3 (draws in proportion to the pool), R25 (final scoring and the ranking), R27 visibility."""

import random
from collections import Counter

from ruleset import EndReason, Kind, add_player, new_game, visible_to
from ruleset.final_scoring import distribute_artifacts, final_result, ranking
from ruleset.pool import draw
from ruleset.state import Player


def test_draws_are_proportional_to_what_is_left():
    rng = random.Random(5)
    counts = Counter()
    for _ in range(20000):
        pool = [1, 9, 0, 0]
        counts[draw(pool, rng)] += 1
    assert counts[Kind.SETTLER] == counts[Kind.MINING] == 0
    assert 0.08 < counts[Kind.MERCHANT] / 20000 < 0.12  # a uniform type draw would give 0.5


def test_draw_from_an_empty_pool_is_none():
    assert draw([0, 0, 0, 0], random.Random(1)) is None


def test_artifacts_fill_the_lowest_categories_one_at_a_time():
    assert distribute_artifacts((3, 1, 2, 5, 4)) == (4, 3, 3, 5)
    assert distribute_artifacts((3, 1, 2, 5, 6)) == (4, 4, 4, 5)
    assert distribute_artifacts((0, 0, 0, 0, 2)) == (1, 1, 0, 0)


def players(*scores):
    return [Player(i + 1, f"P{i + 1}", 0, 0, s) for i, s in enumerate(scores)]


def test_winner_is_the_best_weakest_category_then_second_lowest_and_so_on():
    result = final_result(players((2, 2, 9, 9, 0), (2, 3, 3, 3, 0), (1, 9, 9, 9, 0)), EndReason.POOL)
    assert result.final == {1: 2, 2: 2, 3: 1}
    assert result.winners == (2,)  # (2,3,3,3) beats (2,2,9,9) on the second-lowest value
    assert result.reason is EndReason.POOL
    assert ranking(result) == [(1, 2), (2, 1), (3, 3)]


def test_players_equal_in_every_category_share_the_win():
    result = final_result(players((1, 1, 1, 1, 0), (2, 3, 4, 5, 0), (5, 4, 3, 2, 0)), EndReason.STALEMATE)
    assert result.winners == (2, 3)
    assert ranking(result) == [(1, 2), (1, 3), (3, 1)]  # equal profiles share a rank


def test_artifacts_count_in_the_ranking():
    result = final_result(players((3, 3, 3, 3, 0), (0, 3, 3, 3, 3), (3, 3, 3, 3, 1)), EndReason.ARTIFACTS)
    assert result.distributed == {1: (3, 3, 3, 3), 2: (3, 3, 3, 3), 3: (4, 3, 3, 3)}
    assert result.winners == (3,)
    assert ranking(result) == [(1, 3), (2, 1), (2, 2)]


def test_opponents_colonist_kinds_and_scores_are_hidden():
    state = new_game()
    state, _ = add_player(state, "a", hand=[Kind.MINING], scores=(1, 2, 3, 4, 5))
    state, _ = add_player(state, "b", hand=[Kind.MERCHANT])
    view = visible_to(state, 2)
    theirs = [f for f in view.fleets.values() if f.owner == 1]
    assert theirs[0].kind is None  # a's colonist
    assert all(f.kind is not None for f in theirs[1:5])  # a's leaders are public
    assert view.scores == (0, 0, 0, 0, 0)
    mine = [f for f in view.fleets.values() if f.owner == 2]
    assert mine[0].kind is Kind.MERCHANT
    assert view.pool_total == sum(state.pool)
