"""Cluster cost: CPU seconds the nodes spend per turn resolved, on 1, 2 and 3 nodes.

    python -m tests.benchmarks cluster_cpu

The same workload on each node count: GAMES games of two scripted players each (the players of
`bench_cluster`, who finish every turn at once), every player connected straight to its game's
owner, so nothing is relayed and what grows with the number of nodes is the nodes' fixed cost
(claim rounds, heartbeats, following other nodes' changes, polling). A window's figure is the CPU
time (user + system, from /proc, every thread) of all node processes over the window, divided by
the turns resolved in it: CPU, not wall time, because the machine is shared.

One window is one sample, and a load burst on the shared machine moves it by 10-40 % (a busy
machine makes the same work cost more CPU time), so the benchmark measures REPEATS windows of each
node count and interleaves them. Three clusters (1, 2 and 3 nodes, each on a database of its own,
each with its GAMES games) are started once and kept; they play in turn, one window at a time,
and the order of the counts turns by one each round (1 2 3, then 2 3 1, then 3 1 2, ...), so a
burst, or a drift of the machine's load over the run, falls on every count alike. Meanwhile the
clusters not playing sit idle, and their CPU over the window is the idle cost of a node.

It prints every window as it is measured, then for each count the median and the spread (min-max)
of its windows, the ratio of the largest median to the smallest, and whether the goal holds: that
ratio at most 1.10 (the three figures within 10 % of each other). Then each count against 1 node
in the same round, minutes apart at most: the median of those ratios and in how many rounds the
count cost more (a gap that every round shows is real even when the ranges overlap). Last, the
CPU of an idle node per second (the median over the windows of the clusters not playing).

Runs on a PostgreSQL of its own (initdb and pg_ctl in a temporary folder, as the fault tests do;
the benchmark skips without the binaries). About 5-6 minutes with the defaults on the 2-core
development machine (8 at a load of 10): 40 s to start the clusters, then about 20 s a window.

Environment:

* TAE_BENCH_CPU_REPEATS: windows per node count (default 5);
* TAE_BENCH_CPU_WINDOW: seconds per window (default 12), each after a 3 s warm-up;
* TAE_BENCH_CPU_GAMES: games per cluster (default 30);
* TAE_BENCH_CPU_PROFILE=FOLDER: every node runs under cProfile and writes FOLDER/N-nodes-NAME.prof
  (read them with `python -m pstats`; the profile covers the node's whole run, its idle time
  included). cProfile sees the reactor thread only; the database threads, where most of a turn's
  CPU goes, need a sampling profiler (`py-spy record --threads --format raw --pid PID` on a node
  during a window).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.benchmarks.bench_cluster import ScriptedPlayer, _add_games, _start, _turns, _wait  # noqa: E402
from tests.integration.test_cluster import NodeProcess, nodes_view  # noqa: E402
from tests.integration.test_faults_database import OwnPostgres, pg_bin  # noqa: E402

COUNTS = (1, 2, 3)
GAMES = int(os.environ.get("TAE_BENCH_CPU_GAMES", "30"))
WINDOW_S = float(os.environ.get("TAE_BENCH_CPU_WINDOW", "12"))
REPEATS = int(os.environ.get("TAE_BENCH_CPU_REPEATS", "5"))
WARMUP_S = 3.0  # the clusters are warm: the players log in before it, the games are loaded
GOAL = 1.10  # the largest median at most 10 % above the smallest
PROFILE = os.environ.get("TAE_BENCH_CPU_PROFILE")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


class MeasuredNode(NodeProcess):
    """A node, run under cProfile when `profile` names a file."""

    def __init__(self, database: str, name: str, cwd: Path, profile: Path | None):
        super().__init__(database, name, cwd=cwd)
        self.profile = profile

    def command(self) -> list[str]:
        command = super().command()
        if self.profile is None:
            return command
        return [command[0], "-m", "cProfile", "-o", str(self.profile), *command[1:]]

    def cpu_seconds(self) -> float:
        """User + system time of the process so far."""
        assert self.process is not None
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime


@dataclass(frozen=True)
class Window:
    """One measured window: CPU seconds of the playing cluster's nodes, the turns they resolved,
    and the CPU seconds per node-second of the nodes of the clusters that sat idle meanwhile."""

    cpu: float
    turns: int
    idle: float

    @property
    def per_turn(self) -> float:
        return self.cpu / self.turns if self.turns else float("inf")


class Cluster:
    """`count` nodes on a database of their own, with GAMES games placed on them."""

    def __init__(self, postgres: OwnPostgres, count: int, cwd: Path):
        self.count = count
        self.url = postgres.new_database()
        self.nodes = [
            MeasuredNode(
                self.url,
                name,
                cwd,
                Path(PROFILE) / f"{count}-nodes-{name}.prof" if PROFILE else None,
            )
            for name in "abc"[:count]
        ]

    def start(self) -> None:
        for node in self.nodes:
            node.start(timeout=120)
        _wait(lambda: sum(n["alive"] for n in nodes_view(self.url)["nodes"]) == self.count, 60)
        self.games = _add_games(self.url, GAMES)

    def stop(self) -> None:
        for node in self.nodes:
            if PROFILE and node.process is not None:
                node.terminate()  # cProfile writes its file at exit
            else:
                node.kill()

    def cpu_seconds(self) -> float:
        return sum(node.cpu_seconds() for node in self.nodes)

    def players(self) -> list[ScriptedPlayer]:
        """Two players per game, each connected to the game's owner (as it is now)."""
        port_of = {n.name: n.port for n in self.nodes}
        owner = {game: node["name"] for node in nodes_view(self.url)["nodes"] for game in node["games"]}
        return [ScriptedPlayer(port_of[owner[game]], f"p{k}@{game}") for game in self.games for k in range(2)]


async def measure(playing: Cluster, idle: list[Cluster]) -> Window:
    """One window of `playing`'s games, with the CPU of the `idle` clusters' nodes meanwhile."""
    stop, tasks = await _start(playing.players())
    await asyncio.sleep(WARMUP_S)
    turns_before, cpu_before = _turns(playing.url), playing.cpu_seconds()
    idle_before = sum(c.cpu_seconds() for c in idle)
    started = asyncio.get_running_loop().time()
    await asyncio.sleep(WINDOW_S)
    cpu = playing.cpu_seconds() - cpu_before
    idle_cpu = sum(c.cpu_seconds() for c in idle) - idle_before
    node_seconds = sum(c.count for c in idle) * (asyncio.get_running_loop().time() - started)
    turns = _turns(playing.url) - turns_before
    stop.set()
    await asyncio.wait(tasks, timeout=60)
    return Window(cpu, turns, idle_cpu / node_seconds)


def rounds(repeats: int) -> list[tuple[int, ...]]:
    """The node counts of each round, turned by one each round."""
    return [COUNTS[r % len(COUNTS) :] + COUNTS[: r % len(COUNTS)] for r in range(repeats)]


def _nodes(count: int) -> str:
    return f"{count} node{'s' if count > 1 else ''}"


def summary(windows: dict[int, list[Window]]) -> list[str]:
    """Median and min-max per count, the ratio of the largest median to the smallest, the verdict,
    and the CPU of an idle node."""
    lines = []
    medians: dict[int, float] = {}
    for count in COUNTS:
        figures = sorted(w.per_turn * 1000 for w in windows[count])
        medians[count] = statistics.median(figures)
        turns = statistics.median(w.turns for w in windows[count])
        lines.append(
            f"  {_nodes(count):7}: median {medians[count]:5.1f} ms CPU per turn, "
            f"min-max {figures[0]:.1f}-{figures[-1]:.1f} ({len(figures)} windows, median {turns:.0f} turns)"
        )
    low, high = min(medians, key=medians.__getitem__), max(medians, key=medians.__getitem__)
    ratio = medians[high] / medians[low]
    verdict = "holds" if ratio <= GOAL else "does not hold"
    lines.append(
        f"  largest / smallest median: {ratio:.2f} ({_nodes(high)} / {_nodes(low)}); "
        f"goal within 10 % (at most {GOAL:.2f}): {verdict}"
    )
    base = COUNTS[0]
    paired = []
    for count in COUNTS[1:]:
        ratios = [w.per_turn / b.per_turn for w, b in zip(windows[count], windows[base], strict=True)]
        above = sum(r > 1 for r in ratios)
        paired.append(f"{_nodes(count)} x{statistics.median(ratios):.2f} (above in {above} of {len(ratios)})")
    lines.append(f"  against {_nodes(base)} in the same round (median): " + ", ".join(paired))
    idle = statistics.median(w.idle for ws in windows.values() for w in ws) * 1000
    lines.append(f"  an idle node: median {idle:.1f} ms CPU per second")
    return lines


def main() -> None:
    bindir = pg_bin()
    if bindir is None:
        print("cluster_cpu: needs the PostgreSQL binaries (initdb, pg_ctl)")
        return
    postgres = OwnPostgres(bindir)
    clusters: dict[int, Cluster] = {}
    try:
        postgres.start()
        print(
            f"cluster_cpu: {GAMES} games, 2 players each on the game's owner, "
            f"{REPEATS} windows of {WINDOW_S:.0f} s per node count, the counts in turn",
            flush=True,
        )
        with tempfile.TemporaryDirectory() as tmp:
            for count in COUNTS:
                clusters[count] = Cluster(postgres, count, Path(tmp))
                clusters[count].start()
            windows: dict[int, list[Window]] = {count: [] for count in COUNTS}
            for round_, order in enumerate(rounds(REPEATS), 1):
                for count in order:
                    idle = [c for c in clusters.values() if c.count != count]
                    window = asyncio.run(measure(clusters[count], idle))
                    windows[count].append(window)
                    print(
                        f"  round {round_}, {_nodes(count):7}: {window.per_turn * 1000:6.1f} ms CPU per turn "
                        f"(all nodes, {window.turns} turns)",
                        flush=True,
                    )
            for line in summary(windows):
                print(line)
    finally:
        for cluster in clusters.values():
            cluster.stop()
        postgres.destroy()


if __name__ == "__main__":
    main()
