"""Absence follows playing, against a real `tae-server serve` with its TP and web listeners.

cy misses a turn (the operator ends it with `tae-server end-turn`; the game marks a player
absent after one), then reads everything a player reads from the outside: `tae-client status`,
`board`, `fleets`, `orders`, `messages`, `vacation` (the seat), a plain TP login, the web login
and the player page with its event stream, an API token and the API's reads. Her seat stays the
stand-in's and nobody is told; `status` and the pages tell her how to take it back. Then
`tae-client back` takes it back, everyone reads "is back" once, and saying it again is a plain
refusal. (`tests/server/test_absence_follows_playing.py` goes through every request kind.)
"""

from __future__ import annotations

import base64
import http.cookiejar
import json
import re
import urllib.parse
import urllib.request

import pytest
from click.testing import CliRunner

import protocol as tp
from clients.cli import cli
from server.views.board import absence_notices
from server.views.own_seat import ABSENT_NOTE
from tests.support.json_schemas import json_answer
from tests.support.servers import free_port

from .server_process import ServerProcess, tae_server
from .tp_client import TPClient

pytestmark = pytest.mark.timeout(180)

PASSWORD = "first-password"
NAMES = ("ann", "bob", "cy")
AWAY = "cy"


class Player:
    """One player's `tae-client`, run in this process against the server's listeners."""

    def __init__(self, name: str, tp_port: int, web_port: int):
        self.name = name
        self.args = [
            "--host",
            "127.0.0.1",
            "--port",
            str(tp_port),
            "--web-url",
            f"http://127.0.0.1:{web_port}",
        ]
        self.args += ["--user", name, "--password", PASSWORD, "--timeout", "20"]

    def run(self, *command: str):
        return CliRunner().invoke(cli, [*self.args, *command])

    def ok(self, *command: str) -> str:
        done = self.run(*command)
        assert done.exit_code == 0, (command, done.output)
        assert "Traceback" not in done.output
        return done.output

    def json(self, *command: str):
        return json_answer(self.ok(*command, "--json"))

    def subjects(self) -> list[str]:
        return [m["subject"] for m in self.json("messages")["messages"]]


class Browser:
    """A browser with cookies, on the web listener."""

    def __init__(self, web_port: int):
        self.base = f"http://127.0.0.1:{web_port}"
        cookies = urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        self.opener = urllib.request.build_opener(cookies)

    def get(self, path: str) -> str:
        with self.opener.open(self.base + path, timeout=20) as answer:
            return answer.read().decode()

    def log_in(self, name: str) -> str:
        csrf = re.search(r'name="csrf" value="([^"]+)"', self.get("/games/tae"))
        assert csrf
        form = urllib.parse.urlencode({"csrf": csrf.group(1), "username": name, "password": PASSWORD})
        with self.opener.open(self.base + "/games/tae/login", form.encode(), timeout=20) as answer:
            return answer.read().decode()  # the player page, after the redirect

    def first_event(self, path: str) -> bytes:
        with self.opener.open(self.base + path, timeout=20) as stream:
            return stream.readline() + stream.readline() + stream.readline()


def api(web_port: int, method: str, path: str, name: str = AWAY, token: str | None = None):
    basic = base64.b64encode(f"{name}:{PASSWORD}".encode()).decode()
    credentials = f"Bearer {token}" if token else f"Basic {basic}"
    request = urllib.request.Request(
        f"http://127.0.0.1:{web_port}/api/games/tae{path}",
        data=b"{}" if method == "POST" else None,
        method=method,
        headers={"Content-Type": "application/json", "Authorization": credentials},
    )
    with urllib.request.urlopen(request, timeout=20) as answer:
        return json.loads(answer.read())


def seat_of(url: str, name: str) -> str:
    done = tae_server("status", "tae", "--json", "--database", url)
    assert done.returncode == 0, done.stderr
    return next(p["seat"] for p in json_answer(done.stdout)["players"] if p["name"] == name)


def test_an_absent_player_reads_everything_and_only_back_takes_the_seat_back(tmp_path):
    url = f"sqlite:///{tmp_path / 'tae.db'}"
    config = tmp_path / "tae.toml"
    config.write_text("[game]\nabsent_after_missed_turns = 1\nseed = 5\n")
    web_port = free_port()
    server = ServerProcess(
        url, "--config", str(config), "--turn-length", "0", "--web", f"tcp:{web_port}:interface=127.0.0.1"
    )
    try:
        tp_port = server.start()
        players = {name: Player(name, tp_port, web_port) for name in NAMES}
        for player in players.values():
            player.ok("create-account")
        ann, cy = players["ann"], players[AWAY]
        # ann and bob finish the first turn, cy does not: the operator ends it, cy is absent
        players["ann"].ok("finish")
        players["bob"].ok("finish")
        ended = tae_server("end-turn", "tae", "--database", url)
        assert ended.returncode == 0, ended.stderr
        assert seat_of(url, AWAY) == "absent"
        told_before = ann.subjects()
        assert absence_notices.ABSENT in told_before and absence_notices.BACK not in told_before

        # every read
        status = cy.json("status")
        assert status["seat_note"] == ABSENT_NOTE
        assert "give an order or say you are back" in " ".join(cy.ok("status").split())
        for command in ("board", "fleets", "orders", "messages"):
            cy.ok(command)
            cy.json(command)
        seat = cy.json("vacation")
        assert (seat["seat"], seat["note"]) == ("absent", ABSENT_NOTE)
        connection = TPClient(tp_port)
        try:
            connection.connect()
            connection.login(AWAY, PASSWORD)
            (me,) = connection.items(tp.GetPlayer((0,)))
            assert me.race == ABSENT_NOTE
        finally:
            connection.close()
        browser = Browser(web_port)
        page = browser.log_in(AWAY)
        assert ABSENT_NOTE in page and "I am back" in page
        assert b"event: hello" in browser.first_event("/games/tae/play/events")
        assert b"event: hello" in browser.first_event("/games/tae/events")
        for path in ("/", "/games/tae", "/games/tae/history", "/games/tae/play"):
            browser.get(path)
        token = api(web_port, "POST", "/token")["token"]
        for path in ("/me", "/seat"):
            assert api(web_port, "GET", path, token=token)["note"] == ABSENT_NOTE
            assert api(web_port, "GET", path)["note"] == ABSENT_NOTE
        assert api(web_port, "GET", "/orders", token=token)["orders"] == []

        # the stand-in still plays the seat, and nobody was told she is back
        assert seat_of(url, AWAY) == "absent"
        assert ann.subjects() == told_before
        assert cy.json("status")["seat_note"] == ABSENT_NOTE

        # "I am back"
        back = cy.ok("back")
        assert "you play your own seat" in back
        assert seat_of(url, AWAY) == "playing"
        assert cy.json("status")["seat_note"] is None
        for player in players.values():
            assert player.subjects().count(absence_notices.BACK) == 1, player.name
        again = cy.run("back")
        assert again.exit_code == 1
        assert "the server refused: You play your own seat already" in again.output
        assert ann.subjects().count(absence_notices.BACK) == 1
    finally:
        server.kill()
