"""The player's web API client against a real local HTTP server (a stand-in web listener)."""

from __future__ import annotations

import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from clients.cli_settings import resolve_settings
from clients.player_api import PlayerApi, PlayerApiError
from tests.support.servers import free_port

SEEN: list[tuple[str, str, str | None, object]] = []


class FakeListener(BaseHTTPRequestHandler):
    games = ["alpha"]
    default: str | None = None

    def log_message(self, *args):  # quiet
        pass

    def _answer(self, status, document=None):
        body = b"" if document is None else json.dumps(document).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _handle(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        SEEN.append((self.command, self.path, self.headers.get("Authorization"), body))
        if self.path == "/api/games":
            entries = [{"name": name, "default": name == self.default} for name in self.games]
            return self._answer(200, {"games": entries})
        if self.path.endswith("/refused"):
            return self._answer(409, {"error": {"code": 1, "name": "X", "message": "Not on a Sunday."}})
        if self.path.endswith("/nothing"):
            return self._answer(204)
        if self.path.endswith("/html"):
            self.send_response(200)
            self.send_header("Content-Length", "5")
            self.end_headers()
            self.wfile.write(b"<html")
            return None
        return self._answer(200, {"ok": True, "path": self.path})

    do_GET = do_POST = do_PUT = do_DELETE = _handle


@pytest.fixture
def listener():
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeListener)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    SEEN.clear()
    FakeListener.games = ["alpha"]
    FakeListener.default = None
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_calls_carry_basic_auth_and_json(listener):
    api = PlayerApi(listener, "alice", "pw-123456", "my game", timeout=5)
    assert api.call("PUT", "notifications", {"email": "a@example.org"}) == {
        "ok": True,
        "path": "/api/games/my%20game/notifications",
    }
    method, path, authorization, body = SEEN[-1]
    assert method == "PUT" and body == {"email": "a@example.org"}
    assert authorization == "Basic " + base64.b64encode(b"alice:pw-123456").decode()


def test_without_a_game_the_only_game_is_used(listener):
    api = PlayerApi(listener, "alice", "pw", None, timeout=5)
    api.call("GET", "me")
    assert SEEN[-1][1] == "/api/games/alpha/me"


def test_several_games_mean_the_default_one(listener):
    FakeListener.games = ["alpha", "beta"]
    FakeListener.default = "beta"
    PlayerApi(listener, "alice", "pw", None, timeout=5).call("GET", "me")
    assert SEEN[-1][1] == "/api/games/beta/me"


def test_several_games_without_a_default_ask_for_one(listener):
    FakeListener.games = ["alpha", "beta"]
    with pytest.raises(PlayerApiError, match="runs 2 games and none is its default") as raised:
        PlayerApi(listener, "alice", "pw", None, timeout=5).call("GET", "me")
    assert raised.value.usage


def test_refusal_is_the_servers_text(listener):
    with pytest.raises(PlayerApiError, match=r"^Not on a Sunday\.$") as raised:
        PlayerApi(listener, "alice", "pw", "g", timeout=5).call("POST", "refused", {})
    assert raised.value.status == 409


def test_no_content_and_not_json(listener):
    api = PlayerApi(listener, "alice", "pw", "g", timeout=5)
    assert api.call("DELETE", "nothing") is None
    with pytest.raises(PlayerApiError, match="did not answer with JSON"):
        api.call("GET", "html")


def test_nothing_listening_is_one_line():
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(PlayerApiError, match="cannot reach the web listener at") as raised:
        PlayerApi(url, "alice", "pw", "g", timeout=5).call("GET", "me")
    assert raised.value.status == 0 and "\n" not in str(raised.value)


def test_web_address_comes_from_the_settings():
    assert resolve_settings({"host": "tae.example.org"}, {}).web_address == "http://tae.example.org:8080"
    settings = resolve_settings({"web_url": "https://web.example.org/"}, {"TAE_USER": "bob@g"})
    api = PlayerApi.from_settings(settings, "pw")
    assert api.base_url == "https://web.example.org" and api.game == "g" and api.username == "bob"
