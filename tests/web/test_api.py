"""The JSON API: public documents, a player's own view and orders, the writes, their refusals."""

from __future__ import annotations

import base64

from ruleset import OrderType

from .helpers import Client, world
from .test_pages import first_colonist, free_habitable_system


def basic(user: str, password: str) -> dict:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


def test_the_public_game_document():
    _, game, site = world()
    document = Client(site).get("/api/games/Nebula").json()
    assert document["name"] == "Nebula" and document["turn"] == 0 and document["phase"] == "normal"
    assert [p["name"] for p in document["players"]] == ["alice", "bob"]
    assert all(p["waiting"] and not p["finished"] for p in document["players"])
    assert len(document["systems"]) == game.state.board.size
    artifact = next(s for s in document["systems"] if s["artifact"])
    assert artifact["colony"] == "scientist" and artifact["region"] == artifact["id"]
    assert document["standing"] is None and document["ranking"] is None and document["seconds_left"] == 300
    assert "scores" not in str(document)


def test_the_list_of_games():
    _, _, site = world()
    (entry,) = Client(site).get("/api/games").json()["games"]
    assert entry["name"] == "Nebula" and entry["accepting_players"] is True


def test_my_view_needs_credentials_and_says_how():
    _, _, site = world()
    client = Client(site)
    answer = client.get("/api/games/Nebula/me")
    assert answer.status == 401 and answer.json()["error"]["code"] == 5
    assert "Bearer" in answer.header("www-authenticate")
    wrong = client.get("/api/games/Nebula/me", headers=basic("alice", "nope"))
    assert wrong.status == 401
    assert wrong.json()["error"] == {
        "code": 1,
        "name": "FRAME",
        "message": "Login Error - bad username or password",
    }


def test_my_view_with_the_password():
    _, game, site = world()
    me = Client(site).get("/api/games/Nebula/me", headers=basic("alice", "alice-pw")).json()
    assert me["player"]["name"] == "alice" and me["must_act"] is True
    assert sorted(f["kind"] for f in me["hand"]) == sorted(f.kind.label for f in game.state.hand(1))
    assert len(me["leaders"]) == 4 and len(me["bombers"]) == 2
    zero = {"money": 0, "technology": 0, "people": 0, "raw_materials": 0, "artifacts": 0}
    assert me["scores"] == {**zero, "raw": 0}  # "raw": the old spelling, kept one release
    assert me["messages"][0]["subject"] == "Welcome"


def test_a_token_works_instead_of_the_password_and_only_for_its_game():
    _, game, site = world()
    client = Client(site)
    token = client.post_json("/api/games/Nebula/token", {}, basic("bob", "bob-pw")).json()["token"]
    bearer = {"Authorization": f"Bearer {token}"}
    assert client.get("/api/games/Nebula/me", headers=bearer).json()["player"]["id"] == 2
    forged = {"Authorization": "Bearer " + token[:-2] + ("AA" if not token.endswith("AA") else "BB")}
    assert client.get("/api/games/Nebula/me", headers=forged).status == 401
    # a token cannot issue tokens
    assert client.post_json("/api/games/Nebula/token", {}, bearer).status == 401


def test_a_token_expires():
    clock, _, site = world()
    client = Client(site)
    token = client.post_json("/api/games/Nebula/token", {}, basic("bob", "bob-pw")).json()["token"]
    clock.advance(91 * 24 * 3600)
    assert client.get("/api/games/Nebula/me", headers={"Authorization": f"Bearer {token}"}).status == 401


def test_a_removed_player_is_refused():
    _, game, site = world()
    client = Client(site)
    token = client.post_json("/api/games/Nebula/token", {}, basic("bob", "bob-pw")).json()["token"]
    game.remove_player(2)
    answer = client.get("/api/games/Nebula/me", headers={"Authorization": f"Bearer {token}"})
    assert (
        answer.status == 409 and answer.json()["error"]["message"] == "You have been removed from this game."
    )
    # the password itself: the login refusal a removed account gets (as over TP)
    assert client.get("/api/games/Nebula/me", headers=basic("bob", "bob-pw")).status == 403


def test_insert_probe_remove_and_finish():
    _, game, site = world()
    client = Client(site)
    auth = basic("alice", "alice-pw")
    settler = first_colonist(game, 1)
    _, target = free_habitable_system(game)
    probe = client.post_json("/api/games/Nebula/orders/probe", {"fleet": settler.id, "target": target}, auth)
    assert probe.json() == {"ok": True} and not game.snapshot.queues
    placed = client.post_json("/api/games/Nebula/orders", {"fleet": settler.id, "target": target}, auth)
    assert placed.status == 201 and placed.json()["slot"] == 0
    (order,) = client.get("/api/games/Nebula/orders", headers=auth).json()["orders"]
    assert order["type_name"] == "Colonize" and order["target"] == target
    removed = client.post_json("/api/games/Nebula/orders/remove", {"fleet": settler.id, "slot": 0}, auth)
    assert removed.json()["orders"] == []
    again = client.post_json(
        "/api/games/Nebula/orders", {"fleet": settler.id, "type": "Colonize", "target": target}, auth
    )
    assert again.status == 201
    client.post_json("/api/games/Nebula/orders/remove", {"fleet": settler.id, "slot": 0}, auth)
    lower = client.post_json(  # names in any case, as docs/web.md says
        "/api/games/Nebula/orders/probe", {"fleet": settler.id, "type": " colonize", "target": target}, auth
    )
    assert lower.json() == {"ok": True}
    numbered = client.post_json(
        "/api/games/Nebula/orders/probe", {"fleet": settler.id, "type": "1", "target": target}, auth
    )
    assert numbered.json() == {"ok": True}
    assert client.post_json("/api/games/Nebula/finish", {}, auth).json()["finished"] is True
    assert game.snapshot.finished == frozenset({1})


def test_changing_the_password_revokes_the_tokens_issued_before():
    _, _, site = world()
    client = Client(site)
    old = client.post_json("/api/games/Nebula/token", {}, basic("alice", "alice-pw")).json()["token"]
    bobs = client.post_json("/api/games/Nebula/token", {}, basic("bob", "bob-pw")).json()["token"]
    assert client.get("/api/games/Nebula/me", headers={"Authorization": f"Bearer {old}"}).status == 200
    changed = client.post_json(
        "/api/games/Nebula/password", {"new_password": "alice-pw-2"}, basic("alice", "alice-pw")
    )
    assert changed.status == 204
    refused = client.get("/api/games/Nebula/me", headers={"Authorization": f"Bearer {old}"})
    assert refused.status == 401 and "the password changed" in refused.json()["error"]["message"]
    assert client.get("/api/games/Nebula/me", headers={"Authorization": f"Bearer {bobs}"}).status == 200
    new = client.post_json("/api/games/Nebula/token", {}, basic("alice", "alice-pw-2")).json()["token"]
    assert client.get("/api/games/Nebula/me", headers={"Authorization": f"Bearer {new}"}).status == 200


def test_changing_the_password_with_a_token_says_it_needs_the_current_password():
    _, _, site = world()
    client = Client(site)
    token = client.post_json("/api/games/Nebula/token", {}, basic("alice", "alice-pw")).json()["token"]
    bearer = {"Authorization": f"Bearer {token}"}
    answer = client.post_json("/api/games/Nebula/password", {"new_password": "better-pw-1"}, bearer)
    assert answer.status == 401
    assert answer.json()["error"]["message"] == (
        "Changing the password needs HTTP Basic with the current password (account name and password); "
        "a token is not enough."
    )
    again = client.post_json("/api/games/Nebula/token", {}, bearer)
    assert again.status == 401 and "another token is not enough" in again.json()["error"]["message"]


def test_every_api_answer_is_json_even_a_405_or_404_and_pages_stay_html():
    _, _, site = world()
    client = Client(site)
    answer = client.request("DELETE", "/api/games/Nebula/orders")
    assert answer.status == 405 and answer.header("content-type").startswith("application/json")
    assert answer.json()["error"] == {"code": 1, "name": "FRAME", "message": "Method not allowed"}
    assert answer.header("allow") == "GET, HEAD, POST"
    missing = client.get("/api/games/Nebula/nothing")
    assert missing.status == 404 and missing.json()["error"]["name"] == "NO_SUCH_THING"
    page = client.request("DELETE", "/games/Nebula")
    assert page.status == 405 and page.header("content-type").startswith("text/html")
    assert "Method not allowed" in page.text and page.header("allow") == "GET, HEAD"


def test_every_refusal_is_tps_code_and_reason():
    _, game, site = world()
    client = Client(site)
    auth = basic("alice", "alice-pw")
    bobs = first_colonist(game, 2)
    _, target = free_habitable_system(game)
    cases = [
        ({"fleet": bobs.id, "target": target}, 404, 4, "No such Object Order Queue"),
        ({"fleet": first_colonist(game, 1).id, "target": 1}, 404, 4, "No such star system on the board"),
        (
            {"fleet": first_colonist(game, 1).id, "type": 2, "target": target},
            409,
            3,
            "Not allowed to add that order type.",
        ),
        ({"fleet": first_colonist(game, 1).id, "type": 9, "target": target}, 404, 4, "No such order type"),
        ({"fleet": "x", "target": target}, 400, 1, "'fleet' must be a whole number."),
        (
            {"fleet": first_colonist(game, 1).id, "type": "Bogus", "target": target},
            400,
            1,
            "unknown order type 'Bogus' (Colonize, ColonizeMining, Move, Attack, Reinforce; "
            "or the type's number).",
        ),
        (
            {"fleet": first_colonist(game, 1).id, "type": "MOVE", "target": target},
            409,
            3,
            "Not allowed to add that order type.",
        ),
        ({"target": target}, 400, 1, "'fleet' is missing."),
    ]
    for fields, status, code, message in cases:
        answer = client.post_json("/api/games/Nebula/orders", fields, auth)
        assert (answer.status, answer.json()["error"]["code"], answer.json()["error"]["message"]) == (
            status,
            code,
            message,
        ), fields
    assert not game.snapshot.queues


def test_posts_must_be_json():
    _, game, site = world()
    client = Client(site)
    auth = basic("alice", "alice-pw")
    answer = client.request(
        "POST", "/api/games/Nebula/finish", b"a=1", {"Content-Type": "text/plain", **auth}
    )
    assert answer.status == 400 and answer.json()["error"]["code"] == 1
    broken = client.request(
        "POST", "/api/games/Nebula/finish", b"{not json", {"Content-Type": "application/json", **auth}
    )
    assert broken.status == 400
    assert game.snapshot.finished == frozenset()


def test_creating_an_account():
    _, game, site = world()
    client = Client(site)
    made = client.post_json("/api/games/Nebula/accounts", {"username": "carol", "password": "pw"})
    assert made.status == 201 and made.json() == {"player": 3}
    taken = client.post_json("/api/games/Nebula/accounts", {"username": "carol", "password": "pw"})
    assert (
        taken.status == 409
        and taken.json()["error"]["message"] == "An account with that name already exists."
    )
    assert client.get("/api/games/Nebula/me", headers=basic("carol", "pw")).status == 200


def test_an_account_guessed_too_often_is_refused_from_unknown_places_for_a_while():
    clock, _, site = world()
    client = Client(site)
    assert client.get("/api/games/Nebula/me", headers=basic("bob", "bob-pw")).status == 200
    for _ in range(20):  # login_failures_per_account
        assert client.get("/api/games/Nebula/me", headers=basic("alice", "guess")).status == 401
    blocked = client.get("/api/games/Nebula/me", headers=basic("alice", "alice-pw"))
    assert blocked.status == 429 and blocked.header("retry-after")
    assert "Too many failed logins on this account" in blocked.json()["error"]["message"]
    # the other accounts of the address are not touched (bob is let in: a fresh client)
    assert client.get("/api/games/Nebula/me", headers=basic("bob", "bob-pw")).status == 200
    clock.advance(60)  # 20 per 900 s: one more try after 45 s
    assert client.get("/api/games/Nebula/me", headers=basic("alice", "alice-pw")).status == 200


def test_history_and_past_turns():
    _, game, site = world()
    settler = first_colonist(game, 1)
    _, target = free_habitable_system(game)
    game.insert_order(1, settler.id, -1, int(OrderType.COLONIZE), target)
    game.end_turn()
    client = Client(site)
    (turn,) = client.get("/api/games/Nebula/history").json()["turns"]
    # turns are numbered as everywhere else (TP's turn counter): the first turn is turn 0
    assert turn["turn"] == 0 and any("alice placed a settler colony" in line for line in turn["lines"])
    past = client.get("/api/games/Nebula/turns/0").json()
    assert past["turn"] == 0 and past["summary"]["turn"] == 0
    assert next(s for s in past["systems"] if s["id"] == target)["colony"] == "settler"
    assert client.get("/api/games/Nebula/turns/1").json()["error"]["message"] == "No such turn"
    document = client.get("/api/games/Nebula").json()
    assert document["turn"] == 1 and document["last_turn"]["turn"] == 0
    assert client.get("/api/nothing").status == 404


def test_the_ranking_appears_only_when_the_game_is_over():
    from .bot_games import play

    _, game, site = world()
    client = Client(site)
    play(game, max_turns=5)
    assert client.get("/api/games/Nebula").json()["standing"] is None
    play(game)
    document = client.get("/api/games/Nebula").json()
    standing, ranking = document["standing"], document["ranking"]
    assert [place["name"] for place in standing["places"]] == [row["name"] for row in ranking]
    assert [row["place"] for row in ranking] == [place["rank"] for place in standing["places"]]
    assert ranking[0]["winner"] and ranking[0]["final"] >= ranking[1]["final"]
    keys = {"money", "technology", "people", "raw_materials", "artifacts"}
    assert set(ranking[0]["scores"]) == keys | {"raw"}
    assert set(standing["places"][0]["categories_before"]) == keys
    assert "Final ranking" in client.get("/games/Nebula").text
