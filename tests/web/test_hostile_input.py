"""Input the attack list and the fuzzer produce: each a 4xx refusal with a text (JSON under /api/,
a page elsewhere), never a 5xx; sessions that end when they should; nothing internal named."""

from __future__ import annotations

import base64
import json

import pytest
from twisted.logger import globalLogPublisher

from server.model.store import StoreUnavailable

from .helpers import Client, log_in, world


def basic(user: str, password: str) -> dict:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


@pytest.fixture
def errors():
    """Log events at error level or above (a 500 logs one with its traceback)."""
    found: list[dict] = []

    def observe(event):
        level = event.get("log_level")
        if level is not None and level.name in ("error", "critical"):
            found.append(event)

    globalLogPublisher.addObserver(observe)
    yield found
    globalLogPublisher.removeObserver(observe)


def raw_json(client: Client, path: str, body: bytes, headers: dict | None = None):
    return client.request("POST", path, body, {"Content-Type": "application/json", **(headers or {})})


@pytest.mark.parametrize(
    "body",
    [
        b'{"username": "ann", "password": "\\ud800\\ud800xx"}',
        b'{"username": "\\udfff", "password": "secret-pw"}',
        b'{"username": "ann", "password": "secret-pw", "email": "\\ud83d@x.org"}',
        b"[" * 60000 + b"]" * 60000,
        b'{"a":' * 30 + b"1" + b"}" * 30,
        b"\xff\xfe{}",
        b'{"username": ["ann"], "password": {"x": 1}}',
        b'{"username": "ann", "password": 12345678}',
    ],
)
def test_hostile_json_is_a_4xx_json_refusal(errors, body):
    _, _, site = world()
    answer = raw_json(Client(site), "/api/games/Nebula/accounts", body[: 64 * 1024])
    assert 400 <= answer.status < 500, answer.text
    assert answer.header("content-type").startswith("application/json")
    assert answer.json()["error"]["message"] and not errors


@pytest.mark.parametrize(
    "authorization",
    ["Bearer é.é", "Bearer \udc80", "Bearer " + "A" * 5000, "Basic ###", "Basic " + "é", "Bearer"],
)
def test_a_token_or_password_of_any_characters_is_refused_not_crashed_on(errors, authorization):
    _, _, site = world()
    value = authorization.encode("utf-8", "surrogateescape")
    client = Client(site)
    answer = client.request("GET", "/api/games/Nebula/me", headers={"Authorization": value.decode("latin-1")})
    assert answer.status == 401 and answer.json()["error"]["code"] == 5 and not errors


def test_cookies_and_csrf_fields_of_any_characters_are_refused_not_crashed_on(errors):
    _, game, site = world()
    client = Client(site)
    client.cookies = {"tae_session": "é.é.é", "tae_csrf": "ü"}
    assert client.get("/games/Nebula").status == 200
    answer = client.post_form("/games/Nebula/login", {"csrf": "é" * 43, "username": "alice", "password": "x"})
    assert answer.status == 403 and "expired" in answer.text
    form = client.request(
        "POST",
        "/games/Nebula/login",
        b"csrf=%ED%A0%80&username=%FF",
        {"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert form.status == 400 and "UTF-8" in form.text
    many = "&".join(f"f{i}={i}" for i in range(500)).encode()
    too_many = client.request("POST", "/join", many, {"Content-Type": "application/x-www-form-urlencoded"})
    assert too_many.status == 413 and "too many fields" in too_many.text
    assert not errors


def test_head_on_an_event_stream_is_its_headers(errors):
    _, _, site = world()
    answer = Client(site).request("HEAD", "/games/Nebula/events")
    assert answer.status == 200 and answer.header("content-type").startswith("text/event-stream")
    assert answer.body == b"" and not errors


def test_a_store_that_cannot_take_a_write_is_a_503_that_names_no_address():
    _, game, site = world()

    def away(*args, **kwargs):
        raise StoreUnavailable('connection to server at "127.0.0.1", port 55433 failed')

    game.finish_turn = away
    answer = Client(site).post_json("/api/games/Nebula/finish", {}, basic("alice", "alice-pw"))
    assert answer.status == 503 and answer.header("retry-after")
    assert "127.0.0.1" not in answer.text and "55433" not in answer.text
    assert "look again" in answer.json()["error"]["message"]


def test_a_password_change_ends_the_browser_sessions_of_the_account():
    _, game, site = world()
    browser = log_in(site, "Nebula", "alice", "alice-pw")
    assert browser.get("/games/Nebula/play").status == 200
    api = Client(site)
    changed = api.post_json(
        "/api/games/Nebula/password", {"new_password": "new-secret"}, basic("alice", "alice-pw")
    )
    assert changed.status == 204
    gone = browser.get("/games/Nebula/play")
    assert gone.status == 303 and gone.header("location") == "/games/Nebula#login"
    # an operator's reset (tae-server set-password) changes the mark the same way
    again = log_in(site, "Nebula", "alice", "new-secret")
    game.passwords["alice"] = ("reset-by-operator", 1)
    game._publish()
    assert again.get("/games/Nebula/play").status == 303


def test_a_login_does_not_take_over_the_logins_of_a_planted_session():
    from server.web import make_site

    from .fake_game import FakeDirectory, FakeGame
    from .helpers import WEB_TEST_LIMITS

    clock, nebula, _ = world()
    other = FakeGame("Other", clock, game_id=2)
    other.create_account("mallory", "mallory-pw")
    site = make_site(FakeDirectory(nebula, other), None, clock, secret=b"s", limits=WEB_TEST_LIMITS)
    attacker = log_in(site, "Other", "mallory", "mallory-pw")
    victim = Client(site)
    victim.cookies["tae_session"] = attacker.cookies["tae_session"]  # planted in the victim's browser
    token = victim.csrf("/games/Nebula")
    answer = victim.post_form(
        "/games/Nebula/login", {"csrf": token, "username": "alice", "password": "alice-pw"}
    )
    assert answer.status == 303 and victim.get("/games/Nebula/play").status == 200
    # the victim's session has their own login only: nothing they do lands in mallory's seat
    assert victim.get("/games/Other/play").status == 303


def test_logout_ends_the_session_and_its_cookie_is_refused_after(errors):
    _, _, site = world()
    browser = log_in(site, "Nebula", "alice", "alice-pw")
    old = dict(browser.cookies)
    token = browser.csrf("/games/Nebula/play")
    assert browser.post_form("/games/Nebula/logout", {"csrf": token}).status == 303
    replay = Client(site)
    replay.cookies = old
    assert replay.get("/games/Nebula/play").status == 303
    assert not errors


def test_refusals_carry_json_under_api_and_a_page_elsewhere():
    _, _, site = world()
    client = Client(site)
    api = client.request("PATCH", "/api/games/Nebula")
    assert api.status == 405 and json.loads(api.body)["error"]["message"]
    page = client.request("PATCH", "/games/Nebula")
    assert page.status == 405 and page.header("content-type").startswith("text/html")
