"""The web listener and seats (`server.model.attendance`): a login takes a seat back; a player's own
view says who plays their seat; public documents say only "absent"/"on vacation"/"resigned"."""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType

from server.model.attendance import Attendance, Presence
from server.views.web.documents import lobby_entry, my_view, public_game

from .helpers import Client, log_in, world
from .test_api import basic


def test_the_login_form_and_a_token_take_the_seat_back():
    _, game, site = world()
    log_in(site, "Nebula", "alice", "alice-pw")
    assert game.logins_back == [1]
    Client(site).post_json("/api/games/Nebula/token", {}, basic("bob", "bob-pw"))
    assert game.logins_back == [1, 2]
    # reading with the password is no login: the seat stays with the stand-in
    Client(site).get("/api/games/Nebula/me", headers=basic("bob", "bob-pw"))
    assert game.logins_back == [1, 2]


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
    assert "the stand-in plays your seat; your next order takes it back" in page
    public = Client(site).get("/games/Nebula").text
    assert "absent · the stand-in plays" in public
