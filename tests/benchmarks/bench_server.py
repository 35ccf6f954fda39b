"""Full-universe fetches over loopback against a real `tae-server` process.

Prints, for 1 and for 16 concurrent TP04 clients: full-universe fetches per second
(GetObjectsByID with every object id), object frames per second, and the median latency of one
fetch. The clients only cut frames (no decoding), so the figures measure the server.
Run: `python -m tests.benchmarks server`.
"""

from __future__ import annotations

import os
import selectors
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import protocol as tp
from protocol import Deframer, Version
from tests.support.servers import free_port

PLAYERS = 4
DURATION = 4.0


class Client:
    """A blocking-then-nonblocking TP04 client that only counts frames."""

    def __init__(self, port: int, name: str):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.deframer = Deframer()
        self.seq = 1
        self.request(tp.Connect("bench"))
        self.request(tp.CreateAccount(name, "bench-password", "", ""))
        self.request(tp.Login(name, "bench-password"))
        ids = self.request(tp.GetObjectIDs(-1, 0, -1, -1))[0]
        self.ids = tuple(i.id for i in tp.decode(ids).ids)
        self.fetch = None
        self.expected = 0
        self.got = 0
        self.started = 0.0

    def request(self, message) -> list[tp.Frame]:
        self.seq += 1
        self.sock.sendall(tp.encode(message, Version.TP04, self.seq))
        frames = []
        while not frames:
            self.deframer.feed(self.sock.recv(1 << 16))
            while (frame := self.deframer.next_frame()) is not None:
                if frame.sequence == self.seq:
                    frames.append(frame)
        return frames

    def send_fetch(self) -> None:
        self.seq += 1
        self.expected = None
        self.got = 0
        self.started = time.perf_counter()
        self.sock.sendall(tp.encode(tp.GetObjectsByID(self.ids), Version.TP04, self.seq))

    def on_readable(self) -> float | None:
        """Returns the fetch latency when the whole reply has arrived."""
        data = self.sock.recv(1 << 20)
        if not data:
            raise ConnectionError("server closed the connection")
        self.deframer.feed(data)
        while (frame := self.deframer.next_frame()) is not None:
            if frame.sequence != self.seq:
                continue
            if self.expected is None:
                self.expected = tp.decode(frame).number
            else:
                self.got += 1
        if self.expected is not None and self.got == self.expected:
            return time.perf_counter() - self.started
        return None


def measure(port: int, clients: int) -> tuple[float, float, float, int]:
    # Up to four players share the connections (a game takes 8 players, an address makes 10
    # accounts): a second connection of a player logs in to the account the first one made.
    conns = [Client(port, f"bench{clients}_{i % 4}_{os.getpid()}") for i in range(clients)]
    for c in conns:
        c.sock.setblocking(False)
    selector = selectors.DefaultSelector()
    for c in conns:
        selector.register(c.sock, selectors.EVENT_READ, c)
        c.send_fetch()
    latencies = []
    end = time.perf_counter() + DURATION
    while time.perf_counter() < end:
        for key, _ in selector.select(timeout=1):
            client = key.data
            latency = client.on_readable()
            if latency is not None:
                latencies.append(latency)
                client.send_fetch()
    elapsed = DURATION
    objects = len(conns[0].ids)
    for c in conns:
        c.sock.close()
    fetches = len(latencies) / elapsed
    return fetches, fetches * objects, statistics.median(latencies) * 1000, objects


def main() -> None:
    port = free_port()
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as workdir:
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
            ],
            cwd=workdir,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.time() + 20
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    if time.time() > deadline:
                        raise
                    time.sleep(0.1)
            for clients in (1, 16):
                fetches, frames, median, objects = measure(port, clients)
                print(
                    f"{clients:2d} TP04 client(s), {objects} objects: "
                    f"{fetches:8.1f} full-universe fetches/s, "
                    f"{frames:10.0f} object frames/s, median fetch latency {median:7.2f} ms"
                )
        finally:
            server.terminate()
            server.wait(timeout=10)


if __name__ == "__main__":
    main()
