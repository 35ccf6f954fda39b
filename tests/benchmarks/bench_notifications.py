"""Notifications at scale: 1,000 games whose turns end in the same second, 4 webhooks each.

    .venv/bin/python -m tests.benchmarks.bench_notifications [--games N] [--database URL]

Everything runs as the server runs it, on the real reactor: the games on a `DatabaseStore`
(its one database thread; SQLite in a temporary file unless --database names another), the
server's `Notifications` (the outbox rule, reminders, delivery worker with twisted.web's Agent), and a
local webhook receiver (twisted.web, in a process of its own, on 127.0.0.1) that counts what
it gets and when the last one came. Each of the games' 4 players has a webhook. The turns of
all games are ended in one reactor turn, twice: first with nobody following the games (no
notifications), then with the notifications following them. Printed:

* the time from the end of the turns until the receiver has the last of the 4,000
  "turn started" notifications (target: at most 10 s);
* the extra end-of-turn time the notifications add: the time the outbox rule
  (`server.notifications.rules`) takes inside each game's end of turn on the reactor (median
  and 95th percentile; target: median at most 1 ms), and the end-of-turn latency of a game
  (end_turn() to the new turn ready, database commit with its outbox rows included) without
  and with notifications (medians), which shows the database thread's share.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

from twisted.internet import defer, reactor, task
from twisted.web import resource, server
from twisted.web.client import Agent, readBody

from server.config.notifications import NotificationSettings
from server.database import DatabaseStore, SyncDatabase, upgrade
from server.database import games as q
from server.database.notification_outbox import notification_channels
from server.game.game import Game
from server.model.store import Account, GameSetup
from server.model.timer_settings import TimerSettings
from server.notifications import rules
from server.notifications.service import Notifications

PLAYERS = 4
TARGET_DELIVERY_S = 10.0
TARGET_EXTRA_MS = 1.0


class Receiver(resource.Resource):
    """The webhook receiver (run in a process of its own: `--receiver PORT`): POSTs are counted;
    GET answers `{"count": N, "last": UNIX TIME of the last POST}`."""

    isLeaf = True

    def __init__(self):
        super().__init__()
        self.count = 0
        self.last = 0.0

    def render_POST(self, request):
        request.content.read()
        self.count += 1
        self.last = time.time()
        return b"ok"

    def render_GET(self, request):
        return json.dumps({"count": self.count, "last": self.last}).encode()


def serve_receiver(port_file: str) -> None:
    port = reactor.listenTCP(0, server.Site(Receiver()), interface="127.0.0.1")  # type: ignore[arg-type]
    Path(port_file).write_text(str(port.getHost().port))  # type: ignore[attr-defined]
    reactor.run()


class ReceiverProcess:
    def __init__(self, folder: str):
        port_file = Path(folder) / "receiver.port"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.benchmarks.bench_notifications", "--receiver", str(port_file)]
        )
        deadline = time.monotonic() + 30
        while not port_file.exists() or not port_file.read_text():
            if time.monotonic() > deadline:
                raise RuntimeError("the receiver did not start")
            time.sleep(0.05)
        self.port = int(port_file.read_text())
        self.agent = Agent(reactor)

    async def state(self) -> tuple[int, float]:
        response = await self.agent.request(b"GET", f"http://127.0.0.1:{self.port}/".encode())
        document = json.loads(await readBody(response))  # a local test receiver: small
        return int(document["count"]), float(document["last"])

    async def until(self, count: int, timeout: float = 120) -> float:
        """The Unix time of the POST that made the count reach `count`."""
        deadline = time.monotonic() + timeout
        while True:
            got, last = await self.state()
            if got >= count:
                return last
            if time.monotonic() > deadline:
                raise RuntimeError(f"only {got} of {count} notifications arrived")
            await task.deferLater(reactor, 0.05, lambda: None)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)


def create_games(url: str, count: int, hook: str) -> None:
    """`count` games of 4 players (cheap password hashes: nobody logs in), 4 webhooks each."""

    def build(conn) -> None:
        channels = []
        for index in range(count):
            # the turns are ended by hand, twice without orders: nobody is made absent for that
            setup = GameSetup(
                f"bench-{index}",
                seed=index,
                timer=TimerSettings(turn_length=3600),
                absent_after_missed_turns=0,
            )
            game_id = q.thd_create_game(conn, setup)
            for pid in range(1, PLAYERS + 1):
                q.thd_add_account(conn, game_id, Account(f"p{pid}", "scrypt$bench", pid), ())
                channels.append(
                    {
                        "game_id": game_id,
                        "player_id": pid,
                        "kind": "webhook",
                        "target": f"{hook}/{game_id}/{pid}",
                        "format": "json",
                    }
                )
        conn.execute(notification_channels.insert(), channels)

    with SyncDatabase(url) as db:
        db.run(build)


def time_the_rule(games: list[Game]) -> dict[int, float]:
    """Wrap the outbox rule the notifications gave each game: the seconds its calls take, per game."""
    spent: dict[int, float] = {}

    def timed(change, before, after, now):
        start = time.perf_counter()
        entries = rules.entries_for(change, before, after, now)
        spent[after.game_id] = spent.get(after.game_id, 0.0) + time.perf_counter() - start
        return entries

    for game in games:
        game.notify_with(timed)
    return spent


async def end_all_turns(games: list[Game]) -> list[float]:
    """End the turn of every game in one reactor turn; each game's seconds until it is ready."""
    started = time.perf_counter()
    latencies: list[float] = []

    def done(_: object) -> None:
        latencies.append(time.perf_counter() - started)

    waits = []
    for game in games:
        waits.append(game.end_turn().addCallback(done))
    await defer.gatherResults(waits)
    return latencies


async def run(url: str, count: int, receiver: ReceiverProcess) -> None:
    hook = f"http://127.0.0.1:{receiver.port}/hook"
    upgrade(url)
    build_start = time.perf_counter()
    create_games(url, count, hook)
    store = DatabaseStore(url, reactor)
    stored = await store.load_games(None, False)
    games = []
    for record in stored:
        game = Game.restore(record, store, reactor)
        game.resume(record.deadline)
        games.append(game)
    print(
        f"  {count} games of {PLAYERS} players set up in {time.perf_counter() - build_start:.1f} s",
        flush=True,
    )

    plain = await end_all_turns(games)

    # the receiver is on 127.0.0.1, which webhooks reach only when allowed
    settings = NotificationSettings(
        reminder_lead=0, request_timeout=15, webhook_allow=["127.0.0.0/8"]
    ).validate()
    notifications = Notifications(store, reactor, settings, name="bench")
    notifications.start()
    for game in games:
        notifications.follow(game)
    spent = time_the_rule(games)

    before, _ = await receiver.state()
    started = time.time()
    notified = await end_all_turns(games)
    per_turn = sorted(spent.values())  # each game's end of turn: the listener's calls in it
    last = await receiver.until(before + count * PLAYERS)
    delivery = last - started
    await wait_idle(notifications)
    counts = await store.notifications.counts()

    extra_ms = statistics.median(per_turn) * 1000 if per_turn else 0.0
    p95_ms = per_turn[int(len(per_turn) * 0.95) - 1] * 1000 if per_turn else 0.0
    print(
        f"  delivery: the last of {count * PLAYERS} notifications arrived {delivery:.2f} s after the "
        f"turns ended (target <= {TARGET_DELIVERY_S:.0f} s) "
        f"[{'ok' if delivery <= TARGET_DELIVERY_S else 'MISSED'}]"
    )
    print(
        f"  of that, {max(notified):.2f} s until the last of the {count} turns was stored (with their "
        "outbox rows, in each turn's transaction)"
    )
    print(
        f"  outbox rule inside an end of turn: median {extra_ms:.3f} ms, 95th percentile {p95_ms:.3f} ms "
        f"(target median <= {TARGET_EXTRA_MS:.0f} ms) [{'ok' if extra_ms <= TARGET_EXTRA_MS else 'MISSED'}]"
    )
    print(
        f"  end-of-turn latency of a game (all {count} ending at once, commit included): median "
        f"{statistics.median(plain) * 1000:.0f} ms without notifications, "
        f"{statistics.median(notified) * 1000:.0f} ms with"
    )
    print(
        f"  outbox: {counts.delivered} delivered, {counts.pending} pending, {counts.failed} failed; "
        f"receiver got {(await receiver.state())[0]}"
    )
    await notifications.stop()
    await store.close()


async def wait_idle(notifications: Notifications) -> None:
    for _ in range(200):
        if notifications.outbox.idle and not notifications.worker.busy:
            return
        await task.deferLater(reactor, 0.05, lambda: None)


@contextlib.contextmanager
def _database(args, folder: str) -> Iterator[str]:
    if not args.postgres:
        yield args.database or f"sqlite:///{Path(folder) / 'bench.db'}"
        return
    from tests.benchmarks.bench_storage import postgres_databases

    databases, admin = postgres_databases()
    if databases is None:
        raise SystemExit(f"PostgreSQL: {admin}")
    try:
        with databases() as url:
            yield url.render_as_string(hide_password=False)
    finally:
        admin.dispose()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.bench_notifications")
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--database", help="a database URL (default: a temporary SQLite file)")
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="on PostgreSQL (TAE_TEST_DATABASE_URL), in a schema of its own dropped afterwards",
    )
    parser.add_argument("--receiver", metavar="PORT_FILE", help=argparse.SUPPRESS)
    args = parser.parse_args(argv if argv is not None else [])
    # readBody warns about the pooled connection of the counter's GET; harmless here
    warnings.filterwarnings("ignore", "Using readBody with a transport", DeprecationWarning)
    if args.receiver:
        serve_receiver(args.receiver)
        return
    with tempfile.TemporaryDirectory() as folder, _database(args, folder) as url:
        receiver = ReceiverProcess(folder)
        print(f"notifications: {args.games} games x {PLAYERS} webhooks on {url.split(':')[0]}", flush=True)
        failure: list = []

        def go():
            d = defer.ensureDeferred(run(url, args.games, receiver))
            d.addErrback(failure.append)
            d.addBoth(lambda _: reactor.stop())

        reactor.callWhenRunning(go)
        try:
            reactor.run()
        finally:
            receiver.stop()
        if failure:
            failure[0].raiseException()


if __name__ == "__main__":
    main(sys.argv[1:])
