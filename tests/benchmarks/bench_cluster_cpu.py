"""Cluster cost: CPU seconds the nodes spend per turn resolved, on 1, 2 and 3 nodes.

    python -m tests.benchmarks cluster_cpu

The same workload on each node count: GAMES games of two scripted players each (the players of
`bench_cluster`, who finish every turn at once), every player connected straight to its game's
owner, so nothing is relayed and what grows with the number of nodes is the nodes' fixed cost
(claim rounds, heartbeats, following other nodes' changes, polling). The figure is the CPU time
(user + system, from /proc) of all node processes over a window, divided by the turns resolved
in that window: CPU, not wall time, because the machine is shared. Goal: the three figures within
10 % of each other.

Runs on a PostgreSQL of its own (initdb and pg_ctl in a temporary folder, as the fault tests do;
the benchmark skips without the binaries), a fresh database for each node count.

Environment: TAE_BENCH_CPU_GAMES (default 30), TAE_BENCH_CPU_WINDOW (seconds, default 20),
TAE_BENCH_CPU_PROFILE=FOLDER runs every node under cProfile and writes FOLDER/N-nodes-NAME.prof
(read them with `python -m pstats`). cProfile sees the reactor thread only; the database
threads, where most of a turn's CPU goes, need a sampling profiler
(`py-spy record --threads --format raw --pid PID` on a node during the window).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.benchmarks.bench_cluster import ScriptedPlayer, _add_games, _start, _turns, _wait  # noqa: E402
from tests.integration.test_cluster import NodeProcess, nodes_view  # noqa: E402
from tests.integration.test_faults_database import OwnPostgres, pg_bin  # noqa: E402

GAMES = int(os.environ.get("TAE_BENCH_CPU_GAMES", "30"))
WINDOW_S = float(os.environ.get("TAE_BENCH_CPU_WINDOW", "20"))
WARMUP_S = 5.0
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
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime


def cpu_per_turn(postgres: OwnPostgres, count: int) -> tuple[float, int]:
    """CPU seconds of all nodes per turn resolved, and the turns resolved in the window."""
    url = postgres.new_database()
    nodes: list[MeasuredNode] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for i in range(count):
                name = chr(ord("a") + i)
                profile = Path(PROFILE) / f"{count}-nodes-{name}.prof" if PROFILE else None
                nodes.append(MeasuredNode(url, name, Path(tmp), profile))
            for node in nodes:
                node.start(timeout=120)
            _wait(lambda: sum(n["alive"] for n in nodes_view(url)["nodes"]) == count, 60)
            names = _add_games(url, GAMES)
            port_of = {n.name: n.port for n in nodes}
            owner = {game: node["name"] for node in nodes_view(url)["nodes"] for game in node["games"]}
            players = [
                ScriptedPlayer(port_of[owner[name]], f"p{k}@{name}") for name in names for k in range(2)
            ]
            return asyncio.run(_measure(players, url, nodes))
    finally:
        for node in nodes:
            if PROFILE:
                node.terminate()
            else:
                node.kill()


async def _measure(players: list[ScriptedPlayer], url: str, nodes: list[MeasuredNode]) -> tuple[float, int]:
    stop, tasks = await _start(players)
    await asyncio.sleep(WARMUP_S)
    turns_before, cpu_before = _turns(url), sum(n.cpu_seconds() for n in nodes)
    await asyncio.sleep(WINDOW_S)
    cpu = sum(n.cpu_seconds() for n in nodes) - cpu_before
    turns = _turns(url) - turns_before
    stop.set()
    await asyncio.wait(tasks, timeout=60)
    return (cpu / turns if turns else float("inf")), turns


def main() -> None:
    bindir = pg_bin()
    if bindir is None:
        print("cluster_cpu: needs the PostgreSQL binaries (initdb, pg_ctl)")
        return
    postgres = OwnPostgres(bindir)
    try:
        postgres.start()
        print(f"cluster_cpu: {GAMES} games, 2 players each on the game's owner, {WINDOW_S:.0f} s window")
        figures = {}
        for count in (1, 2, 3):
            figures[count], turns = cpu_per_turn(postgres, count)
            print(
                f"  {count} node{'s' if count > 1 else ' '}: {figures[count] * 1000:6.1f} ms CPU per turn "
                f"(all nodes, {turns} turns)",
                flush=True,
            )
        spread = max(figures.values()) / min(figures.values()) - 1
        print(f"  spread: {spread * 100:.0f} % (goal: within 10 %)")
    finally:
        postgres.destroy()


if __name__ == "__main__":
    main()
