"""The standing as surfaces render it: one document and one wording, from the ruleset's value."""

from dataclasses import replace

from ruleset import DEFAULT_BOARD, EndReason, Phase, new_game
from ruleset.final_scoring import final_result
from ruleset.state import Player
from server.views.standing import place_words, standing_of, state_standing_document


def _over(all_scores):
    players = tuple(Player(pid, f"p{pid}", 0, 0, s) for pid, s in enumerate(all_scores, start=1))
    state = new_game(DEFAULT_BOARD, 1)
    return replace(state, players=players, phase=Phase.OVER, result=final_result(players, EndReason.POOL))


def test_the_document_has_numbers_and_named_categories():
    state = _over([(3, 3, 4, 4, 0), (3, 5, 5, 5, 1), (3, 3, 4, 4, 0)])
    document = state_standing_document(state)
    assert document is not None
    assert document["reason"] == "pool"
    assert document["reason_text"] == "The game ended because the colonist pool ran out."
    assert document["winners"] == ["p2"]
    first, second, third = document["places"]
    assert (first["name"], first["rank"], first["of"], first["shared"], first["final"]) == (
        "p2",
        1,
        3,
        False,
        4,
    )
    assert first["categories_before"] == {
        "money": 3,
        "technology": 5,
        "people": 5,
        "raw_materials": 5,
        "artifacts": 1,
    }
    assert first["categories_after"] == {"money": 4, "technology": 5, "people": 5, "raw_materials": 5}
    assert [(p["name"], p["rank"], p["shared"]) for p in (second, third)] == [
        ("p1", 2, True),
        ("p3", 2, True),
    ]


def test_words_say_a_shared_place():
    standing = standing_of(_over([(1, 1, 1, 1, 0), (1, 1, 1, 1, 0)]))
    assert standing is not None
    assert [place_words(p, 2) for p in standing.places] == [
        "shared rank 1 of 2 (winner), final score 1",
        "shared rank 1 of 2 (winner), final score 1",
    ]


def test_no_document_while_the_game_is_played():
    assert state_standing_document(new_game(DEFAULT_BOARD, 1)) is None
