"""The web pages in a real headless Chromium (Debian's `chromium`, driven by Playwright).

The server is `tests.integration.web_world` on a free port of 127.0.0.1; the tests use only
HTTP, as a browser and as API clients. Without /usr/bin/chromium or the playwright package
these tests are skipped and say why. Screenshots of the lobby, the map and the player view are
written to docs/screenshots/.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.support.servers import free_port, wait_for_port

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "docs" / "screenshots"
SHOTS.mkdir(parents=True, exist_ok=True)
# (a user name has no spaces, RFC 8265: a slash separates the attributes just as well)
HOSTILE = ("<script>window.__pwned=1</script>", "<img/src=x/onerror=window.__pwned=2>")

if not os.path.exists(CHROMIUM):
    pytest.skip(
        f"browser tests need Debian's chromium at {CHROMIUM} (apt-get install chromium)",
        allow_module_level=True,
    )
sync_api = pytest.importorskip("playwright.sync_api", reason="browser tests need the playwright package")


class WebWorld:
    """The web_world server process and HTTP calls to it."""

    def __init__(self, players: str, size: str = "", bot_turns: int = 0):
        command = [sys.executable, "-m", "tests.integration.web_world", "--players", players]
        command += ["--bot-turns", str(bot_turns)]
        if size:
            command += ["--size", size]
        self.process = subprocess.Popen(
            command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        deadline = time.monotonic() + 30
        line = ""
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if line.startswith("listening ") or self.process.poll() is not None:
                break
        if not line.startswith("listening "):
            self.stop()
            raise RuntimeError("the web server did not start: " + self.process.stderr.read())
        self.base = f"http://127.0.0.1:{int(line.split()[1])}"

    def api(self, method: str, path: str, user: str, document=None):
        credentials = base64.b64encode(f"{user}:{user}-pw".encode()).decode()
        request = urllib.request.Request(
            self.base + path,
            data=None if document is None else json.dumps(document).encode(),
            method=method,
            headers={"Authorization": "Basic " + credentials, "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                return json.load(answer)
        except urllib.error.HTTPError as error:
            return json.load(error)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class RealServer(WebWorld):
    """`tae-server serve --web` with a fresh database, and the given players joined over the API."""

    def __init__(self, directory: Path, players: tuple[str, ...]):
        self.tp_port, self.web_port = free_port(), free_port()
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "server.operating.cli",
                "serve",
                "--listen",
                f"tcp:{self.tp_port}:interface=127.0.0.1",
                "--web",
                f"tcp:{self.web_port}:interface=127.0.0.1",
                "--turn-length",
                "0",
                "--game-name",
                "Nebula",
            ],
            cwd=directory,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            wait_for_port(self.web_port, self.process)
        except RuntimeError:
            self.stop()
            raise
        self.base = f"http://127.0.0.1:{self.web_port}"
        try:
            for name in players:
                answer = self.api(
                    "POST", "/api/games/Nebula/accounts", name, {"username": name, "password": name + "-pw"}
                )
                assert answer.get("player"), answer
        except BaseException:
            self.stop()  # no server left behind when the set-up fails
            raise


@pytest.fixture
def server(tmp_path):
    """The real server, two players."""
    world = RealServer(tmp_path, ("alice", "bob"))
    yield world
    world.stop()


@pytest.fixture
def played_world():
    """The web tests' stand-in game after the random bots played it for a while."""
    world = WebWorld("alice,bob,carol", bot_turns=14)
    yield world
    world.stop()


@pytest.fixture
def browser(tmp_path):
    with sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path / "profile"),
            executable_path=CHROMIUM,
            args=ARGS,
            headless=True,
            viewport={"width": 1280, "height": 900},
        )
        context.set_default_timeout(20_000)
        yield context
        context.close()


def free_settler_target(world: WebWorld, user: str):
    me = world.api("GET", "/api/games/Nebula/me", user)
    public = world.api("GET", "/api/games/Nebula", user)
    colonist = next(f for f in me["hand"] if f["kind"] != "mining")
    taken = {o["target"] for o in world.api("GET", "/api/games/Nebula/orders", user)["orders"]}
    system = next(
        s
        for s in public["systems"]
        if s["terrain"] == "habitable" and s["colony"] is None and s["id"] not in taken
    )
    return colonist, system


def test_a_spectator_sees_the_map_change_after_a_turn_without_reloading(server, browser):
    page = browser.new_page()
    page.goto(server.base + "/games/Nebula")
    page.evaluate("window.__sameDocument = true")
    colonist, system = free_settler_target(server, "alice")
    selector = f'g.sys[data-id="{system["id"]}"] circle.col'
    assert page.locator(selector).count() == 0
    placed = server.api(
        "POST", "/api/games/Nebula/orders", "alice", {"fleet": colonist["fleet"], "target": system["id"]}
    )
    assert "slot" in placed, placed
    server.api("POST", "/api/games/Nebula/finish", "alice", {})
    server.api("POST", "/api/games/Nebula/finish", "bob", {})
    page.locator(".turn-number", has_text="1").wait_for()
    page.locator(selector).wait_for()
    assert page.locator(f"{selector}.{colonist['kind']}").count() == 1
    assert page.evaluate("window.__sameDocument") is True  # no reload happened
    assert "alice placed a" in page.locator(".history").inner_text()


def test_a_player_logs_in_colonizes_by_clicking_sees_a_refusal_and_finishes(server, browser):
    page = browser.new_page()
    page.goto(server.base + "/games/Nebula")
    page.fill("#login input[name=username]", "alice")
    page.fill("#login input[name=password]", "alice-pw")
    page.click("#login button")
    page.wait_for_url("**/games/Nebula/play")
    colonist, system = free_settler_target(server, "alice")
    page.check(f'#order-form input[name=fleet][value="{colonist["fleet"]}"]')
    page.click(f'g.sys[data-id="{system["id"]}"]')
    page.locator("#notice", has_text="Order placed.").wait_for()
    page.locator(".orders", has_text="Colonize").wait_for()
    orders = server.api("GET", "/api/games/Nebula/orders", "alice")["orders"]
    assert [(o["fleet"], o["type_name"], o["target"]) for o in orders] == [
        (colonist["fleet"], "Colonize", system["id"])
    ]
    # the same fleet again: the probe refuses it and nothing is inserted
    page.check(f'#order-form input[name=fleet][value="{colonist["fleet"]}"]')
    _, other = free_settler_target(server, "alice")
    page.click(f'g.sys[data-id="{other["id"]}"]')
    page.locator("#notice.error", has_text="That fleet already has its order for this turn.").wait_for()
    assert len(server.api("GET", "/api/games/Nebula/orders", "alice")["orders"]) == 1
    page.click("#finish")
    page.locator(".state.done", has_text="You have finished this turn").wait_for()
    server.api("POST", "/api/games/Nebula/finish", "bob", {})
    page.locator(".turn-number", has_text="1").wait_for()
    page.locator(".board", has_text="has colonized").wait_for()
    assert page.locator(f'g.sys[data-id="{system["id"]}"] circle.col').count() == 1


def test_a_hostile_player_name_is_shown_and_never_run(browser, tmp_path):
    world = RealServer(tmp_path, ("alice", *HOSTILE))
    try:
        page = browser.new_page()
        dialogs = []
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        for path in ("/", "/games/Nebula"):
            page.goto(world.base + path)
            assert page.evaluate("window.__pwned") is None
            text = page.locator("body").inner_text()
            assert all(name in text for name in HOSTILE)
        page.goto(world.base + "/games/Nebula")
        page.fill("#login input[name=username]", "alice")
        page.fill("#login input[name=password]", "alice-pw")
        page.click("#login button")
        page.wait_for_url("**/play")
        assert page.evaluate("window.__pwned") is None
        board = page.locator(".board").inner_text()
        assert all(f"New player {name} has joined the game." in board for name in HOSTILE)
        assert dialogs == []
    finally:
        world.stop()


def test_a_phone_sized_viewport_shows_the_whole_map(played_world, tmp_path):
    server = played_world
    with sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path / "phone"),
            executable_path=CHROMIUM,
            args=ARGS,
            headless=True,
            viewport={"width": 360, "height": 740},
            device_scale_factor=2,
        )
        try:
            page = context.new_page()
            page.goto(server.base + "/games/Nebula")
            box = page.locator("svg.galaxy").bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= 360
            assert page.evaluate("document.documentElement.scrollWidth") <= 360
            # every system is inside the drawn map
            corners = page.evaluate(
                """() => { const svg = document.querySelector('svg.galaxy').getBoundingClientRect();
                           let bad = 0;
                           for (const g of document.querySelectorAll('g.sys')) {
                             const r = g.getBoundingClientRect();
                             if (r.left < svg.left - 1 || r.right > svg.right + 1) bad++; }
                           return [bad, document.querySelectorAll('g.sys').length]; }"""
            )
            assert corners[0] == 0 and corners[1] == 176
            page.screenshot(path=str(SHOTS / "phone.png"), full_page=True)
        finally:
            context.close()


def test_screenshots_of_the_lobby_the_map_and_the_player_view(browser, played_world):
    """Pictures for the README, from a game the random bots have played for a while."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    world = played_world
    page = browser.new_page()
    page.goto(world.base + "/")
    assert page.locator(".game-card").count() == 1
    page.screenshot(path=str(SHOTS / "lobby.png"), full_page=True)
    page.goto(world.base + "/games/Nebula")
    assert page.locator(".turn-number").inner_text() == "14"
    assert page.locator("svg.galaxy .leader").count() > 0
    page.locator("svg.galaxy").screenshot(path=str(SHOTS / "map.png"))
    page.screenshot(path=str(SHOTS / "game-page.png"), full_page=True)
    page.goto(world.base + "/games/Nebula/turns/2")  # turn 2: the third turn played (from 0)
    assert "after turn 2" in page.locator("h1").inner_text()
    page.goto(world.base + "/games/Nebula")
    page.fill("#login input[name=username]", "alice")
    page.fill("#login input[name=password]", "alice-pw")
    page.click("#login button")
    page.wait_for_url("**/play")
    assert page.locator(".scoreplot polyline").count() == 5
    page.screenshot(path=str(SHOTS / "player-view.png"))
