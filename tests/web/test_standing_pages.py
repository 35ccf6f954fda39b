"""The final standing on the web: the API's `standing` and `ranking`, the game page's table, the
player page and the lobby all show the ruleset's one standing (BOARD tie-break, shared places,
categories before and after the alien artifacts)."""

from __future__ import annotations

from dataclasses import replace

from ruleset import EndReason, Phase, final_standing
from ruleset.final_scoring import final_result
from tests.support.standing_lines import (
    before_of_document,
    lines_of_document,
    lines_of_page,
    lines_of_ruleset,
    names,
)

from .helpers import Client, log_in, world

PLAYERS = ("ann", "bob", "cid", "dee")
# ann and bob have the same final score (2); bob's second-lowest category is higher, so the
# BOARD tie-break puts him first (a ranking by id would put ann first). cid and dee are equal in
# all four categories once dee's artifact is added: they share first place.
SCORES = {
    "ann": (2, 2, 5, 5, 0),
    "bob": (1, 3, 3, 3, 1),
    "cid": (4, 4, 4, 4, 0),
    "dee": (3, 4, 4, 4, 1),
}


def finished_world():
    clock, game, site = world(players=PLAYERS)
    state = game.state
    players = tuple(replace(p, scores=SCORES[p.name]) for p in state.players)
    game.state = replace(
        state, players=players, phase=Phase.OVER, result=final_result(players, EndReason.POOL)
    )
    game._publish()
    return clock, game, site


def test_the_api_gives_the_rulesets_standing_and_the_old_rows_from_it():
    _, game, site = finished_world()
    document = Client(site).get("/api/games/Nebula").json()
    standing = document["standing"]
    expected = final_standing(game.state)
    assert lines_of_document(standing) == lines_of_ruleset(expected)
    assert [(p["name"], p["rank"], p["shared"]) for p in standing["places"]] == [
        ("cid", 1, True),
        ("dee", 1, True),
        ("bob", 3, False),
        ("ann", 4, False),
    ]
    assert standing["winners"] == ["cid", "dee"]
    assert standing["reason"] == "pool"
    assert before_of_document(standing)["bob"] == (1, 3, 3, 3, 1)
    assert standing["places"][2]["categories_after"] == {
        "money": 2,
        "technology": 3,
        "people": 3,
        "raw_materials": 3,
    }
    # The rows of earlier releases, kept one release: the same order and places (shared), the
    # scores before the artifacts, with `raw` beside `raw_materials`.
    ranking = document["ranking"]
    assert [(r["name"], r["place"], r["winner"]) for r in ranking] == [
        ("cid", 1, True),
        ("dee", 1, True),
        ("bob", 3, False),
        ("ann", 4, False),
    ]
    assert ranking[1]["scores"] == {
        "money": 3,
        "technology": 4,
        "people": 4,
        "raw_materials": 4,
        "artifacts": 1,
        "raw": 4,
    }


def test_the_game_page_table_shows_the_same_places_labelled_before_and_after():
    _, game, site = finished_world()
    html = Client(site).get("/games/Nebula").text
    lines, before = lines_of_page(html)
    assert lines == lines_of_ruleset(final_standing(game.state))
    assert before == {name: scores for name, scores in SCORES.items()}
    assert "after artifacts" in html and "before artifacts" in html
    assert "The game ended because the colonist pool ran out." in html
    assert "cid and dee</span> won with a final score of 4" in html


def test_the_player_page_shows_the_same_table_and_labels_my_scores():
    _, game, site = finished_world()
    html = log_in(site, "Nebula", "ann", "ann-pw").get("/games/Nebula/play").text
    lines, _ = lines_of_page(html)
    assert names(lines) == ["cid", "dee", "bob", "ann"]
    assert "My scores <small" in html and "(before artifacts)" in html


def test_the_lobby_and_the_list_of_games_name_the_winners_from_the_standing():
    _, _, site = finished_world()
    client = Client(site)
    (entry,) = client.get("/api/games").json()["games"]
    assert entry["standing"]["winners"] == ["cid", "dee"]
    assert [p["rank"] for p in entry["standing"]["places"]] == [1, 1, 3, 4]
    assert "cid and dee</span> won with a final score of 4" in client.get("/").text


def test_nothing_of_the_standing_while_the_game_is_played():
    _, _, site = world(players=PLAYERS)
    client = Client(site)
    assert client.get("/api/games/Nebula").json()["standing"] is None
    assert client.get("/api/games").json()["games"][0]["standing"] is None
    assert lines_of_page(client.get("/games/Nebula").text) == ([], {})
