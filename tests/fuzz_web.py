"""A bounded fuzz run of the web and admin listeners of a real `tae-server serve`, with witnesses.

    python -m tests.fuzz_web --seconds 600 --seed 7 [--workers 4] [--admin-workers 2] [--json]

starts a server (TP, web and admin on 127.0.0.1, SQLite in a temporary directory), makes a few
accounts, then for `--seconds` sends malformed, hostile and merely odd HTTP requests and admin
frames (`tests.fuzz_admin`) from other loopback addresses (127.0.0.2 and up, so that the
per-address limits of the fuzzers are not the witnesses'): random methods and paths,
percent-encoded junk, broken request lines and headers, cookies, CSRF fields and tokens with any
bytes, JSON nested deep or holding lone surrogates, forms with many fields, bodies larger than
their route takes (by length and chunked), slow and truncated requests, HEAD on event streams,
valid sessions and forms with bad fields; on the admin port, commands with bad arguments,
password guesses, right logins, malformed frames and huge lengths. Meanwhile two witnesses play
as usual: a logged-in TP client (GetTimeRemaining) and a web player (the public game and their
own view, with a token), each timed.

It fails (exit status 1) on any answer 5xx or admin internal error (or a Fail without a
text), any traceback or critical line in the server's log, an /api/ answer that is not JSON, a
witness answer slower than its bound or missing, or memory that grew by more than
`--memory-growth` MiB. The summary (one JSON object with `--json`) gives the requests sent per
listener, the answers by listener and status, the 5xx, the tracebacks, the server's memory
before and after, and the witnesses' p50/p99.

Listeners join through `TARGETS`: name -> (first address, attack), where an attack is a
function `(running, worker) -> Exchange` (`tests.fuzz_tally`) making one attack with the
worker's fuzzer for that listener and saying what came of it. Each listener has its own worker
threads (`--workers` for the web, `--admin-workers` for the admin listener, whose refused
password guesses wait seconds), each from its own loopback address.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import protocol as tp  # noqa: E402
from tests.fuzz_admin import AdminFuzzer, admin_users  # noqa: E402
from tests.fuzz_admin import prepare as prepare_admin  # noqa: E402
from tests.fuzz_tally import Exchange, Tally  # noqa: E402
from tests.integration.tp_client import TPClient  # noqa: E402
from tests.support.servers import free_port, wait_for_port  # noqa: E402

WITNESS_INTERVAL_S = 0.1
#: The share of the run after which the server's memory counts as warmed up.
WARM_UP_SHARE = 0.2
REQUEST_TIMEOUT_S = 12.0
PATHS = [
    "/",
    "/join",
    "/static/app.js",
    "/static/map.css",
    "/static/../../etc/passwd",
    "/games/tae",
    "/games/tae/history",
    "/games/tae/turns/0",
    "/games/tae/map.svg",
    "/games/tae/events",
    "/games/tae/login",
    "/games/tae/logout",
    "/games/tae/play",
    "/games/tae/play/events",
    "/games/tae/play/probe",
    "/games/tae/play/orders",
    "/games/tae/play/remove",
    "/games/tae/play/finish",
    "/games/tae/play/notify",
    "/games/tae/play/notify-remove",
    "/games/tae/play/notify-test",
    "/games/tae/notifications/confirm/abc.def",
    "/api/games",
    "/api/games/tae",
    "/api/games/tae/history",
    "/api/games/tae/turns/0",
    "/api/games/tae/turns/999999999",
    "/api/games/tae/me",
    "/api/games/tae/orders",
    "/api/games/tae/orders/probe",
    "/api/games/tae/orders/remove",
    "/api/games/tae/finish",
    "/api/games/tae/token",
    "/api/games/tae/accounts",
    "/api/games/tae/seat",
    "/api/games/tae/vacation",
    "/api/games/tae/resign",
    "/api/games/tae/password",
    "/api/games/tae/back",
    "/api/games/tae/notifications",
    "/api/games/tae/notifications/1",
    "/api/games/tae/notifications/test",
    "/api/nothing",
]
METHODS = ["GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH", "TRACE", "CONNECT", "get", "G\x00T"]
ODD_TEXT = [
    "",
    "a",
    "ann",
    "Ann",
    "ａｎｎ",
    "аnn",
    "A\u030ann",
    "\ud800",
    "\udfff\ud800",
    "x" * 5000,
    "\x00",
    "\n\r",
    "'; DROP TABLE accounts; --",
    "<script>alert(1)</script>",
    "../../etc/passwd",
    "%00",
    "é" * 100,
    "\u202e",
    "🚀" * 20,
    "1e309",
    "-1",
    "99999999999999999999999",
]
ODD_VALUES = [None, True, False, 0, -1, 2**63, 1.5e308, [], {}, [[[]]], "x", {"a": {"b": {}}}]


@dataclass
class Running:
    """The server under test: its process, ports, accounts and what the witnesses need."""

    process: subprocess.Popen
    tp_port: int
    web_port: int
    admin_port: int
    log_path: Path
    token: str = ""


def _json_body(rng: random.Random) -> bytes:
    choice = rng.randrange(10)
    if choice == 0:
        depth = rng.choice([20, 100, 1000, 30000])
        return b"[" * depth + b"]" * depth
    if choice == 1:
        return b'{"username": "\\ud800", "password": "\\udc00\\ud800", "email": "\\ud83d@x.org"}'
    if choice == 2:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
    if choice == 3:
        return json.dumps(
            {"webhook": rng.choice(WEBHOOKS), "format": rng.choice(["json", "slack", "x", 1])}
        ).encode()
    if choice == 4:
        return json.dumps(
            {"email": rng.choice(["a@b.c", "\u00e9@b\u00fccher.de", "x" * 300, "a@[127.0.0.1]"])}
        ).encode()
    if choice == 5:
        return json.dumps(
            {"channels": [{"kind": rng.choice(["webhook", "email", 3]), "target": rng.choice(WEBHOOKS)}]}
        ).encode()
    fields = {}
    for _ in range(rng.randrange(6)):
        key = rng.choice(
            [
                "username",
                "password",
                "email",
                "fleet",
                "target",
                "type",
                "slot",
                "days",
                "confirm",
                "new_password",
                rng.choice(ODD_TEXT),
            ]
        )
        fields[key] = rng.choice(ODD_VALUES + ODD_TEXT)
    try:
        return json.dumps(fields).encode("utf-8", "surrogatepass")
    except (TypeError, ValueError):
        return b"{}"


WEBHOOKS = [
    "http://127.0.0.1:6925/",
    "http://localhost/",
    "http://169.254.169.254/latest/meta-data/",
    "http://[::1]:80/",
    "http://[::ffff:10.0.0.1]/",
    "https://bücher.example/hook",
    "http://-x.example/",
    "https://example.org/\ud800",
    "gopher://x/",
    "http://user:pw@example.org/",
    "http://example.org:0/",
    "http://example.org:99999/",
    "https://discord.com/api/webhooks/1/2",
    "http://224.0.0.1/",
    "http://0.0.0.0/",
]


def _form_body(rng: random.Random, csrf: str) -> bytes:
    if rng.random() < 0.1:
        return b"&".join(b"f%d=%d" % (i, i) for i in range(rng.choice([150, 5000])))
    fields = []
    for _ in range(rng.randrange(8)):
        key = rng.choice(
            [
                "username",
                "password",
                "password2",
                "game",
                "fleet",
                "target",
                "system",
                "type",
                "slot",
                "kind",
                "format",
                "channel",
                "csrf",
            ]
        )
        value = rng.choice(ODD_TEXT + [csrf, "tae", "4, 2", "12"])
        fields.append((key, value))
    if rng.random() < 0.7:
        fields.append(("csrf", csrf))
    body = urllib.parse.urlencode(fields, errors="surrogatepass").encode()
    if rng.random() < 0.1:
        body += rng.choice([b"%ED%A0%80", b"%FF", b"\xff\xfe", b"&&&==", b"%"])
    return body


def _path(rng: random.Random) -> str:
    path = rng.choice(PATHS)
    roll = rng.random()
    if roll < 0.1:
        path = path.replace(
            "tae", rng.choice(["TAE", "%74ae", "t%C3%A4e", "%FF", "%ED%A0%80", "x" * 3000, "..", "%2F"])
        )
    elif roll < 0.15:
        path += "?" + rng.choice(["a=1", "a=%FF", "&&", "x" * 9000, "game=tae"])
    elif roll < 0.18:
        path = rng.choice(["*", "http://evil/", "//", "/%", "/\x7f", "/é"])
    return path


class WebFuzzer:
    """Makes one hostile request at a time (bytes), from what the server told it (cookies)."""

    def __init__(self, running: Running, rng: random.Random):
        self.running = running
        self.rng = rng
        self.cookies: dict[str, str] = {}
        self.csrf = ""
        self.half_close = False

    def learn(self, answer: bytes) -> None:
        head, _, body = answer.partition(b"\r\n\r\n")
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"set-cookie:"):
                name, _, rest = line.split(b":", 1)[1].strip().partition(b"=")
                self.cookies[name.decode("latin-1")] = rest.split(b";", 1)[0].decode("latin-1")
        found = body.find(b'name="csrf" value="')
        if found >= 0:
            start = found + len(b'name="csrf" value="')
            self.csrf = body[start : body.find(b'"', start)].decode("latin-1")

    def request(self) -> bytes:
        rng = self.rng
        method = rng.choice(METHODS[:5]) if rng.random() < 0.85 else rng.choice(METHODS)
        path = _path(rng)
        headers: list[tuple[str, str]] = [("Host", rng.choice(["127.0.0.1", "evil.example", "x" * 300, ""]))]
        if rng.random() < 0.6 and self.cookies:
            cookie = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
            if rng.random() < 0.2:
                cookie = rng.choice(
                    [cookie + "é", "tae_session=é.é.é", "tae_csrf=\xff", "tae_session=" + "A" * 5000]
                )
            headers.append(("Cookie", cookie))
        roll = rng.random()
        if roll < 0.2:
            headers.append(
                (
                    "Authorization",
                    "Basic "
                    + base64.b64encode(
                        rng.choice(
                            [
                                b"ann:ann-password",
                                b"ann:wrong",
                                b"\xff:\xfe",
                                b"nocolon",
                                "ａｎｎ:ann-password".encode(),
                                "аnn:x".encode(),
                            ]
                        )
                    ).decode(),
                )
            )
        elif roll < 0.3:
            headers.append(
                (
                    "Authorization",
                    "Bearer "
                    + rng.choice([self.running.token, "x.y", "é.é", self.running.token[:-3] + "AAA", ""]),
                )
            )
        elif roll < 0.33:
            headers.append(("Authorization", rng.choice(["Basic ###", "Basic", "Digest x", "Bearer"])))
        if rng.random() < 0.2:
            headers.append(("Accept", "application/json"))
        if rng.random() < 0.1:
            headers.append(("X-Forwarded-For", rng.choice(["1.2.3.4", "x", "::1, 10.0.0.1", "é"])))
            headers.append(("X-Forwarded-Proto", "https"))
        body = b""
        if method in ("POST", "PUT", "DELETE", "PATCH") or rng.random() < 0.05:
            if path.startswith("/api/"):
                body = _json_body(rng)
                headers.append(
                    (
                        "Content-Type",
                        rng.choice(
                            ["application/json"] * 6
                            + [
                                "text/plain",
                                "application/json; charset=latin-1",
                                "multipart/form-data; boundary=x",
                            ]
                        ),
                    )
                )
            else:
                body = _form_body(rng, self.csrf)
                headers.append(
                    (
                        "Content-Type",
                        rng.choice(
                            ["application/x-www-form-urlencoded"] * 6
                            + ["application/json", "multipart/form-data; boundary=--x"]
                        ),
                    )
                )
        self.half_close = False
        chunked = rng.random() < 0.08
        if rng.random() < 0.05:
            body += b" " * rng.choice([20_000, 70_000, 300_000])
        if chunked:
            headers.append(("Transfer-Encoding", "chunked"))
            pieces = [body[i : i + 4096] for i in range(0, len(body), 4096)]
            encoded = b"".join(b"%x\r\n" % len(p) + p + b"\r\n" for p in pieces) + b"0\r\n\r\n"
        else:
            length = len(body)
            if rng.random() < 0.03:
                length = rng.choice([10**9, len(body) + 5, -1])
                self.half_close = length == len(body) + 5  # the body never comes: not answered
            headers.append(("Content-Length", str(length)))
            encoded = body
        if rng.random() < 0.05:
            headers.append((rng.choice(["X" * 200, "Bad Header", "\x01"]), "v"))
        head = (
            f"{method} {path} HTTP/1.1\r\n"
            + "".join(f"{k}: {v}\r\n" for k, v in headers)
            + "Connection: close\r\n\r\n"
        )
        data = head.encode("utf-8", "surrogatepass") + encoded
        if rng.random() < 0.03:
            data = data[: rng.randrange(1, max(2, len(data)))]  # cut short
            self.half_close = rng.random() < 0.8  # else: left hanging, until the deadline
        if rng.random() < 0.02:
            data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300)))
            self.half_close = True
        return data


@dataclass
class Worker:
    """One fuzzing thread: its random numbers, its address and its fuzzer for each listener."""

    rng: random.Random
    host: str
    web: WebFuzzer
    admin: AdminFuzzer


def web_attack(running: Running, worker: Worker) -> Exchange:
    """One HTTP request; judged by its status (5xx, a traceback, an /api/ refusal not JSON)."""
    fuzzer = worker.web
    exchange = Exchange("web", requests=1)
    data = fuzzer.request()
    first_line = data.split(b"\r\n", 1)[0][:120].decode("latin-1")
    try:
        answer = _send(worker.host, running.web_port, data, half_close=fuzzer.half_close)
    except OSError:
        answer = b""
    status_line = answer.split(b"\r\n", 1)[0]
    parts = status_line.split(b" ")
    status = int(parts[1]) if len(parts) >= 2 and parts[1].isdigit() else 0
    head, _, body = answer.partition(b"\r\n\r\n")
    exchange.labels.append(str(status))
    if status >= 500 and status != 503:
        exchange.server_errors.append(f"{status} for {first_line!r}: {body[:200]!r}")
    elif status == 503 and b"database" not in body and b"busy" not in body:
        exchange.server_errors.append(f"503 for {first_line!r}: {body[:200]!r}")
    if b"Traceback" in answer:
        exchange.server_errors.append(f"a traceback in the answer to {first_line!r}")
    method, _, rest = first_line.partition(" ")
    path = rest.split(" ")[0]
    # (a request cut short inside its request line names no path to the server: any page will do)
    valid = method.isalpha() and method.isupper() and first_line.endswith(" HTTP/1.1") and b"\r\n" in data
    if status >= 400 and valid and path.startswith("/api/") and b"application/json" not in head.lower():
        exchange.not_json.append(f"{status} for {first_line!r}")
    if not status and not fuzzer.half_close:
        exchange.unanswered = first_line
    if status and worker.rng.random() < 0.1:
        fuzzer.learn(answer)
    return exchange


def admin_attack(running: Running, worker: Worker) -> Exchange:
    return worker.admin.attack()


#: Listeners the fuzzer attacks: name -> (the last byte of its first worker's address, one attack).
TARGETS: dict[str, tuple[int, Callable[[Running, Worker], Exchange]]] = {
    "web": (2, web_attack),
    "admin": (120, admin_attack),
}


def _send(host: str, port: int, data: bytes, timeout: float = REQUEST_TIMEOUT_S, half_close=False) -> bytes:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.bind((host, 0))
        sock.connect(("127.0.0.1", port))
        try:
            sock.sendall(data)
            if half_close:
                sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        chunks = []
        total = 0
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                chunk = sock.recv(65536)
            except (TimeoutError, OSError):
                break
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > 4 * 2**20 or b"text/event-stream" in chunks[0][:2000]:
                break
        return b"".join(chunks)
    finally:
        sock.close()


def fuzz_worker(running: Running, seed: int, target: str, index: int, stop: float, tally: Tally) -> None:
    first, attack = TARGETS[target]
    rng = random.Random(f"{seed} {target} {index}")
    host = f"127.0.0.{first + index % 100}"
    worker = Worker(rng, host, WebFuzzer(running, rng), AdminFuzzer(running.admin_port, host, rng))
    try:
        worker.web.learn(
            _send(host, running.web_port, b"GET /games/tae HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        )
    except OSError:
        pass
    try:
        while time.monotonic() < stop:
            try:
                tally.add(attack(running, worker))
            except Exception as error:  # the fuzzer's own bug: said, and the thread goes on
                print(f"fuzz_web: {target} worker {index}: {error!r}", file=sys.stderr)
                time.sleep(0.1)
    finally:
        worker.admin.stop()


def fuzz_process(running: Running, seed: int, workers: dict[str, int], stop: float, results) -> None:
    """The fuzzing threads, in a process of their own at a lower priority than the server and
    the witnesses (on a small machine the witnesses measure the server, not the fuzzer)."""
    try:
        os.nice(10)
    except OSError:
        pass
    tally = Tally()
    threads = [
        threading.Thread(target=fuzz_worker, args=(running, seed, target, i, stop, tally), daemon=True)
        for target, count in workers.items()
        for i in range(count)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=max(1.0, stop - time.monotonic()) + 30)
    tally.lock = None  # type: ignore[assignment]  # not picklable
    results.put(tally)


# -- witnesses ------------------------------------------------------------------------------------


@dataclass
class Witness:
    name: str
    times: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def summary(self) -> dict:
        if not self.times:
            return {"answers": 0, "failures": self.failures[:5]}
        ordered = sorted(self.times)
        p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
        return {
            "answers": len(ordered),
            "p50_ms": round(statistics.median(ordered) * 1000, 2),
            "p99_ms": round(p99 * 1000, 2),
            "max_ms": round(ordered[-1] * 1000, 2),
            "failures": self.failures[:5],
        }


def tp_witness(running: Running, stop: float, witness: Witness) -> None:
    client = TPClient(running.tp_port, timeout=5.0)
    try:
        client.connect()
        client.login("wit", "wit-password")
        while time.monotonic() < stop:
            started = time.perf_counter()
            try:
                answer = client.one(tp.GetTimeRemaining())
            except ConnectionError as error:
                witness.failures.append(str(error))
                return
            witness.times.append(time.perf_counter() - started)
            if not isinstance(answer, tp.TimeRemaining):
                witness.failures.append(repr(answer))
            time.sleep(WITNESS_INTERVAL_S)
    finally:
        client.close()


def web_witness(running: Running, stop: float, witness: Witness) -> None:
    import http.client

    headers = {"Authorization": f"Bearer {running.token}"}
    paths = ["/api/games/tae", "/api/games/tae/me", "/games/tae"]
    connection = http.client.HTTPConnection("127.0.0.1", running.web_port, timeout=5)
    turn = 0
    while time.monotonic() < stop:
        path = paths[turn % len(paths)]
        turn += 1
        started = time.perf_counter()
        try:
            connection.request("GET", path, headers=headers)
            answer = connection.getresponse()
            answer.read()
        except (OSError, http.client.HTTPException) as error:
            witness.failures.append(f"{path}: {error}")
            connection.close()
            connection = http.client.HTTPConnection("127.0.0.1", running.web_port, timeout=5)
            time.sleep(WITNESS_INTERVAL_S)
            continue
        witness.times.append(time.perf_counter() - started)
        if answer.status != 200:
            witness.failures.append(f"{path}: {answer.status}")
        time.sleep(WITNESS_INTERVAL_S)
    connection.close()


# -- the server -----------------------------------------------------------------------------------


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def start(workdir: Path) -> Running:
    from server.game.passwords import hash_password

    tp_port, web_port, admin_port = free_port(), free_port(), free_port()
    (workdir / "tae.toml").write_text(
        f'[admin]\nlisten = "tcp:{admin_port}:interface=127.0.0.1"\n\n[admin.users]\n'
        + admin_users(hash_password)
    )
    log_path = workdir / "server.log"
    log = log_path.open("wb")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "server.cli",
            "serve",
            "--config",
            str(workdir / "tae.toml"),
            "--listen",
            f"tcp:{tp_port}:interface=127.0.0.1",
            "--web",
            f"tcp:{web_port}:interface=127.0.0.1",
            "--turn-length",
            "0",
            "--database",
            f"sqlite:///{workdir / 'tae.db'}",
        ],
        cwd=workdir,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    wait_for_port(web_port, process, timeout=60)
    wait_for_port(tp_port, process, timeout=60)
    wait_for_port(admin_port, process, timeout=60)
    running = Running(process, tp_port, web_port, admin_port, log_path)
    for name in ("wit", "ann", "bob"):
        _api(running, "POST", "/api/games/tae/accounts", {"username": name, "password": f"{name}-password"})
    answer = _api(running, "POST", "/api/games/tae/token", {}, auth=("wit", "wit-password"))
    running.token = answer["token"]
    prepare_admin(admin_port)
    return running


def _api(running: Running, method: str, path: str, document, auth=None):
    import urllib.request

    headers = {"Content-Type": "application/json"}
    if auth is not None:
        headers["Authorization"] = "Basic " + base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{running.web_port}{path}", json.dumps(document).encode(), headers, method=method
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.load(answer)


def bad_log_lines(path: Path) -> list[str]:
    lines = path.read_text(errors="replace").splitlines()
    return [
        line
        for line in lines
        if "Traceback" in line or "#critical]" in line or "Unhandled Error" in line or "#error]" in line
    ]


def run(
    seconds: float, seed: int, workers: int = 4, memory_growth_mib: float = 16.0, admin_workers: int = 2
) -> dict:
    """Fuzz for `seconds`; the summary (`ok`: nothing was wrong)."""
    with tempfile.TemporaryDirectory(prefix="fuzz-web-") as workdir:
        running = start(Path(workdir))
        try:
            time.sleep(1.0)
            rss_before = _rss_kib(running.process.pid)
            stop = time.monotonic() + seconds
            witnesses = [Witness("tp"), Witness("web")]
            threads = [
                threading.Thread(target=tp_witness, args=(running, stop, witnesses[0]), daemon=True),
                threading.Thread(target=web_witness, args=(running, stop, witnesses[1]), daemon=True),
            ]
            import multiprocessing

            context = multiprocessing.get_context("fork")
            results = context.Queue()
            threads_of = {"web": workers, "admin": admin_workers}
            fuzzing = context.Process(target=fuzz_process, args=(running, seed, threads_of, stop, results))
            fuzzing.start()
            for thread in threads:
                thread.start()
            # the server's memory every few seconds: the growth counts from after a warm-up
            # (templates, Unicode tables and caches filled), so that flat means flat
            samples: list[tuple[float, int]] = []
            begun = time.monotonic()
            while time.monotonic() < stop:
                samples.append((time.monotonic() - begun, _rss_kib(running.process.pid)))
                time.sleep(min(5.0, max(0.1, seconds / 20), max(0.0, stop - time.monotonic())))
            tally = results.get(timeout=120)
            fuzzing.join(timeout=30)
            for thread in threads:
                thread.join(timeout=seconds + 60)
            time.sleep(1.0)
            rss_after = _rss_kib(running.process.pid)
            alive = running.process.poll() is None
        finally:
            running.process.terminate()
            try:
                running.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                running.process.kill()
                running.process.wait()
        bad_lines = bad_log_lines(running.log_path)
    warm = next((kib for at, kib in samples if at >= seconds * WARM_UP_SHARE), rss_before)
    summary = {
        "seconds": seconds,
        "seed": seed,
        "requests": sum(tally.requests.values()),
        "requests_by_listener": dict(sorted(tally.requests.items())),
        "statuses": dict(sorted(tally.statuses.items())),
        "server_errors": len(tally.server_errors),
        "server_error_examples": tally.server_errors[:10],
        "unanswered_examples": [repr(k) for k, _ in tally.unanswered.most_common(8)],
        "api_answers_not_json": len(tally.not_json),
        "not_json_examples": tally.not_json[:5],
        "log_tracebacks_and_errors": len(bad_lines),
        "log_examples": bad_lines[:10],
        "rss_before_mib": round(rss_before / 1024, 1),
        "rss_after_warmup_mib": round(warm / 1024, 1),
        "rss_after_mib": round(rss_after / 1024, 1),
        "rss_samples_mib": [round(kib / 1024, 1) for _, kib in samples[:: max(1, len(samples) // 12)]],
        "server_alive": alive,
        "witnesses": {w.name: w.summary() for w in witnesses},
    }
    witness_ok = all(
        not w.failures and w.times and sorted(w.times)[int(len(w.times) * 0.99) - 1] <= 0.05
        for w in witnesses
    )
    summary["witness_p99_ok"] = witness_ok
    summary["ok"] = (
        alive
        and not tally.server_errors
        and not tally.not_json
        and not bad_lines
        and (rss_after - warm) / 1024 <= memory_growth_mib
        and all(not w.failures and w.times for w in witnesses)
    )
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=4, help="threads fuzzing the web listener")
    parser.add_argument("--admin-workers", type=int, default=2, help="threads fuzzing the admin listener")
    parser.add_argument(
        "--memory-growth", type=float, default=16.0, help="MiB the server may grow by after its warm-up"
    )
    parser.add_argument("--json", action="store_true", help="the summary as one JSON object")
    args = parser.parse_args()
    summary = run(args.seconds, args.seed, args.workers, args.memory_growth, args.admin_workers)
    if args.json:
        print(json.dumps(summary))
    else:
        print(json.dumps(summary, indent=2, ensure_ascii=False))
    return 0 if summary["ok"] and summary["witness_p99_ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
