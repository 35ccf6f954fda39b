"""The ratings on the web: `/players`, `/players/NAME` and their JSON (`/api/players`,
`/api/players/NAME`), from a memory store's ratings (the database's are tested in
tests/server/test_ratings.py): names escaped, games against the computer marked and not rated,
running games without a colonist type or a score."""

from __future__ import annotations

from twisted.internet.task import Clock

from server.game.game import Game
from server.game.passwords import hash_password
from server.model.memory_store import MemoryStore
from server.model.ratings import Place
from server.model.store import Account, GameSetup
from server.model.timer_settings import TimerSettings
from server.web import make_site
from tests.support.deferreds import successResultOf

from .fake_game import FakeArchive, FakeDirectory, FakeGame
from .helpers import WEB_TEST_LIMITS, Client

HOSTILE = "<b>eve</b>&"
ENDED = 1_800_000_000.0
#: one password hash per account (one account per server), cheap to check
HASHES = {name: hash_password(name + "-pw", n=2**4) for name in ("alice", "bob", HOSTILE, "computer-easy")}


def finished_game(store: MemoryStore, name: str, seats: list[str], ranks: list[int], computer: bool = False):
    game_id = store.create_game(GameSetup(name))
    for player, username in enumerate(seats, 1):
        store.add_account(game_id, Account(username, HASHES[username], player), ())
    of = len(seats)
    places = tuple(Place(player, rank, of, ranks.count(rank) > 1) for player, rank in enumerate(ranks, 1))
    store.ratings.rate_game(game_id, places, computer, ENDED + game_id)


def site_with_ratings():
    clock = Clock()
    clock.advance(ENDED + 100)
    store = MemoryStore()
    finished_game(store, "first", ["alice", "bob", HOSTILE], [1, 2, 3])
    finished_game(store, "second", ["bob", "alice"], [1, 1])
    finished_game(store, "robots", ["alice", "computer-easy"], [2, 1], computer=True)
    # a running game of the same store (the real game service: its snapshot names each seat's account)
    setup = GameSetup("Nebula", timer=TimerSettings(turn_length=0))
    running = Game(store.create_game(setup), setup, setup.initial_state(), store, clock)
    for name in ("alice", "bob"):
        successResultOf(running.create_account(name, name + "-pw"))
    site = make_site(FakeDirectory(running), store, clock, secret=b"test-secret", limits=WEB_TEST_LIMITS)
    return site, store


def test_the_table_lists_rated_accounts_best_first_with_their_games():
    site, store = site_with_ratings()
    table = Client(site).get("/api/players").json()["players"]
    assert [line["name"] for line in table] == ["alice", "bob", HOSTILE]
    assert [line["games"] for line in table] == [2, 2, 1]
    assert [line["rank"] for line in table] == [1, 2, 3]
    assert table[0]["rating"] == round(store.ratings.table()[0].rating.ordinal, 2)
    assert table[0]["rating"] > table[1]["rating"] > table[2]["rating"]
    # the computer played no rated game, so it is not listed
    assert "computer-easy" not in {line["name"] for line in table}


def test_the_pages_escape_every_name_and_link_each_player():
    site, _ = site_with_ratings()
    page = Client(site).get("/players")
    assert page.status == 200
    assert HOSTILE not in page.text
    assert "&lt;b&gt;eve&lt;/b&gt;&amp;" in page.text
    assert 'href="/players/%3Cb%3Eeve%3C%2Fb%3E%26"' in page.text
    one = Client(site).get("/players/%3Cb%3Eeve%3C%2Fb%3E%26")
    assert (
        one.status == 200 and HOSTILE not in one.text and "<h1>&lt;b&gt;eve&lt;/b&gt;&amp;</h1>" in one.text
    )


def test_a_players_page_has_their_rating_finished_and_running_games():
    site, _ = site_with_ratings()
    me = Client(site).get("/api/players/ALICE").json()
    assert me["name"] == "alice" and me["rating"]["games"] == 2
    finished = {g["game"]: g for g in me["finished"]}
    assert [g["game"] for g in me["finished"]] == ["robots", "second", "first"]  # newest first
    assert finished["first"]["rank"] == 1 and finished["first"]["winner"] and finished["first"]["rated"]
    assert finished["second"]["shared"] and finished["second"]["rank"] == 1
    robots = finished["robots"]
    assert robots["against_computer"] and not robots["rated"]
    assert robots["rating"] is None and robots["change"] is None
    assert finished["first"]["change"] > 0 and finished["first"]["ended"].endswith("+00:00")
    (playing,) = me["playing"]
    assert {key: playing[key] for key in ("game", "turn", "seat")} == {
        "game": "Nebula",
        "turn": 0,
        "seat": "playing",
    }
    page = Client(site).get("/players/alice").text
    assert "against the computer" in page and "not rated" in page and 'href="/games/Nebula"' in page


def test_a_running_game_shows_nothing_private():
    site, _ = site_with_ratings()
    text = Client(site).get("/api/players/alice").text
    for private in ("hand", "scores", "types", "money", "technology"):
        assert private not in text


def test_an_unknown_player_is_404_on_the_page_and_in_the_api():
    site, _ = site_with_ratings()
    answer = Client(site).get("/api/players/nobody")
    assert answer.status == 404 and answer.json()["error"]["name"] == "NO_SUCH_THING"
    assert Client(site).get("/players/nobody").status == 404


def test_every_page_links_the_players_from_its_header():
    site, _ = site_with_ratings()
    for path in ("/", "/players", "/rules", "/games/Nebula"):
        assert '<a href="/players">Players</a>' in Client(site).get(path).text


def test_a_store_without_ratings_shows_an_empty_table():
    clock = Clock()
    game = FakeGame("Nebula", clock, FakeArchive())
    site = make_site(FakeDirectory(game), FakeArchive(), clock, secret=b"test-secret", limits=WEB_TEST_LIMITS)
    assert Client(site).get("/api/players").json() == {"players": []}
    assert "No rated game has ended yet." in Client(site).get("/players").text
