"""The web listener: page and map render times, and public game page requests per second.

Prints, for the default map (4 players, 20 bot turns) and a 64×64 map (8 players, 20 bot
turns): the time to render the SVG map from a new snapshot, the time to render the whole game
page from a new snapshot (cold: map, documents and history summaries all built) and again from
the same snapshot (warm: what every spectator after the first gets). Targets: game page ≤ 20 ms,
SVG map ≤ 100 ms. (Pages are measured through twisted.web in memory, without gzip; gzip at level
3 adds about 5 ms to a 64×64 page.) Then the requests per second of the public game page with 100 concurrent
keep-alive clients over loopback against a separate server process.
Run: `python -m tests.benchmarks web`.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

from treq.testing import StubTreq
from twisted.internet.task import Clock

from ruleset import DEFAULT_BOARD, parse_map, visible_to
from ruleset.board import grid_map_text
from ruleset.simulator import RandomPlayer
from server.views.web.galaxy import galaxy
from server.views.web.mapsvg import render_map
from tests.web.bot_games import play_turn
from tests.web.fake_game import FakeArchive, FakeDirectory, FakeGame
from tests.web.helpers import Client

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = 100
DURATION = 5.0


def played(board, players: int, turns: int) -> tuple[FakeGame, Clock]:
    clock = Clock()
    clock.advance(1_000_000)
    game = FakeGame("Bench", clock, FakeArchive(), board=board)
    for i in range(players):
        game.create_account(f"player{i + 1}", "bench-password")
    strategy = RandomPlayer()
    for _ in range(turns):
        play_turn(game, strategy)
    return game, clock


def timed(run, repeat: int) -> float:
    """The median time of one run, in milliseconds."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def render_figures(label: str, game: FakeGame, clock: Clock, repeat: int) -> None:
    from server.web import make_site

    state = game.state
    svg_ms = timed(lambda: render_map(galaxy(state.board, visible_to(state, 0))), repeat)
    site = make_site(FakeDirectory(game), game.archive, clock, secret=b"bench")
    client = Client(site)
    # the page as built, without the gzip layer (in-memory clients always ask for gzip)
    client.stub = StubTreq(site.resource.original)
    client.get("/games/Bench")  # the history book is filled once per process

    def cold():  # a new turn: a new state (with nothing changed on the board)
        game._snapshot = replace(
            game.snapshot, state=replace(game.snapshot.state), state_cache={}, _derived={}
        )
        answer = client.get("/games/Bench")
        assert answer.status == 200

    def first():
        site.web.painters.clear()
        cold()

    first_ms = timed(first, repeat)
    cold_ms = timed(cold, repeat)

    def same_state():  # another snapshot of the same turn (an order, a finished flag)
        game._snapshot = replace(game.snapshot, serial=game.snapshot.serial + 1, _derived={})
        client.get("/games/Bench")

    same_ms = timed(same_state, repeat)
    warm_ms = timed(lambda: client.get("/games/Bench"), repeat)
    size = len(client.get("/games/Bench").body)
    print(
        f"{label}: SVG map {svg_ms:.1f} ms (target ≤ 100); game page (target ≤ 20): {first_ms:.1f} ms "
        f"drawn from nothing, {cold_ms:.1f} ms after a new turn (systems drawn before are reused), "
        f"{same_ms:.1f} ms for a new snapshot of the same turn, {warm_ms:.1f} ms for the same snapshot; "
        f"page {size // 1024} KiB",
        flush=True,
    )


async def hammer(port: int, clients: int, duration: float) -> tuple[int, list[float]]:
    request = b"GET /games/Nebula HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: identity\r\n\r\n"
    done = 0
    latencies: list[float] = []
    stop_at = time.monotonic() + duration

    async def one() -> None:
        nonlocal done
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            while time.monotonic() < stop_at:
                started = time.monotonic()
                writer.write(request)
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                await reader.readexactly(length)
                latencies.append(time.monotonic() - started)
                done += 1
        finally:
            writer.close()

    await asyncio.gather(*(one() for _ in range(clients)))
    return done, latencies


def throughput() -> None:
    command = [
        sys.executable,
        "-m",
        "tests.integration.web_world",
        "--players",
        "a,b,c,d",
        "--bot-turns",
        "20",
    ]
    server = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()
        port = int(line.split()[1])
        asyncio.run(hammer(port, 10, 0.5))  # warm up
        done, latencies = asyncio.run(hammer(port, CLIENTS, DURATION))
        latencies.sort()
        p50 = latencies[len(latencies) // 2] * 1000
        p99 = latencies[int(len(latencies) * 0.99)] * 1000
        print(
            f"public game page, {CLIENTS} concurrent keep-alive clients: {done / DURATION:.0f} requests/s "
            f"(median {p50:.0f} ms, 99th percentile {p99:.0f} ms)",
            flush=True,
        )
    finally:
        server.terminate()
        server.wait(timeout=10)


def main() -> None:
    game, clock = played(DEFAULT_BOARD, 4, 20)
    render_figures("default map (16×11, 4 players, turn 20)", game, clock, 50)
    big, big_clock = played(parse_map(grid_map_text(64, 64)), 8, 20)
    render_figures(
        f"64×64 map (8 players, turn {big.state.turn}, {big.state.phase.value})", big, big_clock, 10
    )
    throughput()


if __name__ == "__main__":
    main()
