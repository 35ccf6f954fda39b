"""Requests to a web Site in memory (treq's StubTreq), with a cookie jar like a browser's."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from urllib.parse import urlencode

from treq.testing import StubTreq
from twisted.internet.task import Clock

from server.config.limits import Limits
from server.web import make_site
from tests.support.openapi_check import check_api_answer

from .fake_game import FakeArchive, FakeDirectory, FakeGame


@dataclass
class Answer:
    status: int
    headers: dict[str, list[str]]
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode()

    def json(self):
        return json.loads(self.body)

    def header(self, name: str) -> str | None:
        values = self.headers.get(name.lower())
        return values[0] if values else None


class Client:
    """One browser (or one API caller): keeps the cookies the site sets."""

    def __init__(self, site):
        self.site = site
        self.stub = StubTreq(site.resource)
        self.cookies: dict[str, str] = {}

    def request(self, method: str, path: str, body: bytes = b"", headers: dict | None = None) -> Answer:
        all_headers = {k: [v] for k, v in (headers or {}).items()}
        if self.cookies:
            all_headers["Cookie"] = ["; ".join(f"{k}={v}" for k, v in self.cookies.items())]
        d = self.stub.request(
            method,
            "http://127.0.0.1:8080" + path,
            data=body or None,
            headers=all_headers,
            allow_redirects=False,
        )
        self.stub.flush()
        response = _result(d)
        content = self.stub.content(response)
        self.stub.flush()
        raw = dict(response.headers.getAllRawHeaders())
        headers_out = {k.decode().lower(): [x.decode() for x in v] for k, v in raw.items()}
        for cookie in headers_out.get("set-cookie", []):
            name, _, rest = cookie.partition("=")
            value = rest.split(";")[0]
            if "max-age=0" in cookie.lower() or not value:
                self.cookies.pop(name, None)
            else:
                self.cookies[name] = value
        answer = Answer(response.code, headers_out, _result(content))
        # every answer of the JSON API is one the OpenAPI document describes
        check_api_answer(method, path, answer.status, answer.header("content-type"), answer.body)
        return answer

    def get(self, path: str, headers: dict | None = None) -> Answer:
        return self.request("GET", path, headers=headers)

    def post_form(self, path: str, fields: dict, json_answer: bool = False) -> Answer:
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        if json_answer:
            headers["Accept"] = "application/json"
        return self.request("POST", path, urlencode(fields).encode(), headers)

    def post_json(self, path: str, document: dict, headers: dict | None = None) -> Answer:
        all_headers = {"Content-Type": "application/json", **(headers or {})}
        return self.request("POST", path, json.dumps(document).encode(), all_headers)

    def csrf(self, path: str) -> str:
        """The CSRF token of the first form on a page."""
        found = re.search(r'name="csrf" value="([^"]+)"', self.get(path).text)
        assert found, f"no form on {path}"
        return found.group(1)


def _result(d):
    results = []
    d.addBoth(results.append)
    assert results, "the request did not finish"
    if hasattr(results[0], "raiseException"):
        results[0].raiseException()
    return results[0]


def world(players=("alice", "bob"), name="Nebula", **game_options):
    """A clock, a game with `players` (password = name + "-pw"), its archive, directory and site."""
    clock = Clock()
    clock.advance(1_000_000)
    archive = FakeArchive()
    game = FakeGame(name, clock, archive, **game_options)
    for player in players:
        game.create_account(player, player + "-pw")
    directory = FakeDirectory(game)
    site = make_site(directory, archive, clock, secret=b"test-secret", limits=WEB_TEST_LIMITS)
    return clock, game, site


#: The server's limits, with failed logins answered at once (the brake's delays are tested in
#: test_logins.py, with the clock moved on).
WEB_TEST_LIMITS = Limits(login_failure_delay=0, login_failure_delay_max=0)


def log_in(site, game_name: str, username: str, password: str) -> Client:
    client = Client(site)
    token = client.csrf(f"/games/{game_name}")
    answer = client.post_form(
        f"/games/{game_name}/login", {"csrf": token, "username": username, "password": password}
    )
    assert answer.status == 303, answer.text
    return client
