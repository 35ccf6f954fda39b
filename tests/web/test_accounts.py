"""One account per server on the web: `GET /api/me`, `POST /api/games/NAME/join`, the lobby's
Join button and one browser login for every game of the account; a player who resigned reads
their game but gives no order. Real games (MemoryStore) behind a site in memory."""

from __future__ import annotations

import base64
from dataclasses import replace

from twisted.internet.task import Clock

import ruleset
from ruleset import EndReason, Kind, Role, final_standing
from server.game.directory import GameDirectory
from server.game.game import Game
from server.game.passwords import InlineHasher
from server.model.memory_store import MemoryStore
from server.model.store import GameSetup
from server.model.timer_settings import TimerSettings
from server.web import make_site
from tests.support.deferreds import successResultOf

from .helpers import WEB_TEST_LIMITS, Client, log_in


def basic(name: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{name}:{password}".encode()).decode()}


def server(*names: str, turn_length: int = 3600):
    clock = Clock()
    clock.advance(1_700_000_000)
    store = MemoryStore()
    directory = GameDirectory()
    for name in names:
        setup = GameSetup(name, ctime=1_700_000_000, timer=TimerSettings(turn_length=turn_length))
        game = Game(
            store.create_game(setup), setup, setup.initial_state(), store, clock, hasher=InlineHasher(n=16)
        )
        directory.add(game)
        game.start()
    site = make_site(directory, store, clock, secret=b"test-secret", limits=WEB_TEST_LIMITS)
    return clock, directory, site


def test_api_join_and_my_games_with_turn_deadline_and_waiting():
    _, directory, site = server("tae", "g2", "g3")
    tae, g2 = directory.find("tae"), directory.find("g2")
    for name in ("alice", "bob"):
        successResultOf(tae.create_account(name, f"{name}-pw"))
    api = Client(site)
    refused = api.post_json("/api/games/g2/join", {}, basic("alice", "bob-pw"))
    assert refused.status == 401
    joined = api.post_json("/api/games/g2/join", {}, basic("Alice", "alice-pw"))
    assert joined.status == 201 and joined.json() == {"game": "g2", "player": 1, "name": "alice"}
    again = api.post_json("/api/games/g2/join", {}, basic("alice", "alice-pw"))
    assert again.status == 409 and "already exists" in again.json()["error"]["message"]
    successResultOf(g2.create_account("carol", "carol-pw"))  # g2 starts: two players
    me = api.get("/api/me", basic("alice", "alice-pw"))
    assert me.status == 200
    document = me.json()
    assert document["account"] == "alice" and document["kept_apart"] == []
    games = {entry["game"]: entry for entry in document["games"]}
    assert set(games) == {"tae", "g2"}
    assert games["tae"]["waiting_for_me"] and games["tae"]["player"] == 1
    assert games["tae"]["deadline"].endswith("+00:00") and games["tae"]["seconds_left"] == 3600
    assert games["g2"]["waiting_for_me"] and games["g2"]["place"] is None
    successResultOf(tae.finish_turn(1))
    after = {e["game"]: e for e in api.get("/api/me", basic("alice", "alice-pw")).json()["games"]}
    assert not after["tae"]["waiting_for_me"] and after["tae"]["finished"]
    # a token of one game names the account too
    token = api.post_json("/api/games/g2/token", {}, basic("alice", "alice-pw")).json()["token"]
    by_token = api.get("/api/me", {"Authorization": f"Bearer {token}"})
    assert {e["game"] for e in by_token.json()["games"]} == {"tae", "g2"}
    assert api.get("/api/me").status == 401
    assert api.get("/api/me", basic("alice", "wrong")).status == 401


def test_my_games_give_my_place_once_the_game_is_over():
    _, directory, site = server("tae")
    tae = directory.find("tae")
    for name in ("alice", "bob"):
        successResultOf(tae.create_account(name, f"{name}-pw"))
    # the game ends as an operator's end leaves it (the state, published as a turn's end does)
    tae._state = ruleset.end_game(tae.state, EndReason.OPERATOR).state
    tae._publish()
    places = {p.name: p for p in final_standing(tae.state).places}
    api = Client(site)
    for name in ("alice", "bob"):
        entry = api.get("/api/me", basic(name, f"{name}-pw")).json()["games"][0]
        assert entry["over"] and not entry["waiting_for_me"] and entry["phase"] == "over"
        assert entry["place"]["of"] == 2 and entry["place"]["rank"] == places[name].rank


def test_the_lobby_join_button_and_one_login_for_every_game_of_the_account():
    _, directory, site = server("tae", "g2")
    tae = directory.find("tae")
    successResultOf(tae.create_account("alice", "alice-pw"))
    browser = log_in(site, "tae", "alice", "alice-pw")
    lobby = browser.get("/").text
    assert "Join as alice" in lobby and 'action="/games/g2/join"' in lobby
    token = browser.csrf("/")
    joined = browser.post_form("/games/g2/join", {"csrf": token})
    assert joined.status == 303 and joined.header("location") == "/games/g2/play"
    assert browser.get("/games/g2/play").status == 200
    assert browser.get("/games/tae/play").status == 200  # still logged in to the first one
    lobby = browser.get("/").text
    assert "Join as alice" not in lobby and lobby.count("Play as alice") == 2
    # a new browser: one password login opens both games
    other = log_in(site, "g2", "alice", "alice-pw")
    assert other.get("/games/tae/play").status == 200
    # nobody logged in: no Join button, and the form asks for a login
    stranger = Client(site)
    assert "Join as" not in stranger.get("/").text
    refused = stranger.post_form("/games/g2/join", {"csrf": stranger.csrf("/")})
    assert refused.status == 409 and "Log in first" in refused.text


def test_the_lobby_form_joins_with_an_existing_accounts_password_only():
    _, directory, site = server("tae", "g2")
    successResultOf(directory.find("tae").create_account("alice", "alice-pw"))
    browser = Client(site)
    fields = {"game": "g2", "username": "alice", "password": "guess-pw", "password2": "guess-pw"}
    refused = browser.post_form("/join", {"csrf": browser.csrf("/"), **fields})
    assert refused.status == 409 and "give its password" in refused.text
    fields.update(password="alice-pw", password2="alice-pw")
    joined = browser.post_form("/join", {"csrf": browser.csrf("/"), **fields})
    assert joined.status == 303 and directory.find("g2").snapshot.owners == {1: "alice"}


def test_joining_with_the_account_s_password_is_not_an_account_creation():
    """`accounts_per_address` counts new accounts: the same account joining many games through
    the account form (or TP's CreateAccount) is a password check."""
    clock = Clock()
    clock.advance(1_700_000_000)
    store = MemoryStore()
    directory = GameDirectory()
    for name in ("g1", "g2", "g3", "g4"):
        setup = GameSetup(name, ctime=1_700_000_000, timer=TimerSettings(turn_length=3600))
        directory.add(
            Game(
                store.create_game(setup),
                setup,
                setup.initial_state(),
                store,
                clock,
                hasher=InlineHasher(n=16),
            )
        )
    limits = replace(WEB_TEST_LIMITS, accounts_per_address=1)
    site = make_site(directory, store, clock, secret=b"test-secret", limits=limits)
    api = Client(site)
    for name in ("g1", "g2", "g3"):
        made = api.post_json(f"/api/games/{name}/accounts", {"username": "alice", "password": "alice-pw"})
        assert made.status == 201, made.text
    refused = api.post_json("/api/games/g4/accounts", {"username": "bob", "password": "bob-pw"})
    assert refused.status == 429 and "Too many accounts" in refused.text
    assert [directory.find(g).snapshot.owners for g in ("g1", "g2", "g3")] == [{1: "alice"}] * 3


def test_a_resigned_player_reads_their_game_and_is_refused_orders_clearly():
    _, directory, site = server("tae")
    tae = directory.find("tae")
    for name in ("alice", "bob"):
        successResultOf(tae.create_account(name, f"{name}-pw"))
    successResultOf(tae.resign(2))
    api = Client(site)
    me = api.get("/api/games/tae/me", basic("bob", "bob-pw"))
    assert me.status == 200 and me.json()["seat"] == "resigned"
    fleet = next(
        f
        for f in tae.state.fleets.values()
        if f.owner == 2 and f.role is Role.COLONIST and f.kind is not Kind.MINING
    )
    target = tae.state.board.system_id(tae.state.board.cell_at(0, 0))
    order = api.post_json(
        "/api/games/tae/orders", {"fleet": fleet.id, "target": target}, basic("bob", "bob-pw")
    )
    assert order.status == 409 and order.json()["error"]["message"] == "You resigned from this game."
    finish = api.post_json("/api/games/tae/finish", {}, basic("bob", "bob-pw"))
    assert finish.json()["error"]["message"] == "You resigned from this game."
    browser = log_in(site, "tae", "bob", "bob-pw")
    page = browser.get("/games/tae/play")
    assert page.status == 200 and "resigned" in page.text
