"""The home page (the lobby of a logged-in player) and games against the computer started from it
or from `POST /api/games` (`server.admin.computer_games`). Real games (MemoryStore) behind a
site in memory; the computer players are the stand-in's machinery, as in a server."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from twisted.internet.task import Clock

import ruleset
from ruleset import EndReason
from server.admin.computer_games import ComputerGames
from server.admin.live import LiveBackend
from server.config.file import GameConfig
from server.game.directory import GameDirectory
from server.game.game import Game
from server.game.passwords import InlineHasher
from server.model.attendance import Presence
from server.model.memory_store import MemoryStore
from server.model.store import GameSetup
from server.model.timer_settings import TimerSettings
from server.web import make_site
from tests.support.deferreds import successResultOf

from .helpers import WEB_TEST_LIMITS, Client, log_in
from .test_accounts import basic


def server(*names: str, per_account: int = 2, most: int = 3):
    clock = Clock()
    clock.advance(1_700_000_000)
    store = MemoryStore()
    directory = GameDirectory()
    for name in names:
        setup = GameSetup(name, ctime=1_700_000_000, timer=TimerSettings(turn_length=3600))
        game = Game(
            store.create_game(setup), setup, setup.initial_state(), store, clock, hasher=InlineHasher(n=16)
        )
        directory.add(game)
        game.start()
    limits = replace(WEB_TEST_LIMITS, computer_games_per_account=per_account, computer_games_max=most)
    backend = LiveBackend(
        directory, store, clock, GameConfig(), new_seed=lambda: 7, hasher=InlineHasher(n=16)
    )
    starter = ComputerGames(backend, limits)
    site = make_site(directory, store, clock, secret=b"test-secret", limits=limits, computer_games=starter)
    return clock, directory, site


def my_games_on_the_home_page(html: str) -> list[tuple[str, bool]]:
    """(game, has the "Your turn" badge) of each of my games, in the page's order."""
    items = re.findall(r'<li class="my-game( waits)?" data-game="([^"]+)">(.*?)</li>', html, re.S)
    return [(game, "badge-turn" in body) for waits, game, body in items]


def test_the_home_page_lists_my_games_waiting_ones_first_with_a_badge_that_goes_when_i_finish():
    _, directory, site = server("tae", "g2", "open")
    tae, g2 = directory.find("tae"), directory.find("g2")
    for game in (tae, g2):
        successResultOf(game.create_account("alice", "alice-pw"))
        successResultOf(game.create_account("bob", "bob-pw"))
    successResultOf(tae.finish_turn(1))  # tae waits for bob only
    browser = log_in(site, "tae", "alice", "alice-pw")
    home = browser.get("/").text
    assert my_games_on_the_home_page(home) == [("g2", True), ("tae", False)]
    assert "1 of your games waits for you." in home
    assert home.index("Your games") < home.index("Games that take players") < home.index('"/games/open"')
    assert '<time class="deadline" datetime="2023-11-14T23:13:20+00:00"' in home  # local time: live.js
    assert 'data-refresh="5"' in home  # it asks again: the badges follow the turns
    successResultOf(g2.finish_turn(1))
    successResultOf(tae.finish_turn(2))  # tae's turn ends: it waits for alice again
    assert my_games_on_the_home_page(browser.get("/").text) == [("tae", True), ("g2", False)]
    # a spectator: the same page without "my games" nor the computer
    stranger = Client(site).get("/").text
    assert "Your games" not in stranger and "Play against the computer" not in stranger
    assert stranger.index("Games that take players") < stranger.index('"/games/tae"')
    assert 'id="live"' not in stranger  # nothing of mine to ask again for


def test_a_game_against_the_computer_in_one_click_starts_at_once_and_its_turns_end_when_i_finish():
    _, directory, site = server("tae")
    successResultOf(directory.find("tae").create_account("alice", "alice-pw"))
    browser = log_in(site, "tae", "alice", "alice-pw")
    assert "Play against the computer" in browser.get("/").text
    fields = {"computer_players": "3", "level": "easy", "turn_length": "300"}
    started = browser.post_form("/games/new", {"csrf": browser.csrf("/"), **fields})
    assert started.status == 303 and started.header("location") == "/games/vs-computer-1/play"
    game = directory.find("vs-computer-1")
    snapshot = game.snapshot
    assert snapshot.owners == {1: "alice", 2: "computer-easy", 3: "computer-easy-2", 4: "computer-easy-3"}
    assert [snapshot.attendance[p].presence for p in (2, 3, 4)] == [Presence.COMPUTER] * 3
    assert snapshot.acting_players() == (1,) and snapshot.seconds_left(game.clock.seconds()) == 300
    assert (
        not snapshot.setup.auto_add
        and not snapshot.setup.account_creation
        and snapshot.setup.max_players == 4
    )
    assert browser.get("/games/vs-computer-1/play").status == 200
    successResultOf(game.finish_turn(1))
    assert game.snapshot.turn == 1  # the computer players had finished: the turn ended at once
    home = browser.get("/").text
    assert my_games_on_the_home_page(home)[0] == ("vs-computer-1", True)
    assert 'action="/games/vs-computer-1/join"' not in home  # it takes no other player


def test_computer_players_of_many_games_share_their_names_without_a_collision():
    _, directory, site = server("tae")
    for name in ("alice", "bob"):
        successResultOf(directory.find("tae").create_account(name, f"{name}-pw"))
    api = Client(site)
    for name in ("alice", "bob"):
        made = api.post_json(
            "/api/games", {"computer_players": 2, "level": "normal"}, basic(name, f"{name}-pw")
        )
        assert made.status == 201, made.text
    assert made.json() == {"game": "vs-computer-2", "player": 1, "name": "bob"}
    for game in ("vs-computer-1", "vs-computer-2"):
        owners = directory.find(game).snapshot.owners
        assert owners[2] == "computer-normal" and owners[3] == "computer-normal-2"
    # nobody logs in as a computer player, in any of its games
    assert api.get("/api/me", basic("computer-normal", "")).status == 401


@pytest.mark.parametrize(
    ("document", "words"),
    [
        ({}, "computer_players must be a whole number from 1 to 5."),
        ({"computer_players": 6}, "from 1 to 5"),
        ({"computer_players": True}, "from 1 to 5"),
        ({"computer_players": 2, "level": "genius"}, "level must be one of easy, normal, hard."),
        ({"computer_players": 2, "turn_length": 5}, "turn_length must be a number of seconds from 60"),
    ],
)
def test_bad_requests_are_refused_in_one_line(document, words):
    _, directory, site = server("tae")
    successResultOf(directory.find("tae").create_account("alice", "alice-pw"))
    refused = Client(site).post_json("/api/games", document, basic("alice", "alice-pw"))
    assert refused.status == 400 and words in refused.json()["error"]["message"]
    assert set(directory.games) == {"tae"}


def test_games_against_the_computer_are_bounded_per_account_and_on_the_server():
    _, directory, site = server("tae", per_account=2, most=3)
    for name in ("alice", "bob"):
        successResultOf(directory.find("tae").create_account(name, f"{name}-pw"))
    api = Client(site)

    def start(name: str):
        return api.post_json("/api/games", {"computer_players": 1}, basic(name, f"{name}-pw"))

    assert [start("alice").status, start("alice").status] == [201, 201]
    refused = start("alice")
    assert (
        refused.status == 409
        and "You have 2 open games against the computer" in refused.json()["error"]["message"]
    )
    assert start("bob").status == 201
    full = start("bob")  # 3 on the server
    assert full.status == 409 and "try again later" in full.json()["error"]["message"]
    # a game its player resigned counts for them no more, but for the server until it is over
    directory.find("vs-computer-1").resign(1)
    assert start("alice").status == 409
    assert "try again later" in start("alice").json()["error"]["message"]
    over = directory.find("vs-computer-1")  # it ends (as an operator's end leaves a game)
    over._state = ruleset.end_game(over.state, EndReason.OPERATOR).state
    over._publish()
    assert start("alice").status == 201
    assert start(" ").status == 401
    # where the operator offers none
    _, directory, site = server("tae", per_account=0)
    successResultOf(directory.find("tae").create_account("alice", "alice-pw"))
    api = Client(site)
    assert "Play against the computer" not in log_in(site, "tae", "alice", "alice-pw").get("/").text
    refused = start("alice")
    assert refused.status == 409 and refused.json()["error"]["message"] == (
        "This server does not offer games against the computer."
    )


def test_the_home_page_form_says_what_is_wrong_on_the_page():
    _, directory, site = server("tae")
    successResultOf(directory.find("tae").create_account("alice", "alice-pw"))
    browser = log_in(site, "tae", "alice", "alice-pw")
    fields = {"computer_players": "9", "level": "easy", "turn_length": "300"}
    refused = browser.post_form("/games/new", {"csrf": browser.csrf("/"), **fields})
    assert refused.status == 400 and "computer_players must be a whole number from 1 to 5." in refused.text
    stranger = Client(site)
    refused = stranger.post_form("/games/new", {"csrf": stranger.csrf("/"), **fields})
    assert refused.status == 409 and "Log in first." in refused.text
    assert set(directory.games) == {"tae"}
