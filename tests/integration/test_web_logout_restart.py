"""A logout is final across a restart (the ended session is stored), while a session that did
not end survives it (the cookie is sealed with the configured secret). A real `tae-server
serve` process, restarted on the same SQLite file and secret."""

from __future__ import annotations

import http.cookiejar
import json
import re
import urllib.error
import urllib.parse
import urllib.request

from tests.support.servers import free_port, serve_process, wait_for_port


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


class Browser:
    def __init__(self, port: int, jar: http.cookiejar.CookieJar | None = None):
        self.base = f"http://127.0.0.1:{port}"
        self.jar = jar if jar is not None else http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar), NoRedirect)

    def get(self, path: str) -> tuple[int, str]:
        try:
            with self.opener.open(self.base + path, timeout=10) as answer:
                return answer.status, answer.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    def post(self, path: str, fields: dict) -> int:
        data = urllib.parse.urlencode(fields).encode()
        try:
            with self.opener.open(urllib.request.Request(self.base + path, data), timeout=10) as answer:
                return answer.status
        except urllib.error.HTTPError as error:
            return error.code

    def csrf(self, path: str) -> str:
        found = re.search(r'name="csrf" value="([^"]+)"', self.get(path)[1])
        assert found
        return found.group(1)

    def log_in(self, name: str, password: str) -> None:
        token = self.csrf("/games/tae")
        assert self.post("/games/tae/login", {"csrf": token, "username": name, "password": password}) == 303
        assert self.get("/games/tae/play")[0] == 200

    def copy(self) -> Browser:
        jar = http.cookiejar.CookieJar()
        for cookie in self.jar:
            jar.set_cookie(cookie)
        return Browser(int(self.base.rsplit(":", 1)[1]), jar)


def test_a_logout_is_final_across_a_restart(tmp_path):
    tp_port, web_port = free_port(), free_port()
    (tmp_path / "tae.toml").write_text('web_secret_file = "web-secret"\n')
    args = [
        "--config",
        str(tmp_path / "tae.toml"),
        "--listen",
        f"tcp:{tp_port}:interface=127.0.0.1",
        "--web",
        f"tcp:{web_port}:interface=127.0.0.1",
        "--turn-length",
        "0",
    ]
    with serve_process(tmp_path, args, tp_port) as process:
        wait_for_port(web_port, process)
        for name in ("ann", "bob"):
            request = urllib.request.Request(
                f"http://127.0.0.1:{web_port}/api/games/tae/accounts",
                json.dumps({"username": name, "password": f"{name}-password"}).encode(),
                {"Content-Type": "application/json"},
            )
            assert urllib.request.urlopen(request, timeout=10).status == 201
        ann, bob = Browser(web_port), Browser(web_port)
        ann.log_in("ann", "ann-password")
        bob.log_in("bob", "bob-password")
        stolen = ann.copy()  # a copy of ann's cookie, kept by someone else
        assert ann.post("/games/tae/logout", {"csrf": ann.csrf("/games/tae/play")}) == 303
        assert stolen.get("/games/tae/play")[0] == 303  # refused at once
    with serve_process(tmp_path, args, tp_port) as process:
        wait_for_port(web_port, process)
        assert stolen.get("/games/tae/play")[0] == 303  # and after the restart
        assert bob.get("/games/tae/play")[0] == 200  # a session that did not end survives it
