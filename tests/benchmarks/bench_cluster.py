"""Cluster speed: turns resolved per second on 1, 2 and 3 nodes, and the failover time.

    python -m tests.benchmarks cluster

Needs PostgreSQL (TAE_TEST_DATABASE_URL, or the local default below); every run uses a schema
of its own, dropped afterwards. Nodes are real `tae-server serve --node` processes on
127.0.0.1.

* Throughput: 300 games without bots, two scripted players each (600 TP connections from one
  asyncio driver), spread over the nodes like a TCP load balancer would (connection k to node
  k mod N, so most sessions are relayed to their game's owner). A scripted player finishes
  every turn as soon as it starts (FinishedTurn, then waits for the pushed TimeRemaining that
  starts the next turn), so every turn is a resolve and a fenced commit. Turns resolved per
  second are counted in the database over a window after a warm-up.
* Failover: two nodes, games driven the same way through node a; node b (the owner of half the
  games) is killed with SIGKILL; the time from the kill to the first turn stored by the new
  owner, for each of b's games (min / median / max).

The machine these figures are measured on has 2 cores shared by everything (the nodes, the
PostgreSQL server and the driver), so more nodes cannot resolve more turns here; the figures
show the cost of relaying and coordination, not the scaling of a real deployment.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import make_url
from twisted.internet.task import Clock

import protocol as tp
from protocol import Deframer, Version
from server.database import ConnectionStore, SyncDatabase
from server.database import games as q
from server.game.game import Game
from server.game.passwords import hash_password
from server.model.store import GameSetup
from server.model.timer_settings import TimerSettings

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.integration.test_cluster import NodeProcess, nodes_view  # noqa: E402

LOCAL_POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
GAMES = int(os.environ.get("TAE_BENCH_CLUSTER_GAMES", "300"))
WARMUP_S = 10.0
WINDOW_S = 20.0
RETRY_S = 2.0  # a player that saw no new turn for this long finishes again (as bots poll)
SMALL_MAP = "..A....M..\n...MM.....\n.A..M..A..\n....MM....\n..A.....A.\n.....M....\n"


class ScriptedPlayer:
    """One TP connection that joins a game and finishes every turn at once."""

    def __init__(self, port: int, login: str):
        self.port, self.login = port, login
        self.sequence = 0
        self.deframer = Deframer()
        self.waiting: dict[int, asyncio.Future] = {}
        self.turn_started = asyncio.Event()
        self.ready = asyncio.Event()
        self.finished = 0

    async def run(self, go: asyncio.Event, stop: asyncio.Event) -> None:
        reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        reading = asyncio.ensure_future(self._read(reader))
        try:
            await self.request(tp.Connect("bench-cluster"))
            answer = await self.request(tp.Login(self.login, "bench-password"))
            assert isinstance(answer, tp.Okay), answer
            self.ready.set()
            await go.wait()
            while not stop.is_set():
                self.turn_started.clear()
                await self.request(tp.FinishedTurn())
                self.finished += 1
                try:
                    await asyncio.wait_for(self.turn_started.wait(), RETRY_S)
                except TimeoutError:
                    pass  # finish again: the push may have been missed during a failover
        finally:
            reading.cancel()
            self.writer.close()

    async def request(self, message: tp.Message) -> tp.Message:
        self.sequence += 1
        future = asyncio.get_running_loop().create_future()
        self.waiting[self.sequence] = future
        self.writer.write(tp.encode(message, Version.TP04, self.sequence))
        return await asyncio.wait_for(future, 60)

    async def _read(self, reader: asyncio.StreamReader) -> None:
        while True:
            data = await reader.read(65536)
            if not data:
                for future in self.waiting.values():
                    if not future.done():
                        future.set_exception(ConnectionError("closed"))
                return
            self.deframer.feed(data)
            while (frame := self.deframer.next_frame()) is not None:
                if frame.sequence == 0:
                    if frame.type == tp.FrameType.TIME_REMAINING:
                        pushed = tp.decode(frame)
                        if pushed.reason == tp.TimeRemainingReason.TIMER_STARTED:
                            self.turn_started.set()
                    continue
                future = self.waiting.pop(frame.sequence, None)
                if future is not None and not future.done():
                    future.set_result(tp.decode(frame))


def _schema_url(base: str) -> tuple[str, str]:
    schema = f"tae_bench_{secrets.token_hex(5)}"
    engine = sa.create_engine(base)
    with engine.begin() as conn:
        conn.exec_driver_sql(f'CREATE SCHEMA "{schema}"')
    engine.dispose()
    url = make_url(base).update_query_dict({"options": f"-csearch_path={schema}"})
    return url.render_as_string(hide_password=False), schema


def _drop(base: str, schema: str) -> None:
    engine = sa.create_engine(base)
    with engine.begin() as conn:
        conn.exec_driver_sql(f'DROP SCHEMA "{schema}" CASCADE')
    engine.dispose()


def _turns(url: str) -> int:
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        count = conn.execute(sa.text("SELECT count(*) FROM turns")).scalar_one()
    engine.dispose()
    return int(count)


def _start_nodes(url: str, count: int, cwd: Path) -> list[NodeProcess]:
    nodes = [NodeProcess(url, chr(ord("a") + i), cwd=cwd) for i in range(count)]
    for node in nodes:
        node.start(timeout=120)
    _wait(lambda: sum(n["alive"] for n in nodes_view(url)["nodes"]) == count, 60)
    return nodes


def _add_games(url: str, count: int) -> list[str]:
    """New games with their two players, each game and its accounts in one transaction (so a
    node claims it complete); the passwords are hashed cheaply, the benchmark is about turns."""
    names = [f"b{i:03}" for i in range(count)]
    timer = TimerSettings(turn_length=300, turn_players_min=2)
    digest = hash_password("bench-password", n=16)

    def create(conn, setup: GameSetup) -> None:
        game_id = q.thd_create_game(conn, setup)
        stored = q.thd_load_games(conn, [game_id], all_states=False)[0]
        game = Game.restore(stored, ConnectionStore(conn), Clock())
        for k in range(2):
            game.create_account(f"p{k}", "", password_hash=digest, creation_setting_applies=False)

    with SyncDatabase(url) as db:
        for i, name in enumerate(names):
            db.run(create, GameSetup(name, SMALL_MAP, seed=i, timer=timer))
    _wait(lambda: not nodes_view(url)["waiting"], 120)
    return names


def _wait(predicate, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("the cluster did not get there in time")
        time.sleep(0.2)


async def _start(players: list[ScriptedPlayer]) -> tuple[asyncio.Event, list[asyncio.Future]]:
    """Every player connected and logged in, then all told to play."""
    go, stop = asyncio.Event(), asyncio.Event()
    tasks = [asyncio.ensure_future(p.run(go, stop)) for p in players]
    await asyncio.wait([asyncio.ensure_future(p.ready.wait()) for p in players], timeout=300)
    go.set()
    return stop, tasks


async def _drive(players: list[ScriptedPlayer], url: str) -> float:
    stop, tasks = await _start(players)
    await asyncio.sleep(WARMUP_S)
    before, started = _turns(url), time.monotonic()
    await asyncio.sleep(WINDOW_S)
    rate = (_turns(url) - before) / (time.monotonic() - started)
    stop.set()
    await asyncio.wait(tasks, timeout=60)
    failed = [t for t in tasks if t.done() and not t.cancelled() and t.exception()]
    if failed:
        print(f"  ({len(failed)} players stopped: {failed[0].exception()!r})")
    return rate


def throughput(base: str, count: int) -> float:
    url, schema = _schema_url(base)
    nodes: list[NodeProcess] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            nodes = _start_nodes(url, count, Path(tmp))
            names = _add_games(url, GAMES)
            ports = [n.port for n in nodes]
            players = [
                ScriptedPlayer(ports[(2 * i + k) % len(ports)], f"p{k}@{name}")
                for i, name in enumerate(names)
                for k in range(2)
            ]
            return asyncio.run(_drive(players, url))
    finally:
        for node in nodes:
            node.kill()
        _drop(base, schema)


def failover(base: str) -> list[float]:
    url, schema = _schema_url(base)
    nodes: list[NodeProcess] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            nodes = _start_nodes(url, 2, Path(tmp))
            names = _add_games(url, 20)
            a, b = nodes
            players = [ScriptedPlayer(a.port, f"p{k}@{name}") for name in names for k in range(2)]
            return asyncio.run(_kill_and_time(players, url, b))
    finally:
        for node in nodes:
            node.kill()
        _drop(base, schema)


def _last_turns(url: str) -> dict[str, int]:
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT name, last_turn FROM games")).all()
    engine.dispose()
    return {r.name: r.last_turn for r in rows}


async def _kill_and_time(players: list[ScriptedPlayer], url: str, victim: NodeProcess) -> list[float]:
    stop, tasks = await _start(players)
    await asyncio.sleep(WARMUP_S)
    games = next(n["games"] for n in nodes_view(url)["nodes"] if n["name"] == victim.name)
    killed = time.monotonic()
    victim.kill()
    before = _last_turns(url)  # after the kill: every later turn is stored by a new owner
    times: dict[str, float] = {}
    while len(times) < len(games) and time.monotonic() - killed < 60:
        now = _last_turns(url)
        for game in games:
            if game not in times and now.get(game, 0) > before.get(game, 0):
                times[game] = time.monotonic() - killed
        await asyncio.sleep(0.05)
    stop.set()
    await asyncio.wait(tasks, timeout=60)
    return sorted(times.values())


def main() -> None:
    base = os.environ.get("TAE_TEST_DATABASE_URL") or LOCAL_POSTGRES
    if make_url(base).get_backend_name() != "postgresql":
        print("cluster: needs PostgreSQL (TAE_TEST_DATABASE_URL)")
        return
    print(f"cluster: {GAMES} games, 2 scripted players each, on a {os.cpu_count()}-core machine")
    for count in (1, 2, 3):
        rate = throughput(base, count)
        print(f"  {count} node{'s' if count > 1 else ' '}: {rate:7.1f} turns resolved per second", flush=True)
    times = failover(base)
    if times:
        print(
            f"  failover (SIGKILL to the first turn stored by the new owner, {len(times)} games): "
            f"min {times[0]:.2f} s, median {statistics.median(times):.2f} s, max {times[-1]:.2f} s"
        )
    else:
        print("  failover: no turn was stored by a new owner within 60 s")


if __name__ == "__main__":
    main()
