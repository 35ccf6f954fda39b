"""The web listener of cluster nodes: any node serves the pages and the API of every game.

Two or three `tae-server serve --node` processes on the test PostgreSQL, each with a web
listener and the same web secret. Requests for a game another node runs are relayed to its
owner: pages, the map, the JSON API, orders (stored once), tokens, the browser's login form and
the event stream all work through a node that does not run the game, the lobby lists every
game, and when the owner is killed the same URL works on the node that took the game over.
"""

from __future__ import annotations

import base64
import http.cookiejar
import json
import re
import socket
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

from protocol import Okay
from server.game.passwords import hash_password

from ..admin.admin_client import AdminClient
from ..support.openapi_check import checked
from ..support.servers import free_port
from .test_cluster import NodeProcess, create_games, nodes_view, owner_of, placed, tae_server, wait_until

pytestmark = pytest.mark.timeout(180)

ADMIN, ADMIN_PASSWORD = "tpadm", "secret7"


class WebNode(NodeProcess):
    """A cluster node with a web listener on a port of its own and the shared web secret."""

    def __init__(self, database: str, name: str, config: str, cwd):
        self.web_port, self.admin_port = free_port(), free_port()
        super().__init__(
            database,
            name,
            "--config",
            config,
            "--web",
            f"tcp:{self.web_port}:interface=127.0.0.1",
            "--admin",
            f"tcp:{self.admin_port}:interface=127.0.0.1",
            cwd=cwd,
        )

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.web_port}{path}"

    def call(self, method: str, path: str, document=None, user: str | None = None, token: str | None = None):
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if user is not None:
            headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:{user}-pw".encode()).decode()
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        data = None if document is None else json.dumps(document).encode()
        request = urllib.request.Request(self.url(path), data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return answer.status, checked(method, path, answer)
        except urllib.error.HTTPError as error:
            return error.code, checked(method, path, error)

    def page(self, path: str) -> tuple[int, str, str]:
        try:
            with urllib.request.urlopen(self.url(path), timeout=30) as answer:
                return answer.status, answer.headers.get("content-type", ""), answer.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.headers.get("content-type", ""), error.read().decode()


def start_nodes(pg_url: str, tmp_path, names: tuple[str, ...]) -> list[WebNode]:
    config = tmp_path / "node.toml"
    config.write_text(
        f'web_secret_file = "{tmp_path / "web-secret"}"\n'
        f'[admin.users]\n{ADMIN} = "{hash_password(ADMIN_PASSWORD, n=1024)}"\n'
    )
    (tmp_path / "web-secret").write_text("k" * 64 + "\n")
    nodes = [WebNode(pg_url, name, str(config), tmp_path) for name in names]
    for node in nodes:
        node.start()
    wait_until(lambda: sum(n["alive"] for n in nodes_view(pg_url)["nodes"]) == len(names), 20, "nodes")
    for node in nodes:
        node.wait_for(lambda e: "web listener reached by the other nodes" in str(e.get("message", "")), 20)
    return nodes


@pytest.fixture
def two_web_nodes(pg_url, tmp_path):
    nodes: list[WebNode] = []
    try:
        nodes = start_nodes(pg_url, tmp_path, ("a", "b"))
        yield nodes
    finally:
        for node in nodes:
            node.kill()


def game_on(pg_url: str, node: str, names: list[str]) -> str:
    wait_until(lambda: placed(pg_url), 20, "every game has a node")
    return next(g for g in names if owner_of(pg_url, g) == node)


def settle_orders(node: WebNode, game: str, user: str) -> tuple[int, int]:
    """A colonist fleet of `user` and a free habitable system: an order the game accepts."""
    _, me = node.call("GET", f"/api/games/{game}/me", user=user)
    _, public = node.call("GET", f"/api/games/{game}")
    free = [s["id"] for s in public["systems"] if s["terrain"] == "habitable" and s["colony"] is None]
    settlers = [f for f in me["hand"] if f["kind"] != "mining"]
    return settlers[0]["fleet"], free[0]


def listed_names(node: WebNode) -> set[str]:
    status, listed = node.call("GET", "/api/games")
    assert status == 200, listed
    return {g["name"] for g in listed["games"]}


def browser_login(browser, node: WebNode, game: str, user: str) -> str:
    """Log in with the game page's form; the page the browser lands on."""
    with browser.open(node.url(f"/games/{game}"), timeout=30) as answer:
        csrf = re.search(r'name="csrf" value="([^"]+)"', answer.read().decode()).group(1)
    form = urllib.parse.urlencode({"csrf": csrf, "username": user, "password": f"{user}-pw"}).encode()
    with browser.open(node.url(f"/games/{game}/login"), data=form, timeout=30) as answer:
        assert answer.status == 200 and answer.url.endswith(f"/games/{game}/play")
        return answer.read().decode()


def open_stream(node: WebNode, path: str) -> tuple[socket.socket, bytes]:
    stream = socket.create_connection(("127.0.0.1", node.web_port), timeout=20)
    stream.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    received = b""
    while b"event: hello" not in received:
        chunk = stream.recv(4096)
        assert chunk, received
        received += chunk
    return stream, received


def test_every_page_and_api_call_works_through_a_node_that_does_not_run_the_game(two_web_nodes, pg_url):
    a, b = two_web_nodes
    create_games(pg_url, ["g1", "g2", "g3"])
    remote = game_on(pg_url, "b", ["g1", "g2", "g3"])

    # The lobby of either node lists every game of the cluster (once its owner has loaded it).
    for node in (a, b):
        wait_until(lambda n=node: listed_names(n) == {"tae", "g1", "g2", "g3"}, 10, "every game listed")
        status, kind, html = node.page("/")
        assert status == 200 and all(f"/games/{g}" in html for g in ("g1", "g2", "g3"))

    # Pages and the map of a game b runs, from a.
    status, kind, html = a.page(f"/games/{remote}")
    assert status == 200 and "text/html" in kind and remote in html
    status, kind, svg = a.page(f"/games/{remote}/map.svg")
    assert status == 200 and kind.startswith("image/svg+xml") and svg.startswith("<svg")
    assert a.page("/games/no-such-game")[0] == 404
    assert a.call("GET", "/api/games/no-such-game")[0] == 404

    # Accounts, an order and a token, all through a; b stored the order once.
    for user in ("ann", "bob"):
        status, made = a.call(
            "POST", f"/api/games/{remote}/accounts", {"username": user, "password": f"{user}-pw"}
        )
        assert status == 201, made
    fleet, target = settle_orders(a, remote, "ann")
    status, placed_order = a.call(
        "POST", f"/api/games/{remote}/orders", {"fleet": fleet, "target": target}, user="ann"
    )
    assert status == 201, placed_order
    for node in (a, b):
        status, orders = node.call("GET", f"/api/games/{remote}/orders", user="ann")
        assert status == 200 and [(o["fleet"], o["target"]) for o in orders["orders"]] == [(fleet, target)]
    status, refused = a.call("POST", f"/api/games/{remote}/orders", {"fleet": fleet}, user="ann")
    assert status == 400 and refused["error"]["name"] == "FRAME"
    assert a.call("GET", f"/api/games/{remote}/me", user="ann:wrong")[0] == 401
    status, issued = a.call("POST", f"/api/games/{remote}/token", {}, user="ann")
    assert status == 200
    assert b.call("GET", f"/api/games/{remote}/me", token=issued["token"])[0] == 200

    # The browser's login form through a, then the player's page; a second login, to a game
    # a runs, replaces the first (a login never inherits the logins of a cookie the browser
    # held before: that cookie may have been planted); every node reads the sealed cookie.
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    assert f"/games/{remote}/play/events" in browser_login(browser, a, remote, "ann")
    local = game_on(pg_url, "a", ["tae", "g1", "g2", "g3"])
    assert a.call("POST", f"/api/games/{local}/accounts", {"username": "dan", "password": "dan-pw"})[0] == 201
    assert f"/games/{local}/play/events" in browser_login(browser, a, local, "dan")

    # One account, a game on each node: either node lists both as the account's games, also
    # for a token of the game the other node runs (that node checks it).
    assert a.call("POST", f"/api/games/{local}/join", {}, user="ann")[0] == 201
    for node in (a, b):
        status, me = node.call("GET", "/api/me", user="ann")
        assert status == 200 and sorted(g["game"] for g in me["games"]) == sorted([remote, local]), me
    status, me = a.call("GET", "/api/me", token=issued["token"])
    assert status == 200 and sorted(g["game"] for g in me["games"]) == sorted([remote, local]), me
    for node in (a, b):
        with browser.open(node.url(f"/games/{local}/play"), timeout=30) as answer:
            assert answer.url.endswith(f"/games/{local}/play"), (node.name, local)
        with browser.open(node.url(f"/games/{remote}/play"), timeout=30) as answer:
            assert answer.url.endswith(f"/games/{remote}#login"), (node.name, remote)
        with browser.open(node.url("/"), timeout=30) as answer:
            lobby = answer.read().decode()
        assert "Play as dan" in lobby and "Play as ann" not in lobby

    # Joining from a's lobby: the form names a game b runs; b makes the account.
    joiner = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    with joiner.open(a.url("/"), timeout=30) as answer:
        csrf = re.search(r'name="csrf" value="([^"]+)"', answer.read().decode()).group(1)
    fields = {"csrf": csrf, "game": remote, "username": "eve", "password": "eve-pw", "password2": "eve-pw"}
    with joiner.open(a.url("/join"), data=urllib.parse.urlencode(fields).encode(), timeout=30) as answer:
        assert answer.url.endswith(f"/games/{remote}/play") and "eve" in answer.read().decode()
    assert b.call("GET", f"/api/games/{remote}/me", user="eve")[0] == 200

    # The event stream of the game on a announces the turn b resolves.
    stream, received = open_stream(a, f"/games/{remote}/events")
    try:
        assert a.call("POST", f"/api/games/{remote}/finish", {}, user="ann")[0] == 200
        assert b.call("POST", f"/api/games/{remote}/finish", {}, user="bob")[0] == 200
        assert a.call("POST", f"/api/games/{remote}/finish", {}, user="eve")[0] == 200
        deadline = time.monotonic() + 20
        while b"event: change" not in received or b'"turn": 1' not in received:
            assert time.monotonic() < deadline, received
            received += stream.recv(4096)
    finally:
        stream.close()
    assert a.call("GET", f"/api/games/{remote}")[1]["turn"] == 1

    # The admin listener of a: every game of the cluster; changes carried out by b.
    admin = AdminClient(a.admin_port)
    try:
        assert admin.start(ADMIN, ADMIN_PASSWORD) == Okay("Welcome")
        listing = admin.run("list-games")
        assert listing.status == 0 and all(g in listing.text for g in ("tae", "g1", "g2", "g3")), listing
        status = admin.run("status", remote)
        assert status.status == 0 and "ann" in status.text and "bob" in status.text, status
        added = admin.run("add-player", remote, "cat", "cat-pw")
        assert added.status == 0, added
        assert b.call("GET", f"/api/games/{remote}/me", user="cat")[0] == 200
        ended = admin.run("end-turn", remote)
        assert ended.status == 0 and "turn 2" in ended.text, ended
        assert a.call("GET", f"/api/games/{remote}")[1]["turn"] == 2
        assert admin.run("remove-player", remote, "cat").status == 0
        assert b.call("GET", f"/api/games/{remote}/me", user="cat")[0] == 403  # removed: Permission Denied
        assert admin.run("status", "no-such-game").status != 0
        made = admin.run("create-game", "g9")
        assert made.status == 0 and "runs it" in made.text, made
        assert admin.run("status", "g9").status == 0
        wait_until(lambda: "g9" in listed_names(b), 10, "the new game listed")
    finally:
        admin.close()
    assert owner_of(pg_url, remote) == "b"

    # The game moves to a: the event stream b served ends (its page reconnects), and the
    # same URLs work on both nodes, now answered by a.
    stream, received = open_stream(b, f"/games/{remote}/events")
    try:
        moved = tae_server("move-game", remote, "a", "--database", pg_url)
        assert moved.returncode == 0, moved.stderr
        deadline = time.monotonic() + 20
        while not received.endswith(b"0\r\n\r\n"):
            assert time.monotonic() < deadline, received
            received += stream.recv(4096)
    finally:
        stream.close()
    for node in (a, b):
        status, orders = node.call("GET", f"/api/games/{remote}/orders", user="ann")
        assert status == 200 and orders["turn"] == 2  # the open turn, as /api/games/NAME says


def test_a_killed_owner_s_games_are_served_at_the_same_urls_by_the_survivors(pg_url, tmp_path):
    nodes: list[WebNode] = []
    try:
        nodes = start_nodes(pg_url, tmp_path, ("a", "b", "c"))
        a, b, c = nodes
        names = ["h1", "h2", "h3", "h4", "h5"]
        create_games(pg_url, names)
        remote = game_on(pg_url, "c", names)
        assert (
            a.call("POST", f"/api/games/{remote}/accounts", {"username": "ann", "password": "ann-pw"})[0]
            == 201
        )
        fleet, target = settle_orders(a, remote, "ann")
        assert (
            a.call("POST", f"/api/games/{remote}/orders", {"fleet": fleet, "target": target}, user="ann")[0]
            == 201
        )
        browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        browser_login(browser, a, remote, "ann")
        stream, _ = open_stream(a, f"/games/{remote}/events")

        c.kill()  # SIGKILL: the stream relayed through a ends, the game is claimed by a or b
        stream.settimeout(30)
        while stream.recv(4096):  # a stream cut short is closed, not finished: it reconnects
            pass
        stream.close()
        for node in (a, b):
            status, document = node.call("GET", f"/api/games/{remote}")
            assert status == 200 and document["name"] == remote
            status, orders = node.call("GET", f"/api/games/{remote}/orders", user="ann")
            assert status == 200 and [(o["fleet"], o["target"]) for o in orders["orders"]] == [
                (fleet, target)
            ]
        assert owner_of(pg_url, remote) in ("a", "b")
        for node in (a, b):  # still logged in: the session is in the browser's cookie
            with browser.open(node.url(f"/games/{remote}/play"), timeout=30) as answer:
                assert answer.url.endswith(f"/games/{remote}/play")
        wait_until(lambda: listed_names(b) == {"tae", *names}, 10, "every game listed")
        assert a.call("POST", f"/api/games/{remote}/finish", {}, user="ann")[0] == 200
    finally:
        for node in nodes:
            node.kill()
