"""Failover is transparent to clients that never retry (issue 23, item 5): whole games played
by unmodified bots (clients.bot over clients.blocking) in strict mode, every one connected to a
node that does not run its game, while the node that does is killed (SIGKILL) in the middle of
play; then, the games still being played, one is handed over (`move-game`) from the node the
clients are connected to, and the other node is stopped (SIGTERM) and hands its games over.

Strict mode is a test-side wrapper (`StrictSession`): every Fail the server answers, to a read
or to a write, item of a list answer or whole answer, is recorded, and the test fails on any;
the library's own waits-and-retries for "try again shortly" are turned off, as a client that
never retries would have none. So every request in flight when the owner dies must be held by
the relaying node, carried to the game's new owner and answered as if nothing had happened:
reads sent again, a write whose outcome was unknown looked up in the change records (stored:
answered as the owner would have; not stored: sent again). Every bot reaches GAME OVER, every
order a bot was told was accepted is stored, every stored game equals its replay.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import clients.blocking
from clients.blocking import BlockingClient, BlockingConnection
from clients.session import ClientSession
from protocol import Connect, Fail, Version
from server.database import SyncDatabase
from server.game.replay import check_replay
from server.model.store import GameSetup

from .test_cluster import NodeProcess, nodes_view, owner_of, tae_server, wait_until
from .test_cluster_failover import SMALL_MAP, RecordingBot, turns_played

pytestmark = pytest.mark.timeout(300)

GAMES = 6  # on three nodes: two run on the node that is killed
BOTS_PER_GAME = 2
# A killed node's games are claimed at the next claim round (its lock is free at once): a short
# poll_interval keeps the test short. failover_timeout keeps its default: half of it is how
# long a relay waits for an owner's answer before it gives the owner up and looks again.
CONFIG = "[cluster]\npoll_interval = 0.5\n"
DUMP = False  # True: keep every node's log in the test's tmp_path


class StrictSession(ClientSession):
    """A client session that keeps every Fail it is answered, as (request, code, text)."""

    def __init__(self, version: Version, fails: list[tuple[str, int, str]]):
        super().__init__(version)
        self.fails = fails

    def _finish(self, request, error, reply=None):
        for item in request.items:
            if isinstance(item, Fail):
                self.fails.append((type(request.message).__name__, int(item.code), item.message))
        return super()._finish(request, error, reply)


def strict_client(port: int, fails: list[tuple[str, int, str]]) -> BlockingClient:
    connection = BlockingConnection.open("127.0.0.1", port, version=Version.TP04, timeout=60)
    connection.session = StrictSession(Version.TP04, fails)
    connection.request(Connect(clients.blocking.CLIENT_STRING))
    return BlockingClient(connection)


class StrictBot(RecordingBot):
    """A `RecordingBot` in strict mode, also keeping every Fail it was answered."""

    WAIT_S = 60

    def __init__(self, game: str, name: str, port: int, barrier: threading.Barrier):
        super().__init__(game, name, port, barrier)
        self.fails: list[tuple[str, int, str]] = []

    def connect(self) -> BlockingClient:
        return strict_client(self.port, self.fails)


def games_of(url: str, node: str) -> list[str]:
    return next((n["games"] for n in nodes_view(url)["nodes"] if n["name"] == node and n["alive"]), [])


def test_strict_clients_play_through_a_killed_owner_without_a_fail(pg_url, tmp_path, monkeypatch):
    # Unmodified clients never retry: no second chance for a Fail "try again shortly".
    monkeypatch.setattr(clients.blocking, "SHORTLY_RETRY_DELAYS", ())
    monkeypatch.setattr(clients.blocking, "LOGIN_RETRY_DELAYS", ())
    with SyncDatabase(pg_url) as db:
        db.upgrade()
        for index in range(GAMES):
            db.create_game(GameSetup(f"s{index}", SMALL_MAP, seed=300 + index, description="strict"))
    config = Path(tmp_path) / "cluster.toml"
    config.write_text(CONFIG)
    args = ("--config", str(config), "--limit", "accounts_per_address=0")
    nodes = {name: NodeProcess(pg_url, name, *args, cwd=tmp_path) for name in ("a", "b", "c")}
    bots: list[StrictBot] = []
    started = time.monotonic()
    try:
        with ThreadPoolExecutor(len(nodes)) as starting:  # side by side: each takes seconds
            for started_node in [starting.submit(node.start, 60) for node in nodes.values()]:
                started_node.result()
        phases = {"nodes started": time.monotonic() - started}
        wait_until(
            lambda: sorted(len(n["games"]) for n in nodes_view(pg_url)["nodes"]) == [2, 2, 2],
            60,
            "the games spread over three nodes",
        )
        doomed = games_of(pg_url, "b")
        entry = nodes["a"].port  # every client on node a; their games run on b: relayed
        for game in doomed:
            barrier = threading.Barrier(BOTS_PER_GAME)
            bots += [StrictBot(game, f"p{k}", entry, barrier) for k in range(BOTS_PER_GAME)]
        deadline = time.monotonic() + 200
        threads = [threading.Thread(target=bot.run, args=(deadline,), daemon=True) for bot in bots]
        for thread in threads:
            thread.start()

        # Kill b while its games' turns are being played (requests in flight at that moment).
        wait_until(lambda: turns_played(pg_url) >= 2 * len(doomed), 120, "two turns a game")
        assert sorted(games_of(pg_url, "b")) == sorted(doomed)
        killed_at = time.monotonic()
        phases["b killed"] = killed_at - started
        nodes["b"].kill()
        wait_until(
            lambda: not nodes_view(pg_url)["waiting"] and not games_of(pg_url, "b"), 20, "games claimed"
        )
        claimed_in = time.monotonic() - killed_at

        # Hand a game over gracefully from node a, where its clients are (local sessions), to
        # c; then stop c, which hands its games to a (sessions relayed to c come home).
        wait_until(lambda: turns_played(pg_url) >= 8 * len(doomed), 60, "play goes on after the kill")
        local = next((g for g in doomed if owner_of(pg_url, g) == "a"), doomed[0])
        if owner_of(pg_url, local) == "a":
            phases["move-game"] = time.monotonic() - started
            moved = tae_server("move-game", local, "c", "--database", pg_url)
            assert moved.returncode == 0, moved.stderr
        wait_until(lambda: turns_played(pg_url) >= 12 * len(doomed), 60, "play goes on after the move")
        phases["c stopped"] = time.monotonic() - started
        assert nodes["c"].terminate(timeout=60) == 0, nodes["c"].stderr

        for thread in threads:
            thread.join(max(1.0, deadline - time.monotonic()))
        phases["games over"] = time.monotonic() - started
        report = "\n".join(
            f"{b.game} {b.name}: over={b.bot.result.game_over} turn={b.bot.result.turn} "
            f"error={b.error} fails={b.fails}"
            for b in bots
        )
        assert all(b.error is None and b.bot.result.game_over for b in bots), report
        assert not any(b.fails for b in bots), report
        failures = [
            e for name in ("a", "c") for e in nodes[name].events if e.get("level") in ("critical", "error")
        ]
        assert not failures, failures[:3]
    finally:
        for node in nodes.values():
            node.kill()
        if DUMP:
            for node in nodes.values():
                (tmp_path / f"{node.name}.log").write_text("".join(node.lines))
    timings = ", ".join(f"{what} at {when:.1f} s" for what, when in phases.items())
    print(f"\n{timings}; claimed {claimed_in:.1f} s after the kill")

    with SyncDatabase(pg_url) as db:
        stored = {g.setup.name: g for g in db.load_games(all_states=True)}
    for bot in bots:
        game = stored[bot.game]
        player = next(a.player_id for a in game.accounts if a.username == bot.name)
        orders = Counter(
            (e.object_id, e.target)
            for e in game.orders
            if e.player == player and e.seq not in game.removed_orders
        )
        for turn, fleet, target in bot.accepted:
            key = (fleet, target if target is not None else 0)
            assert orders[key] > 0, f"{bot.game} {bot.name}: the order {key} of turn {turn} is not stored"
            orders[key] -= 1
    for name in doomed:
        game = stored[name]
        assert game.turns and game.turns[-1].state.phase.value == "over", name
        assert check_replay(game) == [], name
