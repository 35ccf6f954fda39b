"""The web listener across cluster nodes: what a relayed request costs, and the web's failover.

    python -m tests.benchmarks cluster_web

Needs PostgreSQL (TAE_TEST_DATABASE_URL, or the local default of bench_cluster); the run uses
a schema of its own, dropped afterwards. Two or three real `tae-server serve --node` processes
with web listeners on 127.0.0.1.

* Latency of `GET /api/games/NAME` (the public game document) and of `POST .../orders/probe`
  (a write path, authenticated with a Bearer token so that password hashing is not measured),
  sent to the node that runs the game and to one that relays it: median and p99 over
  `REQUESTS` sequential requests on one keep-alive connection, and requests per second with
  `THREADS` clients at once.
* Failover: three nodes; the owner of a game is killed (SIGKILL); the time until the same URL
  answers 200 on a surviving node (which first waits for the game's new owner).

The 2-core machine runs the nodes, PostgreSQL and the clients: the figures show the relay's
cost relative to a direct request, not a deployment's capacity.
"""

from __future__ import annotations

import http.client
import json
import os
import statistics
import tempfile
import threading
import time
from pathlib import Path

from sqlalchemy.engine import make_url

from tests.benchmarks.bench_cluster import LOCAL_POSTGRES, _drop, _schema_url
from tests.integration.test_cluster import create_games, owner_of, placed, wait_until
from tests.integration.test_cluster_web import WebNode, start_nodes

REQUESTS = 400
THREADS = 8
CONCURRENT_S = 3.0


class Connection:
    """One keep-alive HTTP connection to a node's web listener."""

    def __init__(self, node: WebNode, token: str | None = None):
        self.conn = http.client.HTTPConnection("127.0.0.1", node.web_port, timeout=30)
        self.token = token

    def call(self, method: str, path: str, document=None) -> int:
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        body = None if document is None else json.dumps(document)
        self.conn.request(method, path, body=body, headers=headers)
        answer = self.conn.getresponse()
        answer.read()
        return answer.status

    def close(self) -> None:
        self.conn.close()


def _latency(node: WebNode, method: str, path: str, document, token: str | None) -> tuple[float, float]:
    conn = Connection(node, token)
    times = []
    try:
        for _ in range(REQUESTS):
            started = time.perf_counter()
            status = conn.call(method, path, document)
            times.append(time.perf_counter() - started)
            assert status == 200, status
    finally:
        conn.close()
    times.sort()
    return statistics.median(times) * 1000, times[int(len(times) * 0.99) - 1] * 1000


def _rate(node: WebNode, method: str, path: str, document, token: str | None) -> float:
    done = [0] * THREADS
    stop = time.monotonic() + CONCURRENT_S

    def client(k: int) -> None:
        conn = Connection(node, token)
        try:
            while time.monotonic() < stop:
                conn.call(method, path, document)
                done[k] += 1
        finally:
            conn.close()

    threads = [threading.Thread(target=client, args=(k,)) for k in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(done) / CONCURRENT_S


def relay_cost(url: str, cwd: Path) -> None:
    nodes = start_nodes(url, cwd, ("a", "b"))
    try:
        a, b = nodes
        create_games(url, ["w1", "w2"])
        wait_until(lambda: placed(url), 30, "every game has a node")
        game = next(g for g in ("tae", "w1", "w2") if owner_of(url, g) == "b")
        status, _ = b.call("POST", f"/api/games/{game}/accounts", {"username": "ann", "password": "ann-pw"})
        assert status == 201
        token = b.call("POST", f"/api/games/{game}/token", {}, user="ann")[1]["token"]
        _, me = b.call("GET", f"/api/games/{game}/me", user="ann")
        _, public = b.call("GET", f"/api/games/{game}")
        free = [s["id"] for s in public["systems"] if s["terrain"] == "habitable" and s["colony"] is None]
        fleet = next(f["fleet"] for f in me["hand"] if f["kind"] != "mining")
        probe = {"fleet": fleet, "target": free[0]}
        cases = [
            ("GET /api/games/NAME", "GET", f"/api/games/{game}", None, None),
            ("POST /api/games/NAME/orders/probe", "POST", f"/api/games/{game}/orders/probe", probe, token),
        ]
        for label, method, path, document, auth in cases:
            for where, node in (("owner", b), ("relayed", a)):
                median, p99 = _latency(node, method, path, document, auth)
                rate = _rate(node, method, path, document, auth)
                print(
                    f"  {label:<34} {where:<8} median {median:6.2f} ms  p99 {p99:6.2f} ms  "
                    f"{rate:7.0f} requests/s ({THREADS} clients)",
                    flush=True,
                )
    finally:
        for node in nodes:
            node.kill()


def web_failover(url: str, cwd: Path) -> float:
    nodes = start_nodes(url, cwd, ("a", "b", "c"))
    try:
        names = [f"f{i}" for i in range(5)]
        create_games(url, names)
        wait_until(lambda: placed(url), 30, "every game has a node")
        game = next(g for g in names if owner_of(url, g) == "c")
        a = nodes[0]
        assert a.call("GET", f"/api/games/{game}")[0] == 200
        killed = time.monotonic()
        nodes[2].kill()
        while True:
            if a.call("GET", f"/api/games/{game}")[0] == 200:
                return time.monotonic() - killed
            if time.monotonic() - killed > 60:
                raise TimeoutError("no node served the game within 60 s")
    finally:
        for node in nodes:
            node.kill()


def main() -> None:
    base = os.environ.get("TAE_TEST_DATABASE_URL") or LOCAL_POSTGRES
    if make_url(base).get_backend_name() != "postgresql":
        print("cluster_web: needs PostgreSQL (TAE_TEST_DATABASE_URL)")
        return
    print(f"cluster_web: web requests to the owner and through another node ({os.cpu_count()} cores)")
    for measure in (relay_cost, web_failover):
        url, schema = _schema_url(base)
        try:
            with tempfile.TemporaryDirectory() as folder:
                result = measure(url, Path(folder))
            if measure is web_failover:
                print(
                    f"  failover: SIGKILL of the owner to the URL answering 200 on a survivor: {result:.2f} s"
                )
        finally:
            _drop(base, schema)


if __name__ == "__main__":
    main()
