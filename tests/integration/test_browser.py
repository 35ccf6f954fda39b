"""The web pages in a real headless Chromium (Debian's `chromium`, driven by Playwright).

The server is `tests.integration.web_world` on a free port of 127.0.0.1; the tests use only
HTTP, as a browser and as API clients. Without /usr/bin/chromium or the playwright package
these tests are skipped and say why.

The tests take screenshots (the lobby, the map, the game page, the player view, a phone, a
combat, the rules). They are written to a temporary folder, unless `TAE_SCREENSHOTS` names
another: `make screenshots` sets it to docs/screenshots/ to renew the README's pictures on
purpose. A normal run leaves docs/ as it found it (the last test checks).
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.support.servers import free_port, log_tail, start_serve

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
DOCS = ROOT / "docs"
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

    def __init__(self, players: str, size: str = "", bot_turns: int = 0, until_combat: bool = False):
        command = [sys.executable, "-m", "tests.integration.web_world", "--players", players]
        command += ["--bot-turns", str(bot_turns)]
        if until_combat:
            command.append("--until-combat")
        if size:
            command += ["--size", size]
        # its log goes to a file: a pipe that nobody reads would stop the server once full
        self.log = tempfile.TemporaryFile("w+")  # noqa: SIM115 (closed by stop)
        self.process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=self.log, text=True)
        deadline = time.monotonic() + 30
        line = ""
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if line.startswith("listening ") or self.process.poll() is not None:
                break
        if not line.startswith("listening "):
            self.stop()
            self.log.seek(0)
            raise RuntimeError("the web server did not start: " + self.log.read())
        self.base = f"http://127.0.0.1:{int(line.split()[1])}"
        # and what it prints after `listening` is read, however much it is
        threading.Thread(target=self.process.stdout.read, daemon=True).start()

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
        self.log.close()


class RealServer(WebWorld):
    """`tae-server serve --web` with a fresh database, and the given players joined over the API."""

    def __init__(self, directory: Path, players: tuple[str, ...], *options: str):
        self.tp_port, self.web_port = free_port(), free_port()
        self.log = (directory / "server.log").open("w")
        args = [
            *("--listen", f"tcp:{self.tp_port}:interface=127.0.0.1"),
            *("--web", f"tcp:{self.web_port}:interface=127.0.0.1"),
            *("--turn-length", "0", "--game-name", "Nebula"),
            *options,
        ]
        try:
            self.process = start_serve(directory, args, self.web_port, self.log)
        except RuntimeError:
            self.log.close()
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


def docs_state() -> tuple[str, dict[str, tuple[int, int]]]:
    """What git says of docs/, and every file's time of change and size under docs/."""
    try:
        status = subprocess.run(
            ["git", "status", "--porcelain", "--", "docs/"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        status = "(no git)"
    files = {
        path.relative_to(ROOT).as_posix(): (path.stat().st_mtime_ns, path.stat().st_size)
        for path in sorted(DOCS.rglob("*"))
        if path.is_file()
    }
    return status, files


DOCS_BEFORE = docs_state()


@pytest.fixture(scope="session")
def shots(tmp_path_factory) -> Path:
    """Where the screenshots go: $TAE_SCREENSHOTS (`make screenshots`: docs/screenshots), else a
    temporary folder."""
    chosen = os.environ.get("TAE_SCREENSHOTS")
    folder = Path(chosen).resolve() if chosen else tmp_path_factory.mktemp("screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


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
def combat_world():
    """The stand-in game played by the bots until a combat turn starts (turn 10, bob's scientist
    leader attacks alice's)."""
    world = WebWorld("alice,bob,carol", until_combat=True)
    yield world
    world.stop()


def launch(playwright, profile: Path, **options):
    context = playwright.chromium.launch_persistent_context(
        str(profile), executable_path=CHROMIUM, args=ARGS, headless=True, **options
    )
    context.set_default_timeout(20_000)
    return context


@pytest.fixture
def browser(tmp_path):
    with sync_api.sync_playwright() as playwright:
        context = launch(playwright, tmp_path / "profile", viewport={"width": 1280, "height": 900})
        yield context
        context.close()


@pytest.fixture
def phone(tmp_path):
    """A phone: 360×740 CSS pixels, a touch screen."""
    with sync_api.sync_playwright() as playwright:
        context = launch(
            playwright,
            tmp_path / "phone",
            viewport={"width": 360, "height": 740},
            device_scale_factor=2,
            is_mobile=True,
            has_touch=True,
        )
        yield context
        context.close()


def log_in(page, world: WebWorld, user: str) -> None:
    page.goto(world.base + "/games/Nebula")
    page.fill("#login input[name=username]", user)
    page.fill("#login input[name=password]", user + "-pw")
    page.click("#login button")
    page.wait_for_url("**/games/Nebula/play")


def free_target(world: WebWorld, user: str, kind: str | None):
    """A system that a colonist of `kind` may colonize now and that no order of `user` names."""
    public = world.api("GET", "/api/games/Nebula", user)
    taken = {o["target"] for o in world.api("GET", "/api/games/Nebula/orders", user)["orders"]}
    terrain = "uninhabitable" if kind == "mining" else "habitable"
    return next(
        s
        for s in public["systems"]
        if s["terrain"] == terrain
        and s["colony"] is None
        and not s["destroyed"]
        and s["leader"] is None
        and s["id"] not in taken
    )


def free_settler_target(world: WebWorld, user: str):
    me = world.api("GET", "/api/games/Nebula/me", user)
    colonist = next(f for f in me["hand"] if f["kind"] != "mining")
    return colonist, free_target(world, user, colonist["kind"])


def box(page, selector: str) -> dict:
    return settled_box(page.locator(selector).first, selector)


def settled_box(locator, what: str = "") -> dict:
    """The element's box once it is on the page: the page refreshes its live part after an
    order or a turn (the element is replaced), so a box asked for during the swap is None; ask
    again, for at most 5 s."""
    for _ in range(50):
        found = locator.bounding_box()
        if found is not None:
            return found
        locator.page.wait_for_timeout(100)
    raise AssertionError(f"no box for {what or locator}")


def centre(b: dict) -> tuple[float, float]:
    return b["x"] + b["width"] / 2, b["y"] + b["height"] / 2


def inside(point: tuple[float, float], b: dict) -> bool:
    return b["x"] <= point[0] <= b["x"] + b["width"] and b["y"] <= point[1] <= b["y"] + b["height"]


def rgb(colour: str) -> str:
    """'#e69f00' as a computed style says it: 'rgb(230, 159, 0)'."""
    value = colour.lstrip("#")
    return "rgb({}, {}, {})".format(*(int(value[i : i + 2], 16) for i in (0, 2, 4)))


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
    assert page.locator(f"{selector}.k-{colonist['kind']}").count() == 1
    assert page.evaluate("window.__sameDocument") is True  # no reload happened
    assert "alice placed a" in page.locator(".history").inner_text()


def test_a_player_logs_in_colonizes_by_clicking_sees_a_refusal_and_finishes(server, browser):
    page = browser.new_page()
    log_in(page, server, "alice")
    assert page.locator("#first-turn-hint a[href='/rules']").count() == 1  # a new player's hint
    colonist, system = free_settler_target(server, "alice")
    page.check(f'input[name=fleet][form=order-form][value="{colonist["fleet"]}"]')
    page.click(f'g.sys[data-id="{system["id"]}"]')
    page.locator("#notice", has_text="Order placed: Colonize").wait_for()
    page.locator(".orders", has_text="Colonize").wait_for()
    orders = server.api("GET", "/api/games/Nebula/orders", "alice")["orders"]
    assert [(o["fleet"], o["type_name"], o["target"]) for o in orders] == [
        (colonist["fleet"], "Colonize", system["id"])
    ]
    # the same fleet again: the probe refuses it and nothing is inserted
    page.check(f'input[name=fleet][form=order-form][value="{colonist["fleet"]}"]')
    _, other = free_settler_target(server, "alice")
    page.click(f'g.sys[data-id="{other["id"]}"]')
    page.locator("#notice.error", has_text="That fleet already has its order for this turn.").wait_for()
    assert len(server.api("GET", "/api/games/Nebula/orders", "alice")["orders"]) == 1
    page.click("#finish")
    page.locator(".state.done", has_text="You have finished this turn").wait_for()
    page.locator("#notice", has_text="You have finished this turn.").wait_for()
    server.api("POST", "/api/games/Nebula/finish", "bob", {})
    page.locator(".turn-number", has_text="1").wait_for()
    # the notices of turn 0 went with it; turn 0's account is at the top now
    page.locator("#notice").wait_for(state="hidden")
    assert "You have finished" not in page.locator("main").inner_text()
    page.locator(".last-turn", has_text="Turn 0: what happened to you").wait_for()
    assert "has colonized" in page.locator(".last-turn").inner_text()
    page.locator(".board", has_text="has colonized").wait_for()
    assert page.locator(f'g.sys[data-id="{system["id"]}"] circle.col').count() == 1


def test_one_account_joins_a_second_game_and_switches_between_them(server, browser, tmp_path, shots):
    made = subprocess.run(
        [sys.executable, "-m", "server.cli", "create-game", "Orion", "--turn-length", "0"],
        cwd=tmp_path,  # the server's database; the running server loads the new game
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert made.returncode == 0, made.stdout + made.stderr
    page = browser.new_page()
    log_in(page, server, "alice")
    page.goto(server.base + "/")
    orion = page.locator("article.game-card", has=page.locator("h2", has_text="Orion"))
    page.screenshot(path=str(shots / "lobby-join.png"), full_page=True)
    orion.locator("button", has_text="Join as alice").click()
    page.wait_for_url("**/games/Orion/play")
    page.locator("#notice, .notice", has_text="Welcome, alice: you play in Orion.").first.wait_for()
    page.goto(server.base + "/")
    assert page.locator("text=Join as alice").count() == 0
    assert page.locator("a.button", has_text="Play as alice").count() == 2
    for game in ("Nebula", "Orion", "Nebula"):
        mine = page.locator("li.my-game", has=page.locator("a.my-game-name", has_text=game))
        mine.locator("a.button", has_text="Play as alice").click()
        page.wait_for_url(f"**/games/{game}/play")
        assert page.locator("h1", has_text=game).count() >= 1
        page.goto(server.base + "/")
    mine = server.api("GET", "/api/me", "alice")
    assert [(g["game"], g["player"]) for g in mine["games"]] == [("Nebula", 1), ("Orion", 1)]


def test_the_home_page_badges_follow_the_turns_without_reloading(server, browser, shots):
    page = browser.new_page()
    log_in(page, server, "alice")
    page.goto(server.base + "/")
    page.evaluate("window.__sameDocument = true")
    nebula = page.locator('li.my-game[data-game="Nebula"]')
    nebula.locator(".badge-turn", has_text="Your turn").wait_for()
    assert "1 of your games waits for you." in page.locator("#waiting-count").inner_text()
    page.screenshot(path=str(shots / "home.png"), full_page=True)
    server.api("POST", "/api/games/Nebula/finish", "alice", {})
    nebula.locator(".state.done", has_text="finished").wait_for(timeout=12_000)  # the page asks again
    assert nebula.locator(".badge-turn").count() == 0
    server.api("POST", "/api/games/Nebula/finish", "bob", {})  # the turn ends: alice's turn again
    nebula.locator(".my-game-turn", has_text="turn 1").wait_for(timeout=12_000)
    assert nebula.locator(".badge-turn").count() == 1
    assert page.evaluate("window.__sameDocument") is True  # no reload happened


def test_a_game_against_the_computer_started_from_the_home_page_is_played_to_game_over(
    browser, tmp_path, shots
):
    # a tiny map with 6 alien artifacts: over once 4 are taken, after a few turns
    (tmp_path / "tiny.txt").write_text("A.M.A\n.A.A.\nM.A.A\n")
    world = RealServer(tmp_path, ("alice",), "--map", "tiny.txt", "--limit", "computer_games_per_account=1")
    try:
        page = browser.new_page()
        log_in(page, world, "alice")
        page.goto(world.base + "/")
        page.click("details.computer-game summary")
        page.select_option("select[name=computer_players]", "3")
        page.select_option("select[name=level]", "easy")
        page.screenshot(path=str(shots / "home-computer.png"), full_page=True)
        page.click("text=Start a game against the computer")
        page.wait_for_url("**/games/vs-computer-1/play")
        players = world.api("GET", "/api/games/vs-computer-1", "alice")["players"]
        assert [(p["name"], p["seat"]) for p in players] == [("alice", "playing")] + [
            (name, "computer (easy)") for name in ("computer-easy", "computer-easy-2", "computer-easy-3")
        ]
        finished = 0
        while not world.api("GET", "/api/games/vs-computer-1", "alice")["over"]:
            assert finished < 60, "the game against the computer is not over after 60 turns"
            shown = page.locator(".turn-number").inner_text()
            turn_changed = "shown => document.querySelector('.turn-number')?.textContent !== shown"
            try:
                try:
                    page.click("#finish")  # the computer players finished at once: the turn ends
                except sync_api.TimeoutError:
                    # The live part was renewed under the click (the computer players' orders
                    # came in): the click went to the new button, which ended the turn and the
                    # game, while Playwright saw its button detached and looked for another.
                    if page.evaluate(turn_changed, shown) is not True:
                        raise
                # the next turn, or a later one: a combat between computer players ends at once
                page.wait_for_function(turn_changed, arg=shown)
            except sync_api.TimeoutError:
                state = world.api("GET", "/api/games/vs-computer-1", "alice")
                print(f"turn {shown} on the page; the API says {state}")
                print(page.locator("main").inner_text())
                print(log_tail(tmp_path / "server.log"))
                raise
            finished += 1
        print(f"the game against the computer ended after alice finished {finished} turns")
        assert finished >= 2  # alice played turns of it
        page.locator(".last-turn, .ranking", has_text="GAME OVER").first.wait_for()
        page.screenshot(path=str(shots / "computer-game-over.png"), full_page=True)
        page.goto(world.base + "/")
        finished = page.locator("details.finished")
        finished.locator("summary").click()
        assert "vs-computer-1" in finished.inner_text() and "your place:" in finished.inner_text()
        page.screenshot(path=str(shots / "home-finished.png"), full_page=True)
        page.wait_for_timeout(6_000)  # the page asks again for its live part: the fold stays open
        assert finished.get_attribute("open") is not None
    finally:
        world.stop()


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
        log_in(page, world, "alice")
        assert page.evaluate("window.__pwned") is None
        board = page.locator(".board").inner_text()
        assert all(f"New player {name} has joined the game." in board for name in HOSTILE)
        assert dialogs == []
    finally:
        world.stop()


def test_the_map_has_coordinates_player_badges_my_own_marks_and_labelled_orders(played_world, browser, shots):
    """Rows up the left and columns along the bottom, at the systems they name; a leader is
    filled with its kind's colour and outlined in its owner's, never filled with a player's
    colour; my own leaders are marked; a pending order shows its kind's letter and its number,
    which the list of orders explains."""
    from server.views.web.palette import KIND_CLASSES, KIND_FILLS, PLAYER_COLOURS, player_colour

    world = played_world
    page = browser.new_page()
    refused = []  # what the Content-Security-Policy blocked (inline script or style)
    page.on("console", lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None)
    log_in(page, world, "alice")
    public = world.api("GET", "/api/games/Nebula", "alice")
    assert page.locator(".axis .row").count() == public["height"]
    assert page.locator(".axis .col-n").count() == public["width"]
    for system in public["systems"][::23]:
        cell = box(page, f'g.sys[data-id="{system["id"]}"] rect.cell')
        row = box(page, f'.axis .row:text-is("{system["y"]}")')
        column = box(page, f'.axis .col-n:text-is("{system["x"]}")')
        assert abs(centre(row)[1] - centre(cell)[1]) < 3 and row["x"] + row["width"] <= cell["x"] + 1
        assert abs(centre(column)[0] - centre(cell)[0]) < 3 and column["y"] >= cell["y"] + cell["height"] - 1
        title = page.locator(f'g.sys[data-id="{system["id"]}"] > title').text_content()
        assert title.startswith(f"System {system['x']}, {system['y']}")
    # the palette: kinds fill, players outline
    leaders = page.evaluate(
        """() => [...document.querySelectorAll('svg.galaxy .leader')].map(g => {
             const shape = g.querySelector('.ldr'); const style = getComputedStyle(shape);
             return {owner: +g.dataset.owner, fill: style.fill, stroke: style.stroke,
                     kind: [...shape.classList].find(c => c.startsWith('k-')).slice(2),
                     badge: g.querySelector('.bn').textContent}; })"""
    )
    assert leaders
    players = {rgb(c) for c in PLAYER_COLOURS}
    for leader in leaders:
        assert leader["fill"] == rgb(KIND_FILLS[KIND_CLASSES.index(leader["kind"])])
        assert leader["fill"] not in players
        assert leader["stroke"] == rgb(player_colour(leader["owner"]))
        assert leader["badge"] == str(leader["owner"])
    fills = page.evaluate(
        "() => [...document.querySelectorAll('svg.galaxy circle.col')].map(c => getComputedStyle(c).fill)"
    )
    assert set(fills) <= {rgb(c) for c in KIND_FILLS}
    # my own leaders, and nobody else's, are marked
    mine = [leader for leader in world.api("GET", "/api/games/Nebula/me", "alice")["leaders"] if leader["at"]]
    assert mine and page.locator("svg.galaxy path.own").count() == len(mine)
    for leader in mine:
        cell = box(page, f'g.sys[data-id="{leader["at"]}"] rect.cell')
        assert any(
            inside(centre(settled_box(page.locator("svg.galaxy path.own").nth(i))), cell)
            for i in range(len(mine))
        )
    # a pending order, labelled on the map and in the list
    me = world.api("GET", "/api/games/Nebula/me", "alice")
    colonist = next(f for f in me["hand"] if f["order_types"])
    target = free_target(world, "alice", colonist["kind"])
    page.check(f'input[name=fleet][form=order-form][value="{colonist["fleet"]}"]')
    page.click(f'g.sys[data-id="{target["id"]}"]')
    page.locator('svg.galaxy .order[data-order="1"]').wait_for()
    mark = page.locator('svg.galaxy .order[data-order="1"]')
    assert inside(centre(settled_box(mark)), box(page, f'g.sys[data-id="{target["id"]}"] rect.cell'))
    letter = {"merchant": "M", "scientist": "S", "settler": "P", "mining": "R"}[colonist["kind"]]
    assert mark.locator(".ghost-l").text_content() == letter and mark.locator(".tag-n").text_content() == "1"
    listed = page.locator('ol.orders li[data-order="1"]').inner_text()
    assert f"#{colonist['fleet']}" in listed and f"{target['x']}, {target['y']}" in listed
    assert colonist["kind"].capitalize() in listed
    page.locator("details.legend summary").click()
    assert "your pending order" in page.locator("details.legend").inner_text()
    page.locator(".map-tools .zoom[data-zoom=in]").click()  # the zoom sets the map's width
    assert refused == []
    page.locator(".map-view").screenshot(path=str(shots / "map-player.png"))


def test_a_combat_turn_marks_the_fighting_leaders_on_the_map(combat_world, browser, shots):
    world = combat_world
    public = world.api("GET", "/api/games/Nebula", "alice")
    assert public["phase"] == "combat"
    conflict = next(c for c in public["conflicts"] if c["running"])
    page = browser.new_page()
    page.goto(world.base + "/games/Nebula")
    rings = page.locator("svg.galaxy .combat .fight")
    assert rings.count() == 2
    tags = page.locator("svg.galaxy .combat .tag-n").all_text_contents()
    assert tags == ["A", "D"]
    for i, side in enumerate((conflict["attacker"], conflict["defender"])):
        cell = box(page, f'g.sys[data-id="{side["at"]}"] rect.cell')
        assert inside(centre(settled_box(rings.nth(i))), cell)
    assert page.locator("svg.galaxy .clash").count() == (0 if conflict["unification"] is None else 1)
    page.locator("svg.galaxy").screenshot(path=str(shots / "combat.png"))
    # the fighter sees what to do at the top of the page
    log_in(page, world, conflict["attacker"]["owner_name"])
    assert "You fight this combat turn" in page.locator(".turn-box").inner_text()
    assert page.locator("svg.galaxy .combat .fight").count() == 2


def test_a_phone_plays_a_turn_by_taps_with_zoom_and_nothing_moves_under_the_finger(
    played_world, phone, shots
):
    world = played_world
    page = phone.new_page()
    refused = []  # what the Content-Security-Policy blocked (inline script or style)
    page.on("console", lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None)
    page.goto(world.base + "/games/Nebula")
    page.locator("#login input[name=username]").tap()
    page.fill("#login input[name=username]", "bob")
    page.fill("#login input[name=password]", "bob-pw")
    page.locator("#login button").tap()
    page.wait_for_url("**/play")
    assert page.evaluate("matchMedia('(pointer: coarse)').matches")
    assert (
        page.evaluate("document.documentElement.scrollWidth") <= 360
    )  # the page itself never scrolls sideways

    def cell_size() -> float:
        return box(page, "svg.galaxy g.sys rect.cell")["width"]

    assert cell_size() >= 44  # a touch screen starts with tap-sized systems
    page.locator(".map-tools .zoom[data-zoom=fit]").tap()
    assert cell_size() < 44 and box(page, "svg.galaxy")["width"] <= 360  # the whole map
    page.locator(".map-tools .zoom[data-zoom=in]").tap()
    page.locator(".map-tools .zoom[data-zoom=in]").tap()
    assert cell_size() >= 44
    # the tap targets outside the map are finger-sized too
    assert box(page, "#finish")["height"] >= 44 and box(page, "label.fleet")["height"] >= 44
    me = world.api("GET", "/api/games/Nebula/me", "bob")
    colonist = next(f for f in me["hand"] if f["order_types"])
    target = free_target(world, "bob", colonist["kind"])
    page.locator(f'label.fleet:has(input[value="{colonist["fleet"]}"])').tap()
    assert page.is_checked(f'input[name=fleet][value="{colonist["fleet"]}"]')
    cell = f'g.sys[data-id="{target["id"]}"] rect.cell'
    page.locator(cell).scroll_into_view_if_needed()
    before = box(page, cell)
    assert before["width"] >= 44 and before["height"] >= 44
    # the zoomed map keeps its row and column numbers in sight, beside the systems they name,
    # wherever it is panned to
    page.evaluate("document.querySelector('.map-view').scrollLeft = 100000")
    page.wait_for_function(
        "document.querySelector('.axis-rows').getAttribute('transform') !== 'translate(0.00 0)'"
    )
    page.locator(cell).scroll_into_view_if_needed()
    before = box(page, cell)
    view = box(page, ".map-view")
    row = box(page, f'.axis .row:text-is("{target["y"]}")')
    column = box(page, f'.axis .col-n:text-is("{target["x"]}")')
    assert view["x"] - 1 <= row["x"] and row["x"] + row["width"] <= view["x"] + before["width"]  # the strip
    assert abs(centre(row)[1] - centre(before)[1]) < 3
    assert abs(centre(column)[0] - centre(before)[0]) < 3
    assert view["y"] <= column["y"] and column["y"] + column["height"] <= view["y"] + view["height"] + 1
    page.locator(cell).tap()
    page.locator("#notice", has_text="Order placed").wait_for()
    page.locator('svg.galaxy .order[data-order="1"]').wait_for()  # the page has been refreshed
    after = box(page, cell)
    assert abs(after["x"] - before["x"]) < 1 and abs(after["y"] - before["y"]) < 1, (before, after)
    assert page.evaluate("getComputedStyle(document.getElementById('notice')).position") == "fixed"
    assert [o["target"] for o in world.api("GET", "/api/games/Nebula/orders", "bob")["orders"]] == [
        target["id"]
    ]
    page.screenshot(path=str(shots / "phone-play.png"))
    assert refused == []


def test_keyboard_only_an_order_is_given_and_announced(played_world, browser):
    """Tab to the fleets, choose one, Tab to the map, move with the arrow keys, Enter: the order
    is placed and the answer is read out (aria-live); the map keeps the focus."""
    world = played_world
    page = browser.new_page()
    log_in(page, world, "carol")
    page.locator("body").focus()

    def tab_to(selector: str) -> None:
        for _ in range(80):
            page.keyboard.press("Tab")
            if page.evaluate(f"document.activeElement.matches({json.dumps(selector)})"):
                return
        raise AssertionError(f"Tab never reached {selector}")

    tab_to("input[name=fleet][form=order-form]")
    page.keyboard.press("Space")
    fleet = int(page.evaluate("document.activeElement.value"))
    me = world.api("GET", "/api/games/Nebula/me", "carol")
    kind = next((f["kind"] for f in me["hand"] if f["fleet"] == fleet), None)
    if kind is None or not next(f for f in me["hand"] if f["fleet"] == fleet)["order_types"]:
        pytest.fail(f"the first fleet in the list ({fleet}) takes no colonize order")
    target = free_target(world, "carol", kind)
    tab_to(".map.clickable")
    announced = page.locator("#cursor-text")
    start = announced.text_content()
    x, y = (int(n) for n in start.split(" · ")[0].removeprefix("System ").split(", "))
    for _ in range(abs(target["x"] - x)):
        page.keyboard.press("ArrowRight" if target["x"] > x else "ArrowLeft")
    for _ in range(abs(target["y"] - y)):
        page.keyboard.press("ArrowUp" if target["y"] > y else "ArrowDown")
    assert announced.text_content().startswith(f"System {target['x']}, {target['y']} ·")
    assert announced.get_attribute("aria-live") == "polite"
    page.keyboard.press("Enter")
    notice = page.locator("#notice")
    notice.locator(".text", has_text=f"Order placed: Colonize {target['x']}, {target['y']}.").wait_for()
    assert notice.get_attribute("aria-live") == "polite" and notice.get_attribute("role") == "status"
    page.locator('svg.galaxy .order[data-order="1"]').wait_for()
    assert page.evaluate("document.activeElement.matches('.map.clickable')")  # still on the map
    orders = world.api("GET", "/api/games/Nebula/orders", "carol")["orders"]
    assert [(o["fleet"], o["target"]) for o in orders] == [(fleet, target["id"])]


def test_deadlines_read_as_a_local_date_and_time_with_a_countdown(played_world, tmp_path):
    from datetime import datetime
    from zoneinfo import ZoneInfo

    world = played_world
    public = world.api("GET", "/api/games/Nebula", "alice")
    deadline = datetime.fromisoformat(public["deadline"])
    assert deadline.utcoffset() is not None and public["seconds_left"] > 0
    assert abs((deadline.timestamp() - time.time()) - public["seconds_left"]) < 5
    with sync_api.sync_playwright() as playwright:
        context = launch(
            playwright,
            tmp_path / "tokyo",
            viewport={"width": 1280, "height": 900},
            locale="en-GB",
            timezone_id="Asia/Tokyo",
        )
        try:
            page = context.new_page()
            for path in ("/", "/games/Nebula"):
                page.goto(world.base + path)
                shown = page.locator("time.deadline").first
                local = deadline.astimezone(ZoneInfo("Asia/Tokyo"))
                assert f"{local:%H:%M}" in shown.locator(".when").inner_text()
                assert shown.get_attribute("datetime") == public["deadline"]
                before = shown.locator(".countdown").inner_text()
                assert re.fullmatch(r"in (\d+ min( \d+ s)?|\d+ h( \d+ min)?)", before), before
                # counting down: the text changes within a few seconds (a new second is shown)
                page.wait_for_function(
                    "t => document.querySelector('time.deadline .countdown').textContent !== t", arg=before
                )
        finally:
            context.close()


def test_the_rules_page_is_linked_from_every_page_and_shows_the_board(played_world, browser, shots):
    world = played_world
    page = browser.new_page()
    for path in ("/", "/games/Nebula", "/games/Nebula/history", "/games/Nebula/turns/2"):
        page.goto(world.base + path)
        assert page.locator("header a[href='/rules']").count() == 1, path
    log_in(page, world, "alice")
    assert page.locator("header a[href='/rules']").count() == 1
    page.locator("header a[href='/rules']").click()
    page.wait_for_url("**/rules")
    assert "the rules for players" in page.locator("h1").inner_text()
    board = page.locator("img[src='/rules/diagrams/board.svg']")
    assert page.evaluate("i => i.complete && i.naturalWidth > 0", board.element_handle())
    assert page.locator("#leaders").count() == 1 and page.locator("a[href='#leaders']").count() >= 1
    assert page.locator("pre code").count() >= 10  # the example positions
    board.scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "rules.png"))
    page.locator("a[href='/rules/examples/regions.toml']").first.click()
    assert "[[" in page.locator("body").inner_text() or "title" in page.locator("body").inner_text()


def test_a_phone_sized_viewport_shows_the_whole_map(played_world, tmp_path, shots):
    server = played_world
    with sync_api.sync_playwright() as playwright:
        context = launch(
            playwright, tmp_path / "phone", viewport={"width": 360, "height": 740}, device_scale_factor=2
        )
        try:
            page = context.new_page()
            page.goto(server.base + "/games/Nebula")
            found = page.locator("svg.galaxy").bounding_box()
            assert found["x"] >= 0 and found["x"] + found["width"] <= 360
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
            page.screenshot(path=str(shots / "phone.png"), full_page=True)
        finally:
            context.close()


def test_screenshots_of_the_lobby_the_map_and_the_player_view(browser, played_world, shots):
    """Pictures for the README, from a game the random bots have played for a while."""
    world = played_world
    page = browser.new_page()
    page.goto(world.base + "/")
    assert page.locator(".game-card").count() == 1
    page.screenshot(path=str(shots / "lobby.png"), full_page=True)
    page.goto(world.base + "/games/Nebula")
    assert page.locator(".turn-number").inner_text() == "14"
    assert page.locator("svg.galaxy .leader").count() > 0
    page.locator("svg.galaxy").screenshot(path=str(shots / "map.png"))
    page.screenshot(path=str(shots / "game-page.png"), full_page=True)
    page.goto(world.base + "/games/Nebula/turns/2")  # turn 2: the third turn played (from 0)
    assert "after turn 2" in page.locator("h1").inner_text()
    log_in(page, world, "alice")
    assert page.locator(".scoreplot polyline").count() == 5
    page.screenshot(path=str(shots / "player-view.png"))


def test_the_browser_tests_leave_docs_as_they_found_it(shots):
    """Screenshots go to docs/ only when asked for (`make screenshots`); a test run leaves a
    clone clean."""
    if DOCS in shots.parents or shots == DOCS:
        pytest.skip("TAE_SCREENSHOTS writes into docs/ on purpose")
    assert docs_state() == DOCS_BEFORE
