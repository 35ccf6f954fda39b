"""The web relay's decisions on one node (`server.web.relay`), in memory: which requests it takes,
how the owner side answers relayed ones, what a client hears while a game has no owner."""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType

from twisted.internet import defer
from twisted.internet.task import Clock

from server.web import make_site
from server.web.contract import AWAY, ELSEWHERE, HERE, UNKNOWN, Location
from server.web.relay import RELAY_HEADER, RelaySigner, game_named

from .fake_game import FakeArchive, FakeDirectory, FakeGame
from .helpers import WEB_TEST_LIMITS, Client

SECRET = b"shared-secret"


class Places:
    """Where games run, as a test says; `refresh` may move them (`after_refresh`)."""

    def __init__(self, where: dict[str, Location], wait: float = 0.0):
        self.where = where
        self.after_refresh: dict[str, Location] = {}
        self.refreshed = 0
        self._wait = wait

    @property
    def node(self) -> str:
        return "a"

    @property
    def wait(self) -> float:
        return self._wait

    def locate(self, name: str) -> Location:
        return self.where.get(name, Location(UNKNOWN))

    def refresh(self):
        self.refreshed += 1
        self.where.update(self.after_refresh)
        return defer.succeed(None)

    def peers(self):
        return defer.succeed([])

    def default_name(self):
        return "Nebula"


def node_site(places: Places, limits=WEB_TEST_LIMITS):
    clock = Clock()
    clock.advance(1_000_000)
    archive = FakeArchive()
    game = FakeGame("Nebula", clock, archive)
    game.create_account("alice", "alice-pw")
    site = make_site(FakeDirectory(game), archive, clock, secret=SECRET, places=places, limits=limits)
    return clock, game, site


def relayed(clock, node: str = "b", client: str = "198.51.100.7") -> dict:
    return {RELAY_HEADER.decode(): RelaySigner(SECRET, clock).sign(node, client, False).decode()}


def test_the_game_a_path_names():
    assert game_named("/games/Nebula/play") == "Nebula"
    assert game_named("/api/games/G%C3%BC%20x/orders") == "Gü x"
    assert game_named("/api/games") is None and game_named("/") is None
    assert game_named("/games/%ff") is None


def test_a_signature_names_the_node_and_the_client_and_expires():
    clock = Clock()
    signer = RelaySigner(SECRET, clock)
    value = signer.sign("b", "2001:db8::1", True)
    found = signer.check(value)
    assert found is not None and (found.node, found.client, found.secure) == ("b", "2001:db8::1", True)
    assert RelaySigner(b"another-secret", clock).check(value) is None
    assert signer.check(value.replace(b'"b"', b'"c"')) is None
    clock.advance(301)
    assert signer.check(value) is None


def test_games_of_this_node_and_unknown_games_are_answered_here():
    places = Places({"Nebula": Location(HERE, "a")})
    clock, _, site = node_site(places)
    client = Client(site)
    assert client.get("/games/Nebula").status == 200
    assert client.get("/api/games/Nebula").json()["name"] == "Nebula"
    assert client.get("/api/games/Nowhere").status == 404
    assert places.refreshed == 1  # a game made a moment ago is looked for, once a second
    assert client.get("/games/Nowhere").status == 404 and places.refreshed == 1
    clock.advance(2)
    assert client.get("/games/Nowhere").status == 404 and places.refreshed == 2


def test_a_relayed_request_for_a_game_this_node_does_not_run_is_misdirected():
    places = Places({"Nebula": Location(HERE, "a"), "Far": Location(ELSEWHERE, "c", "10.0.0.3:8080")})
    clock, _, site = node_site(places)
    client = Client(site)
    answer = client.get("/api/games/Far", headers=relayed(clock))
    assert answer.status == 421 and answer.header("x-tae-not-here") == "1"
    assert answer.json()["error"]["name"] == "UNAVAILABLE_TEMPORARILY"
    assert client.get("/api/games/Nebula", headers=relayed(clock)).status == 200
    forged = {RELAY_HEADER.decode(): RelaySigner(b"wrong", clock).sign("b", "x", False).decode()}
    answer = client.get("/api/games/Nebula", headers=forged)
    assert answer.status == 403 and "web_secret_file" in answer.json()["error"]["message"]


def test_the_brake_counts_the_relayed_client_not_the_relaying_node():
    places = Places({"Nebula": Location(HERE, "a")})
    clock, _, site = node_site(places, replace(WEB_TEST_LIMITS, password_hashes_per_address=5))
    client = Client(site)
    for _ in range(5):
        headers = {"Authorization": "Basic YWxpY2U6d3Jvbmc=", **relayed(clock, client="198.51.100.7")}
        assert client.get("/api/games/Nebula/me", headers=headers).status == 401
    headers = {"Authorization": "Basic YWxpY2U6d3Jvbmc=", **relayed(clock, client="198.51.100.7")}
    refused = client.get("/api/games/Nebula/me", headers=headers)
    assert refused.status == 429 and "Too many password checks" in refused.text
    other = {"Authorization": "Basic YWxpY2U6YWxpY2UtcHc=", **relayed(clock, client="203.0.113.9")}
    assert client.get("/api/games/Nebula/me", headers=other).status == 200


def test_while_a_game_has_no_owner_a_request_waits_then_hears_try_again():
    places = Places({"Nebula": Location(AWAY)})
    _, _, site = node_site(places)
    client = Client(site)
    answer = client.get("/api/games/Nebula")
    assert answer.status == 503 and "try again shortly" in answer.json()["error"]["message"]
    page = client.get("/games/Nebula")
    assert page.status == 503 and page.header("content-type").startswith("text/html")
    places.where["Nebula"] = Location(ELSEWHERE, "c", None)  # its node has no web listener
    assert "no web listener" in client.get("/api/games/Nebula").json()["error"]["message"]


def test_a_write_that_waited_for_its_game_is_carried_out_here_when_the_game_arrives():
    places = Places({"Nebula": Location(AWAY)}, wait=5.0)
    places.after_refresh = {"Nebula": Location(HERE, "a")}
    _, _, site = node_site(places)
    client = Client(site)
    answer = client.post_json("/api/games/Nebula/accounts", {"username": "carol", "password": "carol-pw"})
    assert answer.status == 201, answer.text
    carol = {"Authorization": "Basic Y2Fyb2w6Y2Fyb2wtcHc="}
    assert client.get("/api/games/Nebula/me", headers=carol).json()["player"]["id"] == answer.json()["player"]


def test_a_signature_may_vouch_for_an_account_and_nothing_else_may_be_added():
    clock = Clock()
    signer = RelaySigner(SECRET, clock)
    found = signer.check(signer.sign("b", "lobby", False, "alice"))
    assert found is not None and found.account == "alice"
    assert signer.check(signer.sign("b", "lobby", False)).account is None  # type: ignore[union-attr]
    assert signer.check(signer.sign("b", "lobby", False, "alice").replace(b'"alice"', b'"mallory"')) is None
    body = f'["b","lobby",false,{int(clock.seconds())},"alice",1]'
    assert signer.check(f"{body}|{signer._mac(body)}".encode()) is None  # one account at most


class SeatedGame(FakeGame):
    """The fake, with the server's rule that a seat's owner is the account of its name."""

    @property
    def snapshot(self):
        owners = {pid: name for name, (_, pid) in self.passwords.items()}
        return replace(self._snapshot, owners=MappingProxyType(owners))


def test_another_node_asking_on_an_account_s_behalf_gets_its_games_of_this_node():
    places = Places({"Nebula": Location(HERE, "a")})
    clock = Clock()
    clock.advance(1_000_000)
    archive = FakeArchive()
    game = SeatedGame("Nebula", clock, archive)
    game.create_account("alice", "alice-pw")
    site = make_site(FakeDirectory(game), archive, clock, secret=SECRET, places=places)
    client = Client(site)
    vouched = {RELAY_HEADER.decode(): RelaySigner(SECRET, clock).sign("b", "lobby", False, "alice").decode()}
    answer = client.get("/api/me", headers=vouched)
    assert answer.status == 200, answer.text
    assert answer.json()["account"] == "alice" and [g["game"] for g in answer.json()["games"]] == ["Nebula"]
    forged = {RELAY_HEADER.decode(): RelaySigner(b"wrong", clock).sign("b", "lobby", False, "alice").decode()}
    assert client.get("/api/me", headers=forged).status == 403


def test_my_games_with_a_token_of_a_game_another_node_runs_are_asked_of_that_node():
    """Only the game's owner knows the player's credential mark the token must match."""
    places = Places({"Nebula": Location(HERE, "a"), "Far": Location(ELSEWHERE, "c", None)})
    _, _, site = node_site(places)
    client = Client(site)
    token = site.web.sessions.issue_token("Far", 1, "a-mark")
    answer = client.get("/api/me", headers={"Authorization": f"Bearer {token}"})
    assert answer.status == 503 and "no web listener" in answer.json()["error"]["message"]
    local = site.web.sessions.issue_token("Nebula", 9, "a-mark")  # answered here: no such player
    assert client.get("/api/me", headers={"Authorization": f"Bearer {local}"}).status == 401
