"""The final standing (R25): places by the BOARD tie-break, shared only when all four are equal."""

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from ruleset import DEFAULT_BOARD, EndReason, Phase, final_standing, new_game
from ruleset.final_scoring import final_result
from ruleset.state import Player

scores = st.tuples(*(st.integers(0, 9) for _ in range(5)))


def _state(all_scores):
    players = tuple(Player(pid, f"p{pid}", 0, 0, s) for pid, s in enumerate(all_scores, start=1))
    state = new_game(DEFAULT_BOARD, 1)
    return replace(state, players=players, phase=Phase.OVER, result=final_result(players, EndReason.POOL))


@given(st.lists(scores, min_size=1, max_size=6))
def test_places_follow_the_board_tie_break(all_scores):
    standing = final_standing(_state(all_scores))
    assert standing is not None and standing.reason is EndReason.POOL
    places = standing.places
    assert sorted(p.player for p in places) == list(range(1, len(all_scores) + 1))
    for place in places:
        assert place.before == all_scores[place.player - 1]
        assert sum(place.after) == sum(place.before)  # every artifact went to a category
        assert place.final == min(place.after)
    for better, worse in zip(places, places[1:]):
        assert sorted(better.after) >= sorted(worse.after)
        same = sorted(better.after) == sorted(worse.after)
        assert (better.rank == worse.rank) == same
        if same:
            assert better.shared and worse.shared and better.player < worse.player
    for index, place in enumerate(places):
        assert place.rank == 1 + sum(1 for other in places if sorted(other.after) > sorted(place.after))
        assert place.rank <= index + 1


def test_next_weakest_category_breaks_a_tie():
    # equal final score 3; the second-weakest category decides (BOARD), not the lowest id (REF)
    standing = final_standing(_state([(3, 3, 4, 4, 0), (3, 5, 5, 5, 0)]))
    assert standing is not None
    assert [(p.player, p.rank, p.shared) for p in standing.places] == [(2, 1, False), (1, 2, False)]
    assert standing.of(1).categories_after() == {"money": 3, "technology": 3, "people": 4, "raw_materials": 4}


def test_artifacts_are_shared_out_before_comparing():
    standing = final_standing(_state([(2, 5, 5, 5, 2), (4, 4, 4, 4, 0)]))
    assert standing is not None
    first = standing.places[0]
    assert first.player == 1 and first.after == (4, 5, 5, 5) and first.before == (2, 5, 5, 5, 2)
    assert standing.of(1).categories_before()["artifacts"] == 2


def test_a_game_being_played_has_no_standing():
    state = _state([(1, 1, 1, 1, 0)])
    assert final_standing(replace(state, phase=Phase.NORMAL, result=None)) is None
