"""A bounded chaos run of a three-node cluster: `python -m tests.chaos --minutes N --seed S`.

Not part of `make test` (docs/cluster.md, "Chaos run"). It starts a PostgreSQL of its own
(initdb and pg_ctl in a temporary folder), three nodes, each reaching PostgreSQL through a
proxy of its own (`tests.integration.pg_proxy`), and bots playing games through random nodes
(each reconnects to a random node when its connection fails). Then, for N minutes, a random
schedule (from the seed) of the faults of issue 23, one at a time on a random node:

* kill: SIGKILL, the node started again a little later;
* freeze: SIGSTOP past `failover_timeout`, then SIGCONT;
* term: SIGTERM (a graceful stop), started again;
* move: `tae-server move-game` of one of its games to another node;
* claims / store: `pg_terminate_backend` of its claim connection / of its store's sessions;
* lost-answer: the answer to the next COMMIT of one of its store sessions is lost;
* cut: its proxy stops passing bytes past `failover_timeout`, then passes them again;
* pg-fast / pg-immediate: PostgreSQL restarted (fast, immediate).

After each fault: every game not over resolves a turn within `PROGRESS_S` (else the run
fails), and for kill, freeze and cut the time from the fault to the first turn resolved
under the new owner of each of the node's games is measured. At the end, with the bots
stopped: every acknowledged order is stored; no order answered "nothing was changed" is
stored (unless acknowledged when sent again); no turn is stored twice; every game equals its
replay; every game has exactly one owner, a live node. Exit status 0 when all held.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import make_url

from clients.blocking import BlockingClient
from clients.bot import Bot
from clients.errors import ClientError
from protocol import Version
from server.database import SyncDatabase, create_engine
from server.database.ownership import session_name
from server.game.replay import check_replay
from server.model.store import GameSetup
from server.model.timer_settings import TimerSettings
from tests.integration.pg_proxy import PostgresProxy
from tests.integration.test_cluster import NodeProcess, nodes_view, tae_server
from tests.integration.test_faults_database import OwnPostgres, pg_bin

NODES = ("a", "b", "c")
FAILOVER_S = 4.0
POLL_S = 0.5
TURN_LENGTH_S = 20
PROGRESS_S = 45.0
WORST_GOAL_S = FAILOVER_S + 6  # failover at worst; the median's goal is FAILOVER_S + 3
FAULTS = (
    "kill",
    "freeze",
    "term",
    "move",
    "claims",
    "store",
    "lost-answer",
    "cut",
    "pg-fast",
    "pg-immediate",
)
MEASURED = ("kill", "freeze", "cut")
NOTHING_CHANGED = "nothing was changed"


@dataclass
class ChaosBot:
    """A bot that plays one game through random nodes, reconnecting whenever its connection
    fails, and keeps what it was told: orders acknowledged and orders refused."""

    game: str
    name: str
    ports: dict[str, int]
    rng: random.Random
    stop: threading.Event
    accepted: list[tuple[int, int, int]] = field(default_factory=list)
    refused: list[tuple[int, int, int, str]] = field(default_factory=list)
    reconnects: int = 0
    over: bool = False
    trail: list[str] = field(default_factory=list)  # its reconnects, when and why (a slow game's dump)

    def run(self) -> None:
        bot = Bot(self.name)
        while not self.stop.is_set() and not self.over:
            node = self.rng.choice(sorted(self.ports))
            client = None
            try:
                client = BlockingClient.connect(
                    "127.0.0.1", self.ports[node], version=Version.TP04, timeout=12
                )
                client.login(f"{self.name}@{self.game}", "a-password", create=True)
                while not self.stop.is_set():
                    began = time.monotonic()
                    report = client.run(bot.turn_plan(client.game), 30)
                    took = time.monotonic() - began
                    if took > 2:  # a slow turn's orders: when, where and how long (a slow game's dump)
                        when = time.strftime("%H:%M:%S")
                        slow = f"turn {report.turn}'s orders took {took:.1f} s"
                        self.trail.append(f"{when} on node {node}: {slow}")
                    for intent in report.accepted:
                        self.accepted.append((report.turn, intent.fleet, intent.target or 0))
                    for intent, problem in report.refused:
                        self.refused.append((report.turn, intent.fleet, intent.target or 0, problem))
                    if report.over:
                        self.over = True
                        return
                    if client.game.turn == report.turn:
                        client.wait_for_next_turn(timeout=30, poll_interval=1.0, update=False)
            except (ClientError, OSError, TimeoutError) as error:
                self.reconnects += 1
                when = time.strftime("%H:%M:%S")
                self.trail.append(f"{when} on node {node}: {type(error).__name__} {error}")
                self.stop.wait(0.5)
            finally:
                if client is not None:
                    client.close()


class Chaos:
    def __init__(
        self,
        minutes: float,
        seed: int,
        games: int,
        folder: Path,
        logs: Path,
        faults: tuple[str, ...] = FAULTS,
        dump_after: float = WORST_GOAL_S,
    ):
        self.minutes, self.seed, self.games, self.logs = minutes, seed, games, logs
        self.dump_after = dump_after  # a failover slower than this keeps what explains it
        self.kinds = faults
        self.rng = random.Random(seed)
        self.folder = folder
        bindir = pg_bin()
        if bindir is None:
            raise SystemExit("chaos: no PostgreSQL binaries (initdb, pg_ctl)")
        self.pg = OwnPostgres(bindir)
        self.pg.start()
        self.url = self.pg.new_database()
        self.engine = create_engine(self.url)
        self.proxies = {n: PostgresProxy(("127.0.0.1", self.pg.port)) for n in NODES}
        config = folder / "cluster.toml"
        config.write_text(
            f"[cluster]\npoll_interval = {POLL_S}\nfailover_timeout = {FAILOVER_S}\n"
            # Every bot comes from 127.0.0.1: the brakes on one address are not what is tested.
            "[limits]\naccounts_per_address = 1000000\nlogin_failures_per_address = 1000000\n"
            "password_hashes_per_address = 1000000\npassword_hash_cost = 10\n"
        )
        self.nodes = {
            n: NodeProcess(self.proxies[n].url_of(make_url(self.url)), n, "--config", str(config), cwd=folder)
            for n in NODES
        }
        self.ports = {n: node.port for n, node in self.nodes.items()}
        self.stop = threading.Event()
        self.bots: list[ChaosBot] = []
        self.threads: list[threading.Thread] = []
        self.game_count = 0
        self.created: set[str] = set()
        self.failures: list[str] = []
        self.failover: dict[str, list[float]] = defaultdict(list)
        self.faults: Counter[str] = Counter()

    # -- the cluster and its players -------------------------------------------------------

    def start(self) -> None:
        with SyncDatabase(self.url) as db:
            db.upgrade()
        for node in self.nodes.values():
            node.start(timeout=60)
        self._wait(lambda: len(self._alive()) == len(NODES), 30, "three nodes")
        for _ in range(self.games):
            self._new_game()

    def _new_game(self) -> None:
        self.game_count += 1
        name = f"c{self.game_count:03}"
        setup = GameSetup(
            name,
            None,  # the default map: games long enough to meet several faults
            seed=self.seed * 1000 + self.game_count,
            timer=TimerSettings(turn_length=TURN_LENGTH_S),
        )
        with SyncDatabase(self.url) as db:
            db.create_game(setup)
        self.created.add(name)
        self._wait(lambda: self._owner(name) is not None, 30, f"game {name} claimed")
        for player in ("p0", "p1"):
            bot = ChaosBot(name, player, self.ports, random.Random(self.rng.random()), self.stop)
            thread = threading.Thread(target=bot.run, daemon=True)
            self.bots.append(bot)
            self.threads.append(thread)
            thread.start()

    def _keep_games_going(self) -> None:
        running = {b.game for b in self.bots if not b.over}
        for _ in range(self.games - len(running)):
            self._new_game()

    # -- what the database says --------------------------------------------------------------

    def _alive(self) -> list[str]:
        try:
            return [n["name"] for n in nodes_view(self.url)["nodes"] if n["alive"]]
        except Exception:
            return []

    def _placements(self) -> dict[str, tuple[str | None, int, bool]]:
        """game → (owner if alive, last turn, over)."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                sa.text(
                    "SELECT g.name, g.last_turn, n.name AS node, EXISTS (SELECT 1 FROM changes ch"
                    " WHERE ch.game_id = g.id AND ch.kind = 'turn_ended' AND ch.payload->>'phase' = 'over')"
                    " AS finished FROM games g"
                    " LEFT JOIN game_claims c ON c.game_id = g.id"
                    " LEFT JOIN cluster_nodes n ON n.id = c.node_id"
                )
            ).all()
        alive = set(self._alive())
        return {
            r.name: (r.node if r.node in alive else None, int(r.last_turn or 0), bool(r.finished))
            for r in rows
            if r.name in self.created  # not the open game the first node creates
        }

    def _owner(self, game: str) -> str | None:
        try:
            return self._placements().get(game, (None, 0, False))[0]
        except Exception:
            return None

    def _wait(self, predicate, timeout: float, what: str) -> float:
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            try:
                if predicate():
                    return time.monotonic() - started
            except Exception:
                pass
            time.sleep(0.2)
        raise TimeoutError(f"chaos: {what}: not within {timeout} s")

    # -- faults ----------------------------------------------------------------------------

    def run(self) -> None:
        ends = time.monotonic() + self.minutes * 60
        while time.monotonic() < ends:
            self._keep_games_going()
            fault = self.rng.choice(self.kinds)
            victim = self.rng.choice(NODES)
            before = self._placements()
            theirs = [g for g, (owner, _, over) in before.items() if owner == victim and not over]
            started = time.monotonic()
            print(
                f"{time.strftime('%H:%M:%S')} fault {fault} on node {victim} ({len(theirs)} games)",
                flush=True,
            )
            self.faults[fault] += 1
            # Failover is watched while the fault is made: a freeze or a cut lasts past the
            # failover timeout and a killed node is started again, and a turn the new owner
            # resolves meanwhile must count when it happens, not when the fault is over.
            measuring = None
            made = threading.Event()
            if fault in MEASURED and theirs:
                measuring = threading.Thread(
                    target=self._measure, args=(fault, victim, theirs, before, started, made), daemon=True
                )
                measuring.start()
            try:
                self._inject(fault, victim, theirs)
            except Exception as error:  # a fault that could not be made is not a finding
                print(f"  could not inject {fault}: {error}", flush=True)
            made.set()
            if measuring is not None:
                measuring.join()
            self._check_progress(fault)
            time.sleep(self.rng.uniform(1, 4))

    def _inject(self, fault: str, victim: str, theirs: list[str]) -> None:
        node = self.nodes[victim]
        if fault in ("kill", "term"):
            if fault == "kill":
                node.kill()
            else:
                node.terminate(timeout=60)
            time.sleep(self.rng.uniform(1, 5))
            self._start(victim)
        elif fault == "freeze":
            os.kill(node.process.pid, signal.SIGSTOP)
            try:
                time.sleep(FAILOVER_S + 2)
            finally:
                os.kill(node.process.pid, signal.SIGCONT)
        elif fault == "cut":
            self.proxies[victim].cut()
            try:
                time.sleep(FAILOVER_S + 2)
            finally:
                self.proxies[victim].mend()
        elif fault == "move" and theirs:
            target = self.rng.choice([n for n in NODES if n != victim])
            tae_server("move-game", self.rng.choice(theirs), target, "--database", self.url)
        elif fault in ("claims", "store"):
            with self.engine.begin() as conn:
                conn.execute(
                    sa.text(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = :n"
                    ),
                    {"n": session_name(victim, fault, self.nodes[victim].process.pid)},
                )
        elif fault == "lost-answer":
            self.proxies[victim].lose_commit_answer(on=b"store")
            time.sleep(3)
        elif fault.startswith("pg-"):
            self.engine.dispose()
            self.pg.stop("fast" if fault == "pg-fast" else "immediate")
            time.sleep(self.rng.uniform(0.5, 3))
            self.pg.start()

    def _start(self, name: str) -> None:
        """Start a node again; a node that cannot start is a finding (tried three times)."""
        for _ in range(3):
            try:
                self.nodes[name].start(timeout=60)
                return
            except (RuntimeError, TimeoutError) as error:
                self.failures.append(f"node {name} could not start again: {str(error)[-200:]}")
                self.nodes[name].kill()
                time.sleep(1)

    def _measure(
        self, fault: str, victim: str, theirs: list[str], before, started: float, made: threading.Event
    ) -> None:
        """The time from the fault to the first turn of each of the node's games resolved
        under another owner (or, when the node kept the game, under it again once the fault is
        over). A turn the node itself stored as the fault began is no failover: while the game
        has no owner or is still the faulty node's, its turn only moves the baseline."""
        pending = set(theirs)
        baseline = {game: before[game][1] for game in theirs}
        deadline = started + PROGRESS_S + FAILOVER_S
        while pending and time.monotonic() < deadline:
            try:
                now = self._placements()
            except Exception:
                time.sleep(0.2)
                continue
            for game in list(pending):
                owner, turn, over = now[game]
                if owner is None or (owner == victim and not made.is_set()):
                    baseline[game] = max(baseline[game], turn)
                    continue
                if over or turn > baseline[game]:
                    took = time.monotonic() - started
                    self.failover[fault].append(took)
                    pending.discard(game)
                    print(f"  {game}: turn resolved on node {owner} after {took:.1f} s", flush=True)
                    if took > self.dump_after:  # past the goal (by default): keep what explains it
                        self._dump(game, f"{fault}-{victim}-")
            time.sleep(0.1)
        for game in pending:
            self.failures.append(
                f"{fault} on {victim}: game {game} resolved no turn in {PROGRESS_S + FAILOVER_S} s"
            )
            self._dump(game)

    def _check_progress(self, fault: str) -> None:
        try:
            before = self._placements()
        except Exception:
            time.sleep(2)
            before = self._placements()
        pending = {g for g, (_, _, over) in before.items() if not over}
        started = time.monotonic()
        while pending and time.monotonic() - started < PROGRESS_S:
            try:
                now = self._placements()
            except Exception:
                time.sleep(0.5)
                continue
            pending = {g for g in pending if not now[g][2] and now[g][1] <= before[g][1]}
            time.sleep(0.5)
        for game in sorted(pending):
            self.failures.append(f"after {fault}: game {game} resolved no turn in {PROGRESS_S} s")
            self._dump(game)

    # -- the end ---------------------------------------------------------------------------

    def finish(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(60)
        for name, node in self.nodes.items():
            if node.process is None or node.process.poll() is not None:
                self._start(name)
        self._wait(lambda: len(self._alive()) == len(NODES), 60, "every node running at the end")
        self._wait(
            lambda: all(o is not None for o, _, _ in self._placements().values()), 60, "every game owned"
        )

    def check(self) -> None:
        with SyncDatabase(self.url) as db:
            stored = {g.setup.name: g for g in db.load_games(all_states=True)}
            with db.engine.connect() as conn:
                twice = conn.execute(
                    sa.text(
                        "SELECT game_id, payload->>'turn' AS turn, count(*) FROM changes"
                        " WHERE kind = 'turn_ended' GROUP BY 1, 2 HAVING count(*) > 1"
                    )
                ).all()
                owners = conn.execute(sa.text("SELECT game_id, count(*) FROM game_claims GROUP BY 1")).all()
        for row in twice:
            self.failures.append(f"game id {row.game_id}: turn {row.turn} stored {row[2]} times")
        for row in owners:
            if row[1] != 1:
                self.failures.append(f"game id {row.game_id}: {row[1]} claim rows")
        for bot in self.bots:
            game = stored[bot.game]
            player = next((a.player_id for a in game.accounts if a.username == bot.name), None)
            if player is None:
                continue
            entries = [e for e in game.orders if e.player == player and e.seq not in game.removed_orders]
            kept = Counter((e.object_id, e.target) for e in entries)
            for turn, fleet, target in bot.accepted:
                if kept[(fleet, target)] <= 0:
                    self.failures.append(
                        f"{bot.game} {bot.name}: acknowledged order {fleet}->{target}"
                        f" of turn {turn} not stored"
                    )
                kept[(fleet, target)] -= 1
            given = {(e.turn, e.object_id, e.target) for e in entries}
            acknowledged = {(turn + 1, fleet, target) for turn, fleet, target in bot.accepted}
            for turn, fleet, target, problem in bot.refused:
                key = (turn + 1, fleet, target)
                if NOTHING_CHANGED in problem and key in given and key not in acknowledged:
                    self.failures.append(
                        f"{bot.game} {bot.name}: order {key} told 'nothing was changed' is stored"
                    )
        for name, game in stored.items():
            if name not in self.created:
                continue
            problems = check_replay(game)
            if problems:
                self.failures.append(f"game {name} differs from its replay: {problems[:2]}")
                self._dump(name)
        self.stored = {name: game for name, game in stored.items() if name in self.created}

    def _dump(self, name: str, prefix: str = "") -> None:
        """What a failed (or slow) game's investigation needs, in `self.logs`: its change
        records, its stored orders and every node's log lines that name it."""
        self.logs.mkdir(parents=True, exist_ok=True)
        lines = []
        try:
            with SyncDatabase(self.url) as db:
                game = next(g for g in db.load_games(all_states=False) if g.setup.name == name)
                records = db.changes_after(game.game_id, 0)
            lines += [f"{r.sequence} {r.time:.6f} {r.kind} {r.change}" for r in records]
            lines += [f"order {e}" for e in game.orders]
            lines += [f"removed {sorted(game.removed_orders)}"]
        except Exception as error:
            lines.append(f"the database could not be read: {error}")
        for bot in self.bots:
            if bot.game == name:
                lines.append(f"bot {bot.name}: accepted {bot.accepted} refused {bot.refused} over {bot.over}")
                lines += [f"bot {bot.name}: {line}" for line in bot.trail[-20:]]
        for node_name, node in self.nodes.items():
            lines += [f"{node_name}: {line.rstrip()}" for line in node.lines if name in line]
        (self.logs / f"{prefix}{name}.txt").write_text("\n".join(lines) + "\n")

    def report(self) -> str:
        lines = [f"chaos: seed {self.seed}, {self.minutes} min, faults {dict(self.faults)}"]
        acknowledged = sum(len(b.accepted) for b in self.bots)
        refused = sum(len(b.refused) for b in self.bots)
        turns = sum(len(g.turns) for g in self.stored.values())
        over = sum(1 for b in self.bots if b.over) // 2
        lines.append(
            f"  {len(self.stored)} games ({over} over), {turns} turns stored,"
            f" {acknowledged} orders acknowledged,"
            f" {refused} refused, {sum(b.reconnects for b in self.bots)} reconnects"
        )
        for fault in MEASURED:
            times = self.failover.get(fault, [])
            if times:
                lines.append(
                    f"  failover after {fault}: median {statistics.median(times):.1f} s,"
                    f" worst {max(times):.1f} s ({len(times)} games;"
                    f" goal {FAILOVER_S + 3:.0f} / {WORST_GOAL_S:.0f} s)"
                )
        critical = sum(1 for node in self.nodes.values() for e in node.events if e.get("level") == "critical")
        lines.append(f"  critical log events: {critical}")
        lines += [f"  FAILED: {f}" for f in self.failures] or ["  every invariant held"]
        return "\n".join(lines)

    def close(self) -> None:
        self.stop.set()
        for node in self.nodes.values():
            try:
                if node.process is not None and node.process.poll() is None:
                    os.kill(node.process.pid, signal.SIGCONT)
                node.kill()
            except Exception:
                pass
        for proxy in self.proxies.values():
            proxy.close()
        self.engine.dispose()
        self.pg.destroy()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.chaos", description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--games", type=int, default=6, help="games played at once (two bots each)")
    parser.add_argument(
        "--logs", type=Path, default=Path("chaos-logs"), help="where a failed game's records and logs go"
    )
    parser.add_argument(
        "--faults",
        default=",".join(FAULTS),
        help=f"the kinds of fault to choose from, comma-separated (default: all: {','.join(FAULTS)})",
    )
    parser.add_argument(
        "--dump-after",
        type=float,
        default=WORST_GOAL_S,
        help="keep the records and logs of a game whose failover took longer than this many seconds"
        f" (default {WORST_GOAL_S:g}: the goal)",
    )
    args = parser.parse_args(argv)
    kinds = tuple(k for k in args.faults.split(",") if k)
    unknown = sorted(set(kinds) - set(FAULTS))
    if unknown or not kinds:
        parser.error(f"--faults: unknown kinds {unknown}; choose from {', '.join(FAULTS)}")
    with tempfile.TemporaryDirectory(prefix="tae-chaos-") as folder:
        chaos = Chaos(args.minutes, args.seed, args.games, Path(folder), args.logs, kinds, args.dump_after)
        try:
            chaos.start()
            chaos.run()
            chaos.finish()
            chaos.check()
            print(chaos.report(), flush=True)
        finally:
            chaos.close()
    return 1 if chaos.failures else 0


if __name__ == "__main__":
    sys.exit(main())
