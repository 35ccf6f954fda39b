"""Restarts and crashes of a real `tae-server serve` process, over TCP.

* SIGKILL at many points of play: while orders are being stored, right after the last player's
  FinishedTurn (the turn being resolved and committed), between requests. After every restart:
  every order the server acknowledged is in the order log (and, for the open turn, in its
  queue), nothing it did not acknowledge is there, no acknowledged turn is lost, the stored
  game equals its replay from setup and order log, and play goes on to later turns.
* SIGTERM: a clean stop (exit 0) keeps queued orders, finished players and the turn deadline.
* The same against PostgreSQL when TAE_TEST_DATABASE_URL is set (a schema of its own).
"""

from __future__ import annotations

import random
import signal
import time
from collections import Counter

import pytest
from twisted.internet.task import Clock

import protocol as tp
from ruleset import Phase, game_rng
from ruleset.simulator import RandomPlayer
from server.database import SyncDatabase
from server.game.game import Game
from server.game.replay import check_replay

from .server_process import ServerProcess
from .tp_client import TPClient

pytestmark = pytest.mark.timeout(180)

PLAYERS = ("alice", "bob", "carol")
PASSWORD = "secret"


class Killed(Exception):
    """The test killed the server at this point."""


class Ledger:
    """What the server told the players, as (player, object, type, target, turn) of orders."""

    def __init__(self):
        self.acked: Counter = Counter()
        self.unknown: Counter = Counter()  # sent, answer not seen: may or may not be stored
        self.refused = 0
        self.acked_turn = 0  # the last turn whose end a player was told about


def stored_game(url: str):
    with SyncDatabase(url) as db:
        games = db.load_games()
    assert len(games) == 1
    return games[0]


def check_database(url: str, ledger: Ledger):
    """The invariants that must hold whenever the server (re)starts; returns the stored game."""
    stored = stored_game(url)
    log = Counter()
    for entry in stored.orders:
        if entry.seq not in stored.removed_orders:
            log[(entry.player, entry.object_id, entry.type, entry.target, entry.turn)] += 1
    missing = ledger.acked - log
    assert not missing, f"acknowledged orders lost: {missing}"
    junk = log - ledger.acked - ledger.unknown
    assert not junk, f"orders stored that were never acknowledged nor in flight: {junk}"
    last = stored.turns[-1].turn if stored.turns else 0
    assert last >= ledger.acked_turn, f"turn {ledger.acked_turn} was announced but only {last} is stored"
    assert check_replay(stored) == []
    assert {a.username for a in stored.accounts} == set(PLAYERS)
    return stored


class Player:
    def __init__(self, name: str, port: int):
        self.name = name
        self.client = TPClient(port, timeout=30)
        self.client.connect()

    def close(self):
        self.client.close()


def play(url: str, tmp_path, cycles: int, seed: int, min_turns: int) -> None:
    rng = random.Random(seed)
    ledger = Ledger()
    server = ServerProcess(url, "--turn-length", "0")
    randomly = RandomPlayer()
    kills = Counter()
    turn = 0
    try:
        for cycle in range(cycles + 1):
            port = server.start()
            players = {name: Player(name, port) for name in PLAYERS}
            try:
                for pid, (name, player) in enumerate(players.items(), start=1):
                    if cycle == 0:
                        assert isinstance(player.client.create_account(f"{name}@tae", PASSWORD), tp.Okay)
                    player.client.login(f"{name}@tae", PASSWORD)
                    player.pid = pid
                # (a turn interrupted by the last kill may be resolved again at start: once
                # logged in, a request waits for that, and the database holds the result)
                turn = players["alice"].client.time_remaining().turn
                if cycle:
                    stored = check_database(url, ledger)
                    assert turn == (stored.turns[-1].turn if stored.turns else 0)
                    if turn > ledger.acked_turn:
                        kills["turn stored though unannounced"] += 1
                    check_queues(players, stored, ledger, turn)
                last_cycle = cycle == cycles
                # where to kill: after the n-th request of this cycle, or just after the last
                # FinishedTurn of its first turn (while that turn is resolved and stored)
                mode = "never" if last_cycle else ("request", "resolve", "request")[cycle % 3]
                kill_at = rng.randint(1, 30)
                sent = 0
                for _ in range(3 if last_cycle else 2):
                    state = current_state(url)
                    if state.phase is Phase.OVER:
                        break
                    assert state.turn == turn
                    for name, player in players.items():
                        orders = randomly(state, player.pid, game_rng(seed, turn + 1, f"{cycle} {name}"))
                        for order in orders:
                            key = (player.pid, order.fleet, int(order.type), order.target, turn + 1)
                            message = player.client.insert_order(order.fleet, int(order.type), order.target)
                            sent += 1
                            if mode == "request" and sent == kill_at:
                                ledger.unknown[key] += 1
                                kill_soon(server, player, message, rng)
                            reply = player.client.one(message)
                            if isinstance(reply, tp.Order):
                                ledger.acked[key] += 1
                            else:
                                assert isinstance(reply, tp.Fail), reply
                                ledger.refused += 1
                    names = list(players)
                    for i, name in enumerate(names):
                        client = players[name].client
                        sent += 1
                        last = i == len(names) - 1
                        if (mode == "request" and sent == kill_at) or (mode == "resolve" and last):
                            kill_soon(server, players[name], tp.FinishedTurn(), rng)
                        if not last:
                            assert isinstance(client.one(tp.FinishedTurn()), tp.Okay)
                    # the last player's Okay comes once the turn is stored
                    assert isinstance(players[names[-1]].client.one(tp.FinishedTurn()), tp.Okay)
                    turn += 1
                    ledger.acked_turn = turn
                    assert players["alice"].client.time_remaining().turn == turn
                if last_cycle:
                    server.terminate()
                    break
                kills["between requests"] += 1
                server.kill()  # no kill point was reached: kill between requests
            except Killed as killed:
                kills[str(killed)] += 1
            finally:
                for player in players.values():
                    player.close()
                server.kill()
        stored = check_database(url, ledger)
        assert server.process.returncode == 0, server.stderr
        final_turn = stored.turns[-1].turn if stored.turns else 0
        print(
            "KILLS",
            dict(kills),
            "turn",
            final_turn,
            "acked",
            sum(ledger.acked.values()),
            "unknown",
            sum(ledger.unknown.values()),
            "refused",
            ledger.refused,
        )
        assert final_turn >= min_turns, (final_turn, kills)
        assert kills["InsertOrder"] + kills["FinishedTurn"] + kills["between requests"] >= cycles, kills
        assert kills["FinishedTurn"] >= 1 and kills["InsertOrder"] >= 1, kills
        assert ledger.acked and ledger.refused >= 0
    finally:
        server.kill()


def kill_soon(server: ServerProcess, player: Player, message, rng: random.Random) -> None:
    """Send `message` (no waiting for its answer), give the server a few milliseconds, SIGKILL."""
    player.client.send(message)
    time.sleep(rng.choice([0, 0.001, 0.003, 0.01, 0.03]))
    server.kill()
    raise Killed(type(message).__name__)


def current_state(url: str):
    stored = stored_game(url)
    return Game.restore(stored, None, Clock()).state


def check_queues(players: dict, stored, ledger: Ledger, turn: int) -> None:
    """Acknowledged orders of the open turn are in the queues the server shows their owners."""
    expected: dict[tuple[int, int], Counter] = {}
    for entry in stored.orders:
        if entry.turn == turn + 1 and entry.seq not in stored.removed_orders:
            expected.setdefault((entry.player, entry.object_id), Counter())[(entry.type, entry.target)] += 1
    for (pid, object_id, order_type, target, order_turn), count in ledger.acked.items():
        if order_turn == turn + 1:
            assert expected.get((pid, object_id), Counter())[(order_type, target)] >= count
    by_pid = {player.pid: player for player in players.values()}
    for (pid, object_id), orders in expected.items():
        shown = Counter(by_pid[pid].client.queue(object_id))
        assert shown == orders, (object_id, shown, orders)


def test_sigkill_at_many_points_loses_nothing_acknowledged(sqlite_url, tmp_path):
    play(sqlite_url, tmp_path, cycles=10, seed=20250101, min_turns=6)


def test_sigkill_with_postgresql(pg_url, tmp_path):
    play(pg_url, tmp_path, cycles=5, seed=7, min_turns=3)


# -- clean stops -----------------------------------------------------------------------------


def login_all(port: int, create: bool) -> dict[str, TPClient]:
    clients = {}
    for name in PLAYERS[:2]:
        client = TPClient(port)
        client.connect()
        if create:
            assert isinstance(client.create_account(f"{name}@tae", PASSWORD), tp.Okay)
        client.login(f"{name}@tae", PASSWORD)
        clients[name] = client
    return clients


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_clean_stop_keeps_orders_finished_players_and_the_deadline(sqlite_url, tmp_path, sig):
    server = ServerProcess(sqlite_url, "--timer", "basic", "--turn-length", "120")
    try:
        port = server.start()
        clients = login_all(port, create=True)
        first = clients["alice"].time_remaining()
        assert 110 <= first.time <= 120 and first.turn == 0
        state = current_state(sqlite_url)
        order = RandomPlayer()(state, 1, game_rng(1, 1, "x"))[0]
        reply = clients["alice"].one(
            clients["alice"].insert_order(order.fleet, int(order.type), order.target)
        )
        assert isinstance(reply, tp.Order)
        assert isinstance(clients["bob"].one(tp.FinishedTurn()), tp.Okay)
        time.sleep(1.2)
        for client in clients.values():
            client.close()
        assert server.terminate(sig) == 0, server.stderr
        assert server.stderr.strip() == ""
        assert any(e.get("message") == "server stopped" for e in server.events)

        port = server.start()
        clients = login_all(port, create=False)
        again = clients["alice"].time_remaining()
        assert again.turn == 0
        assert again.time < first.time, "the restart made the turn longer"
        assert again.waiting == (1,), "bob had finished the turn"
        assert clients["alice"].queue(order.fleet) == [(int(order.type), order.target)]
        for client in clients.values():
            client.close()
        assert server.terminate() == 0
    finally:
        server.kill()


def test_sigterm_during_the_end_of_a_turn_stores_it_or_leaves_it_open(sqlite_url, tmp_path):
    server = ServerProcess(sqlite_url, "--turn-length", "0")
    try:
        port = server.start()
        clients = login_all(port, create=True)
        assert isinstance(clients["alice"].one(tp.FinishedTurn()), tp.Okay)
        clients["bob"].send(tp.FinishedTurn())
        time.sleep(0.005)
        assert server.terminate() == 0, server.stderr
        for client in clients.values():
            client.close()
        stored = stored_game(sqlite_url)
        port = server.start()
        clients = login_all(port, create=False)
        remaining = clients["alice"].time_remaining()
        if stored.turns:
            assert remaining.turn == 1  # the stop waited for the turn to be stored
        else:
            # the FinishedTurn was never read: alice's finish is kept, bob must finish again
            assert remaining.turn == 0 and remaining.waiting == (2,)
        for client in clients.values():
            client.close()
        assert server.terminate() == 0
    finally:
        server.kill()
