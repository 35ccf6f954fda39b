"""The web listener and seats (`server.model.attendance`): logins and reads never take a seat back,
"I am back" does (the page's button, POST /api/games/NAME/back); a player's own view says who
plays their seat and how to take it back; public documents say only "absent"/"on vacation"/
"resigned". (`tests/server/test_absence_follows_playing.py` does it all with a real game.)"""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType

from server.model.attendance import Attendance, Presence
from server.views.web.documents import lobby_entry, my_view, public_game

from .helpers import Client, log_in, world
from .test_api import basic


def test_logins_tokens_and_reads_never_say_i_am_back_the_button_and_the_api_do():
    _, game, site = world()
    alice = log_in(site, "Nebula", "alice", "alice-pw")
    Client(site).post_json("/api/games/Nebula/token", {}, basic("bob", "bob-pw"))
    Client(site).get("/api/games/Nebula/me", headers=basic("bob", "bob-pw"))
    alice.get("/games/Nebula/play")
    assert getattr(game, "came_back", []) == []
    csrf = alice.csrf("/games/Nebula/play")
    assert alice.post_form("/games/Nebula/play/back", {"csrf": csrf}).status == 303
    assert game.came_back == [1]
    answer = Client(site).post_json("/api/games/Nebula/back", {}, basic("bob", "bob-pw"))
    assert answer.status == 200 and answer.json()["seat"] == "playing"
    assert game.came_back == [1, 2]
    # the button's form needs its CSRF token, like every other
    forged = alice.post_form("/games/Nebula/play/back", {"csrf": "forged"}, json_answer=True)
    assert forged.status == 409 and "form" in forged.json()["error"]["message"].lower()
    assert game.came_back == [1, 2]


def test_only_the_player_reads_their_missed_turns_and_vacation_end():
    _, game, _ = world(players=("alice", "bob", "cyd"))
    snapshot = replace(
        game.snapshot,
        attendance=MappingProxyType(
            {
                1: Attendance(1, Presence.VACATION, 0, 1_234_567.0),
                2: Attendance(2, Presence.ABSENT, 3),
                3: Attendance(3, Presence.PLAYING, 1),
            }
        ),
        _derived={},
    )
    public = public_game(snapshot)
    seats = {p["name"]: (p["seat"], p["stand_in"]) for p in public["players"]}
    assert seats == {"alice": ("on vacation", True), "bob": ("absent", True), "cyd": ("playing", False)}
    text = repr(public) + repr(lobby_entry(snapshot, 0))
    assert "1234567" not in text and "missed" not in text
    mine = my_view(snapshot, 1, None)
    assert mine["seat"] == "on vacation" and mine["vacation_until"] == 1_234_567.0
    assert my_view(snapshot, 3, None)["missed_turns"] == 1
    # the stand-in's seats are not waited for
    assert 1 not in snapshot.acting_players() and 2 not in snapshot.acting_players()


def test_the_play_page_says_who_plays_my_seat():
    _, game, site = world()
    alice = log_in(site, "Nebula", "alice", "alice-pw")
    assert "stand-in" not in alice.get("/games/Nebula/play").text
    game._snapshot = replace(
        game.snapshot,
        serial=game.snapshot.serial + 1,
        attendance=MappingProxyType({1: Attendance(1, Presence.ABSENT, 2)}),
        _derived={},
    )
    page = alice.get("/games/Nebula/play").text
    assert "the stand-in plays your seat; give an order or say you are back" in page
    assert 'action="/games/Nebula/play/back"' in page and "I am back" in page
    public = Client(site).get("/games/Nebula").text
    assert "absent · the stand-in plays" in public


def test_a_computer_players_seat_reads_as_one_on_the_web_and_on_tp():
    from ruleset.ai import Level
    from server.model.attendance import computer_seat
    from server.views.tp.frames import player_message

    _, game, _ = world(players=("alice", "bob"))
    snapshot = replace(
        game.snapshot, attendance=MappingProxyType({2: computer_seat(2, Level.HARD)}), _derived={}
    )
    seats = {p["name"]: (p["seat"], p["stand_in"]) for p in public_game(snapshot)["players"]}
    assert seats == {"alice": ("playing", False), "bob": ("computer (hard)", True)}
    assert 2 not in snapshot.acting_players()  # the turn does not wait for it
    assert {player_message(snapshot, 2, viewer).race for viewer in (1, 2, None)} == {"Computer (hard)"}
    assert player_message(snapshot, 1, 2).race == "Human"
