"""A wrong-password login flood against a real `tae-server` process, and what it does to others.

100 connections from 127.0.0.1 send wrong-password Logins for one account for 10 s (each
sends its next Login as soon as the last one is answered, and connects again when the server
closes it). Meanwhile a logged-in witness pings every 20 ms, and a fresh connection logs in to
the attacked account with the correct password every 2 s. Printed: the witness's ping latency
(median, p99, max; target p99 <= 50 ms), the time of each correct login from connect to Okay
(target <= 2 s), and what the flood got (answers, refusals, connections closed by the server).

Run: `python -m tests.benchmarks login_flood` (`FLOOD_CONNECTIONS`, `FLOOD_SECONDS` in the
environment change the size; `FLOOD_SERVER_ARGS` adds arguments to `tae-server serve`, e.g.
`--limit hashing_threads=1`). The flood runs in a process of its own so that it does not take
the witness's interpreter lock.
"""

from __future__ import annotations

import errno
import multiprocessing
import os
import selectors
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import protocol as tp
from protocol import Deframer, Version

CONNECTIONS = int(os.environ.get("FLOOD_CONNECTIONS", "100"))
SECONDS = float(os.environ.get("FLOOD_SECONDS", "10"))
PING_EVERY = 0.02
CORRECT_LOGIN_EVERY = 2.0
VICTIM, VICTIM_PASSWORD = "victim", "victim-password"
WITNESS, WITNESS_PASSWORD = "witness", "witness-password"
ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Blocking:
    """A blocking TP04 client: one request, its reply."""

    def __init__(self, port: int, timeout: float = 30):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.deframer = Deframer()
        self.sequence = 0

    def request(self, message) -> tp.Message:
        self.sequence += 1
        self.sock.sendall(tp.encode(message, Version.TP04, self.sequence))
        while True:
            frame = self.deframer.next_frame()
            if frame is not None:
                if frame.sequence == self.sequence:
                    return tp.decode(frame)
                continue
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionError("the server closed the connection")
            self.deframer.feed(data)

    def close(self) -> None:
        self.sock.close()


# -- the flood (its own process) ------------------------------------------------------------


class Attacker:
    """One flooding connection: Connect, then wrong Logins one after another."""

    def __init__(self, port: int, selector: selectors.BaseSelector, index: int):
        self.port, self.selector, self.index = port, selector, index
        self.sock: socket.socket | None = None
        self.sequence = 0
        self.deframer = Deframer()
        self.attempt = 0

    def connect(self) -> None:
        self.sock = socket.socket()
        self.sock.setblocking(False)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        code = self.sock.connect_ex(("127.0.0.1", self.port))
        if code not in (0, errno.EINPROGRESS):
            raise OSError(code, os.strerror(code))
        self.deframer = Deframer()
        self.sequence = 0
        self.selector.register(self.sock, selectors.EVENT_WRITE, self)
        self.connecting = True

    def send(self, message) -> None:
        self.sequence += 1
        assert self.sock is not None
        self.sock.sendall(tp.encode(message, Version.TP04, self.sequence))

    def next_login(self) -> None:
        self.attempt += 1
        self.send(tp.Login(VICTIM, f"guess-{self.index}-{self.attempt}"))

    def drop(self) -> None:
        if self.sock is not None:
            self.selector.unregister(self.sock)
            self.sock.close()
            self.sock = None


def flood(port: int, seconds: float, connections: int, results) -> None:
    selector = selectors.DefaultSelector()
    attackers = [Attacker(port, selector, i) for i in range(connections)]
    for attacker in attackers:
        attacker.connect()
    counts = {"answers": 0, "login_fails": 0, "other_fails": 0, "closed_by_server": 0, "reconnects": 0}
    texts: dict[str, int] = {}
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for key, _events in selector.select(timeout=0.2):
            attacker = key.data
            if attacker.connecting:
                attacker.connecting = False
                error = attacker.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if error:
                    attacker.drop()
                    attacker.connect()
                    counts["reconnects"] += 1
                    continue
                selector.modify(attacker.sock, selectors.EVENT_READ, attacker)
                try:
                    attacker.send(tp.Connect("login flood"))
                    attacker.next_login()
                except OSError:
                    attacker.drop()
                    attacker.connect()
                    counts["reconnects"] += 1
                continue
            try:
                data = attacker.sock.recv(65536)
            except OSError:
                data = b""
            if not data:
                counts["closed_by_server"] += 1
                attacker.drop()
                attacker.connect()
                counts["reconnects"] += 1
                continue
            attacker.deframer.feed(data)
            while (frame := attacker.deframer.next_frame()) is not None:
                if frame.sequence < 2:
                    continue  # Connect's Okay, or a push
                counts["answers"] += 1
                message = tp.decode(frame)
                if isinstance(message, tp.Fail):
                    kind = "login_fails" if message.code == 1 else "other_fails"
                    counts[kind] += 1
                    texts[message.message] = texts.get(message.message, 0) + 1
                if frame.sequence == attacker.sequence:
                    try:
                        attacker.next_login()
                    except OSError:
                        pass
    for attacker in attackers:
        attacker.drop()
    results.put((counts, texts))


# -- the witness and the real player ----------------------------------------------------------


def witness(port: int, stop: threading.Event, latencies: list[float]) -> None:
    client = Blocking(port)
    client.request(tp.Connect("witness"))
    answer = client.request(tp.Login(WITNESS, WITNESS_PASSWORD))
    assert isinstance(answer, tp.Okay), answer
    ready.set()
    while not stop.is_set():
        started = time.perf_counter()
        client.request(tp.Ping())
        latencies.append(time.perf_counter() - started)
        time.sleep(PING_EVERY)
    client.close()


ready = threading.Event()


def correct_login(port: int) -> tuple[float, float]:
    """(seconds from connecting to the login's Okay, of which the TCP connect and Connect)."""
    started = time.perf_counter()
    client = Blocking(port)
    try:
        client.request(tp.Connect("real player"))
        connected = time.perf_counter() - started
        answer = client.request(tp.Login(VICTIM, VICTIM_PASSWORD))
    finally:
        client.close()
    if not isinstance(answer, tp.Okay):
        raise AssertionError(f"the correct login was refused: {answer}")
    return time.perf_counter() - started, connected


def wait_for_port(port: int, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the server did not start") from None
            time.sleep(0.05)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    port = free_port()
    with tempfile.TemporaryDirectory() as workdir:
        log = open(Path(workdir) / "server.log", "w")  # noqa: SIM115 (closed below)
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "server.cli",
                "serve",
                "--listen",
                f"tcp:{port}:interface=127.0.0.1",
                "--turn-length",
                "0",
                "--database",
                f"sqlite:///{workdir}/tae.db",
                *os.environ.get("FLOOD_SERVER_ARGS", "").split(),
            ],
            cwd=workdir,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_for_port(port, server)
            for name, password in ((VICTIM, VICTIM_PASSWORD), (WITNESS, WITNESS_PASSWORD)):
                client = Blocking(port)
                client.request(tp.Connect("setup"))
                answer = client.request(tp.CreateAccount(name, password, "", ""))
                assert isinstance(answer, tp.Okay), answer
                client.close()
            before, _ = correct_login(port)
            stop, latencies = threading.Event(), []
            watcher = threading.Thread(target=witness, args=(port, stop, latencies), daemon=True)
            watcher.start()
            ready.wait(30)
            results: multiprocessing.Queue = multiprocessing.Queue()
            attackers = multiprocessing.Process(target=flood, args=(port, SECONDS, CONNECTIONS, results))
            quiet = len(latencies)
            attackers.start()
            logins = []
            started = time.monotonic()
            next_login = started + 1.0
            while time.monotonic() < started + SECONDS - 0.5:
                if time.monotonic() >= next_login:
                    logins.append(correct_login(port))
                    next_login += CORRECT_LOGIN_EVERY
                time.sleep(0.01)
            counts, texts = results.get(timeout=SECONDS + 60)
            attackers.join(30)
            stop.set()
            watcher.join(30)
            during = [x * 1000 for x in latencies[quiet:]]
            log.flush()
            failed_lines = sum(
                1
                for line in Path(log.name).read_text(errors="replace").splitlines()
                if "failed login" in line
            )
        finally:
            server.terminate()
            server.wait(timeout=30)
            log.close()
    print(f"flood: {CONNECTIONS} connections, {SECONDS:g} s of wrong-password Logins for one account")
    print(f"  correct login before the flood: {before * 1000:.0f} ms")
    print(
        f"  witness ping latency during the flood ({len(during)} pings): median "
        f"{statistics.median(during):.1f} ms, p99 {percentile(during, 0.99):.1f} ms, max {max(during):.1f} ms"
        " (target p99 <= 50 ms)"
    )
    print(
        "  correct logins during the flood (of which connecting): "
        + ", ".join(f"{t * 1000:.0f} ({c * 1000:.0f}) ms" for t, c in logins)
        + f"; worst {max(t for t, _ in logins):.2f} s (target <= 2 s)"
    )
    print(
        f"  the flood got {counts['answers']} answers ({counts['answers'] / SECONDS:.0f}/s): "
        f"{counts['login_fails']} bad-login Fails, {counts['other_fails']} other Fails; the server "
        f"closed {counts['closed_by_server']} of its connections"
    )
    for text, n in sorted(texts.items(), key=lambda item: -item[1])[:4]:
        print(f"    {n:6d} × {text!r}")
    print(f"  server log lines about failed logins: {failed_lines}")


if __name__ == "__main__":
    main()
