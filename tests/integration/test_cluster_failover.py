"""Twenty games on three nodes, played to the end by bots through one node, while one node is
killed (SIGKILL) in the middle of play and another stopped (SIGTERM).

Every bot (clients.bot) connects to node a only; the games run on all three nodes, so most
sessions are relayed. Node b is killed while turns are being played: its games are claimed by
a and c within the failover time and their interrupted turns run again; the relayed sessions
are carried over to the new owners on the same connections. Then node c stops and hands its
games to a. Every game reaches GAME OVER; every order a bot was told was accepted is in the
store; every stored game replays to the same states (server.game.replay.check_replay).
"""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest

from clients.blocking import BlockingClient
from clients.bot import Bot, BotResult
from clients.errors import ClientError
from protocol import Version
from server.database import SyncDatabase
from server.game.replay import check_replay
from server.model.store import GameSetup

from .test_cluster import NodeProcess, nodes_view, wait_until

pytestmark = pytest.mark.timeout(900)

SMALL_MAP = "..A....M..\n...MM.....\n.A..M..A..\n....MM....\n..A.....A.\n.....M....\n"
GAMES = 20
BOTS_PER_GAME = 2
DUMP = False  # True: keep every node's log in the test's tmp_path


class RecordingBot:
    """One bot playing through a BlockingClient, keeping every order it was told was accepted
    (turn it was given in, fleet, target)."""

    def __init__(self, game: str, name: str, port: int, barrier: threading.Barrier):
        self.game, self.name, self.port, self.barrier = game, name, port, barrier
        self.bot = Bot(name)
        self.accepted: list[tuple[int, int, int | None]] = []
        self.error: str | None = None

    WAIT_S = 120  # how long it waits for the other bots at the start, and for a next turn

    @property
    def result(self) -> BotResult:
        return self.bot.result

    def connect(self) -> BlockingClient:
        return BlockingClient.connect("127.0.0.1", self.port, version=Version.TP04, timeout=60)

    def run(self, deadline: float) -> None:
        client = None
        try:
            client = self.connect()
            client.login(f"{self.name}@{self.game}", "a-password", create=True)
            self.barrier.wait(timeout=self.WAIT_S)
            while time.monotonic() < deadline:
                report = client.run(self.bot.turn_plan(client.game), 60)
                for intent in report.accepted:
                    self.accepted.append((report.turn, intent.fleet, intent.target))
                if report.over:
                    return
                if client.game.turn != report.turn:
                    continue
                client.wait_for_next_turn(timeout=self.WAIT_S, poll_interval=2.0, update=False)
            self.error = "the deadline passed"
        except (ClientError, threading.BrokenBarrierError) as error:
            self.error = f"{type(error).__name__}: {error}"
        finally:
            if client is not None:
                client.close()


def turns_played(url: str) -> int:
    with SyncDatabase(url) as db:
        return sum(len(g.turns) for g in db.load_games(all_states=False))


def test_twenty_games_survive_a_killed_and_a_stopped_node(pg_url, tmp_path):
    with SyncDatabase(pg_url) as db:
        db.upgrade()
        for index in range(GAMES):
            db.create_game(GameSetup(f"g{index:02}", SMALL_MAP, seed=100 + index, description="cluster"))
    # Forty bots make or join accounts from 127.0.0.1: the per-address brake on new accounts
    # would refuse the eleventh on a node that runs many of the games (a loaded machine moves
    # more of them to the entry node).
    limits = ("--limit", "accounts_per_address=0")
    nodes = {name: NodeProcess(pg_url, name, *limits, cwd=tmp_path) for name in ("a", "b", "c")}
    bots: list[RecordingBot] = []
    try:
        for node in nodes.values():
            node.start(timeout=60)
        # The first node claims every game; the others, joining, are handed their share.
        wait_until(
            lambda: sorted(len(n["games"]) for n in nodes_view(pg_url)["nodes"]) == [6, 7, 7],
            60,
            "the games spread over three nodes",
        )
        entry = nodes["a"].port
        for index in range(GAMES):
            barrier = threading.Barrier(BOTS_PER_GAME)
            bots += [RecordingBot(f"g{index:02}", f"p{k}", entry, barrier) for k in range(BOTS_PER_GAME)]
        deadline = time.monotonic() + 600
        threads = [threading.Thread(target=bot.run, args=(deadline,), daemon=True) for bot in bots]
        for thread in threads:
            thread.start()

        # Kill node b while turns are being played; its games are claimed by a and c.
        wait_until(lambda: turns_played(pg_url) >= 2 * GAMES, 300, "two turns a game")
        b_games = set(next(n["games"] for n in nodes_view(pg_url)["nodes"] if n["name"] == "b"))
        killed_at = time.monotonic()
        nodes["b"].kill()
        wait_until(
            lambda: (
                all(
                    g not in n["games"]
                    for n in nodes_view(pg_url)["nodes"]
                    if n["name"] == "b"
                    for g in b_games
                )
                and not nodes_view(pg_url)["waiting"]
            ),
            10,
            "node b's games claimed by the others",
        )
        claimed_in = time.monotonic() - killed_at
        played = turns_played(pg_url)
        wait_until(lambda: turns_played(pg_url) > played + GAMES // 2, 120, "play goes on after the kill")

        # Stop node c: it hands its games to a, the only node left.
        assert nodes["c"].terminate(timeout=60) == 0, nodes["c"].stderr
        view = nodes_view(pg_url)
        assert [n["name"] for n in view["nodes"] if n["alive"]] == ["a"] and not view["waiting"]
        assert len(next(n["games"] for n in view["nodes"] if n["name"] == "a")) == GAMES

        for thread in threads:
            thread.join(max(1.0, deadline - time.monotonic()))
        report = "\n".join(
            f"{b.game} {b.name}: over={b.result.game_over} turn={b.result.turn} error={b.error}" for b in bots
        )
        assert all(b.error is None and b.result.game_over for b in bots), report + nodes["a"].lines[-1]
        assert claimed_in < 10, claimed_in
        # The node that stayed up logged no failure (a bug, or a session it could not carry over).
        failures = [e for e in nodes["a"].events if e.get("level") == "critical"]
        assert not failures, failures[:3]
    finally:
        for node in nodes.values():
            node.kill()
        if DUMP:
            for node in nodes.values():
                (tmp_path / f"{node.name}.log").write_text("".join(node.lines))

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
    for name, game in stored.items():
        if name == "tae":
            continue
        assert game.turns and game.turns[-1].state.phase.value == "over", name
        assert check_replay(game) == [], name
