"""The web listener's limits, black-box over real sockets against a `tae-server serve` process.

Every attack comes from its own loopback address (127.0.0.N: Linux routes all of 127/8 to the
loopback interface), and after each a TP player and a web player on 127.0.0.1 are still
answered within their usual time (`witnesses_answer`).
"""

from __future__ import annotations

import base64
import json
import socket
import time
import urllib.request
from pathlib import Path

import pytest

import protocol as tp
from tests.support.servers import free_port, serve_process, wait_for_port

from .tp_client import TPClient

#: A witness's answer must come within this (they take milliseconds; the bound is for a busy CI).
USUAL_S = 2.0

LIMITS = [
    "web_connections_per_address=12",
    "web_header_seconds=2",
    "web_body_seconds=2",
    "web_idle_seconds=3",
    "web_requests_per_second=5",
    "web_request_burst=30",
    "accounts_per_address=3",
    "login_failure_delay=0.1",
    "login_failure_delay_max=1",
]


class Server:
    def __init__(self, tp_port: int, web_port: int, process, workdir: Path):
        self.tp_port = tp_port
        self.web_port = web_port
        self.process = process
        self.workdir = workdir
        self.tp = TPClient(tp_port, timeout=USUAL_S * 3)
        self.tp.connect()
        self.tp.login("wit", "wit-password")

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0


def api(port: int, method: str, path: str, document=None, user=None, headers=None):
    all_headers = {"Content-Type": "application/json", **(headers or {})}
    if user is not None:
        all_headers["Authorization"] = (
            "Basic " + base64.b64encode(f"{user}:{user}-password".encode()).decode()
        )
    data = None if document is None else json.dumps(document).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data, all_headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("web-limits")
    (workdir / "tae.toml").write_text('trusted_proxies = ["127.0.0.9"]\n')
    tp_port, web_port = free_port(), free_port()
    args = [
        "--config",
        str(workdir / "tae.toml"),
        "--listen",
        f"tcp:{tp_port}:interface=127.0.0.1",
        "--web",
        f"tcp:{web_port}:interface=0.0.0.0",
        "--turn-length",
        "0",
    ]
    for limit in LIMITS:
        args += ["--limit", limit]
    with serve_process(workdir, args, tp_port) as process:
        wait_for_port(web_port, process)
        for name in ("wit", "ann", "bob"):
            status, _, body = api(
                web_port,
                "POST",
                "/api/games/tae/accounts",
                {"username": name, "password": f"{name}-password"},
            )
            assert status == 201, body
        server = Server(tp_port, web_port, process, workdir)
        yield server
        server.tp.close()


def witnesses_answer(server: Server) -> None:
    """A TP player and a web player are answered, each within its usual time."""
    started = time.monotonic()
    assert isinstance(server.tp.one(tp.GetTimeRemaining()), tp.TimeRemaining)
    assert time.monotonic() - started < USUAL_S
    started = time.monotonic()
    status, _, _ = api(server.web_port, "GET", "/api/games/tae/me", user="wit")
    assert status == 200 and time.monotonic() - started < USUAL_S


def connect(server: Server, source: str) -> socket.socket:
    sock = socket.socket()
    sock.settimeout(10)
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", server.web_port))
    return sock


def read_all(sock: socket.socket, limit_s: float = 10) -> bytes:
    chunks = []
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except (TimeoutError, ConnectionResetError):
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def status_of(answer: bytes) -> int:
    parts = answer.split(b"\r\n", 1)[0].split(b" ")
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0


def test_a_huge_form_is_refused_from_its_headers_before_a_byte_of_it_is_read(server):
    before = server.rss_kib()
    sock = connect(server, "127.0.0.2")
    sock.sendall(
        b"POST /join HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
        b"Content-Length: 16777216\r\n\r\n"
    )
    started = time.monotonic()
    answer = read_all(sock)
    sock.close()
    assert status_of(answer) == 413 and time.monotonic() - started < USUAL_S
    assert b"too large" in answer and b"text/html" in answer
    assert server.rss_kib() - before < 8 * 1024
    witnesses_answer(server)


def test_a_large_json_body_is_refused_and_the_api_says_so_in_json(server):
    sock = connect(server, "127.0.0.2")
    sock.sendall(
        b"POST /api/games/tae/accounts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: 209715200\r\n\r\n" + b" " * 100_000
    )
    answer = read_all(sock)
    sock.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    assert status_of(answer) == 413 and b"application/json" in head.lower()
    assert json.loads(body)["error"]["message"].startswith("The request body is too large")
    witnesses_answer(server)


def test_a_chunked_body_is_cut_off_at_the_limit(server):
    sock = connect(server, "127.0.0.2")
    sock.sendall(
        b"POST /api/games/tae/accounts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
    )
    sent = 0
    try:
        for _ in range(40):  # 40 × 8 KiB: past the 64 KiB of the route
            sock.sendall(b"2000\r\n" + b" " * 8192 + b"\r\n")
            sent += 8192
    except OSError:
        pass
    answer = read_all(sock)
    sock.close()
    assert status_of(answer) == 413
    witnesses_answer(server)


def test_slowloris_headers_meet_a_deadline_that_bytes_do_not_extend(server):
    sock = connect(server, "127.0.0.3")
    started = time.monotonic()
    request = b"GET /api/games HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100
    answer = b""
    for byte in request:
        try:
            sock.sendall(bytes([byte]))
        except OSError:
            break
        sock.settimeout(0.25)
        try:
            answer = sock.recv(65536)
        except TimeoutError:
            continue
        break
    sock.settimeout(10)
    answer += read_all(sock)
    sock.close()
    assert status_of(answer) == 408 and b"too long" in answer
    assert 1.5 < time.monotonic() - started < 2 + USUAL_S  # web_header_seconds = 2, a byte each 0.25 s
    witnesses_answer(server)


def test_an_idle_connection_is_closed(server):
    sock = connect(server, "127.0.0.3")
    started = time.monotonic()
    assert read_all(sock, limit_s=10) == b""  # closed, nothing said: no request was made
    assert 2.5 < time.monotonic() - started < 3 + USUAL_S
    sock.close()


def test_connections_per_address_are_limited_and_another_address_is_not_touched(server):
    held = [connect(server, "127.0.0.4") for _ in range(12)]
    try:
        extra = connect(server, "127.0.0.4")
        extra.sendall(b"GET /api/games HTTP/1.1\r\nHost: x\r\n\r\n")
        answer = read_all(extra)
        extra.close()
        assert status_of(answer) == 429 and b"Too many connections from your address" in answer
        assert b"application/json" in answer.lower()
        other = connect(server, "127.0.0.5")
        other.sendall(b"GET /api/games HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert status_of(read_all(other)) == 200
        other.close()
        witnesses_answer(server)
    finally:
        for sock in held:
            sock.close()


def test_requests_beyond_an_addresses_rate_wait_their_turn(server):
    statuses = []
    retry_after = None
    for _ in range(45):  # burst 30, 5 a second
        sock = connect(server, "127.0.0.6")
        sock.sendall(b"GET /api/games HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        answer = read_all(sock)
        sock.close()
        statuses.append(status_of(answer))
        if statuses[-1] == 429:
            retry_after = [line for line in answer.split(b"\r\n") if line.lower().startswith(b"retry-after")]
    assert statuses[:25].count(200) == 25 and statuses.count(429) >= 5 and retry_after
    witnesses_answer(server)


def test_no_version_in_server_and_hsts_when_a_trusted_proxy_says_https(server):
    status, headers, _ = api(server.web_port, "GET", "/")
    lowered = {k.lower(): v for k, v in headers.items()}
    assert status == 200 and "server" not in lowered and "strict-transport-security" not in lowered
    sock = connect(server, "127.0.0.9")  # the trusted proxy
    sock.sendall(
        b"GET / HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 203.0.113.7\r\nX-Forwarded-Proto: https\r\n"
        b"Connection: close\r\n\r\n"
    )
    answer = read_all(sock).lower()
    sock.close()
    assert b"strict-transport-security: max-age=" in answer and b"; secure" in answer
    spoofed = connect(server, "127.0.0.8")  # not trusted: its headers are not believed
    spoofed.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Forwarded-Proto: https\r\nConnection: close\r\n\r\n")
    answer = read_all(spoofed).lower()
    spoofed.close()
    assert b"strict-transport-security" not in answer and b"; secure" not in answer


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def via_proxy(server: Server, client: str, path: str, authorization: str) -> int:
    sock = connect(server, "127.0.0.9")
    sock.sendall(
        f"GET {path} HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: {client}\r\nAuthorization: {authorization}\r\n"
        "Connection: close\r\n\r\n".encode()
    )
    answer = read_all(sock)
    sock.close()
    return status_of(answer)


def test_the_brake_slows_the_guesser_not_the_players_behind_the_same_proxy(server):
    # bob logs in from his usual place first
    assert via_proxy(server, "198.51.100.2", "/api/games/tae/me", basic("bob", "bob-password")) == 200
    # one account guessed from 20 addresses behind the proxy: stopped after 20 guesses in all
    for n in range(20):
        assert via_proxy(server, f"203.0.113.{n + 10}", "/api/games/tae/me", basic("bob", "guess")) == 401
    assert via_proxy(server, "203.0.113.99", "/api/games/tae/me", basic("bob", "guess")) == 429
    # (the right password, verified lately, is remembered: it is no guess, wherever it comes from)
    assert via_proxy(server, "203.0.113.99", "/api/games/tae/me", basic("bob", "bob-password")) == 200
    # bob, from where he played before, is let in; ann, behind the same proxy, is not touched
    assert via_proxy(server, "198.51.100.2", "/api/games/tae/me", basic("bob", "bob-password")) == 200
    assert via_proxy(server, "203.0.113.10", "/api/games/tae/me", basic("ann", "ann-password")) == 200
    witnesses_answer(server)


def test_account_creation_is_limited_per_address(server):
    statuses = []
    for n in range(5):
        sock = connect(server, "127.0.0.7")
        body = json.dumps({"username": f"new{n}", "password": "new-password"}).encode()
        sock.sendall(
            b"POST /api/games/tae/accounts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Connection: close\r\nContent-Length: %d\r\n\r\n" % len(body) + body
        )
        answer = read_all(sock)
        sock.close()
        statuses.append(status_of(answer))
    assert statuses == [201, 201, 201, 429, 429]  # accounts_per_address = 3
    witnesses_answer(server)
