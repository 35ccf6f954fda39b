"""How the bot fares against random orders, and how long a 4-bot game takes over TCP.

Run with ``python -m tests.benchmarks bot`` (or ``python -m tests.benchmarks.bench_bot
[--games N] [--players P] [--map FILE] [--skip-tcp]``). Figures:

1. ``--games`` (200) two-player games, the bot against one random-orders player
   (``ruleset.simulator.RandomPlayer``, the project's baseline), played in this process through
   the server's own code: ``server.game.game.Game`` on a ``MemoryStore`` and a ``task.Clock``, a
   ``server.tp.network.TPConnection`` per bot over an in-memory loopback (``LoopbackSocket``: the
   bot's ``BlockingClient`` writes bytes into the server connection and reads the bytes it
   wrote back). The bot sees only what the wire says; the random player gives its orders to the
   game service directly (the same checks as InsertOrder). The bot joins first in even games
   and second in odd ones, so the turn rotation (R12) favours neither. Printed: wins, shared
   wins, losses, games that did not end, mean final scores, games per second.
2. One game of four bots against a real server subprocess over TCP on 127.0.0.1 (default map,
   SQLite database in a temporary directory, ``--turn-length 0``): its wall time and turns.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport

from clients import BlockingClient, Version
from clients.blocking import BlockingConnection
from clients.bot import Bot, BotResult, run_bots
from clients.bot_view import Strategy
from clients.seat_frames import AiStrategy
from protocol import Connect
from ruleset import Phase, game_rng
from ruleset.simulator import RandomPlayer
from server.game import passwords as accounts
from server.game.directory import GameDirectory
from server.game.game import Game
from server.model.memory_store import MemoryStore
from server.model.refusals import Refused
from server.model.store import GameSetup
from server.model.timer_settings import TimerSettings
from server.tp.network import TPConnection
from tests.support.deferreds import successResultOf
from tests.support.servers import free_port

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_GAMES = 200
MAX_TURNS = 400


# ------------------------------------------------------------------------------------------
# An in-memory loopback between a BlockingClient and a server connection
# ------------------------------------------------------------------------------------------


class LoopbackSocket:
    """A socket stand-in: ``sendall`` feeds the server connection, ``recv`` returns what the
    server wrote. Everything the server does here is synchronous (MemoryStore, a Clock), so
    when ``recv`` finds nothing, nothing will come: it times out at once."""

    def __init__(self, directory: GameDirectory):
        self.transport = StringTransport()
        self.connection = TPConnection(directory)
        self.connection.makeConnection(self.transport)
        self.closed = False

    def sendall(self, data: bytes) -> None:
        if self.closed:
            raise OSError("closed")
        self.connection.dataReceived(data)

    def recv(self, size: int) -> bytes:
        data = self.transport.value()
        if not data:
            raise TimeoutError("nothing more from the server")
        self.transport.clear()
        if len(data) > size:
            self.transport.write(data[size:])
            data = data[:size]
        return data

    def settimeout(self, timeout) -> None:
        pass

    def setsockopt(self, *args) -> None:
        pass

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.connection.connectionLost(None)


def loopback_client(directory: GameDirectory, version: Version = Version.TP04) -> BlockingClient:
    """A connected ``BlockingClient`` (Connect done) to an in-process server."""
    connection = BlockingConnection(LoopbackSocket(directory), version, timeout=5.0)
    connection.request(Connect("bench-bot"))
    return BlockingClient(connection)


def make_game(seed: int, map_text: str | None = None, name: str = "tae") -> tuple[GameDirectory, Game]:
    store = MemoryStore()
    setup = GameSetup(
        name, map_text=map_text, seed=seed, timer=TimerSettings(turn_length=0), ctime=1_700_000_000
    )
    game_id = store.create_game(setup)
    game = Game(game_id, setup, Game.initial_state(setup), store, Clock())
    directory = GameDirectory()
    directory.add(game)
    game.start()
    return directory, game


# ------------------------------------------------------------------------------------------
# One in-process game: bots over the loopback, random players on the game service
# ------------------------------------------------------------------------------------------


@dataclass
class InProcessGame:
    seed: int
    ended: bool
    turns: int
    bots: dict[int, BotResult]  # player id -> the bot's own account of it
    final: dict[int, int] = field(default_factory=dict)  # player id -> final score (server)
    winners: tuple[int, ...] = ()
    kinds: dict[int, str] = field(default_factory=dict)  # player id -> "bot" / "random"
    clients: dict[int, tuple[Bot, BlockingClient]] = field(default_factory=dict)  # keep_clients


def play_in_process(
    seed: int,
    seats: list[str],
    *,
    map_text: str | None = None,
    version: Version = Version.TP04,
    max_turns: int = MAX_TURNS,
    strategy: Callable[[], Strategy] | None = None,
    random_player: RandomPlayer | None = None,
    keep_clients: bool = False,
) -> InProcessGame:
    """Play one game; ``seats`` lists "bot" or "random" in joining order (player 1 first)."""
    directory, game = make_game(seed, map_text)
    random_player = random_player or RandomPlayer()
    joined: list[tuple[Bot, BlockingClient]] = []
    randoms: list[int] = []
    for index, seat in enumerate(seats):
        name = f"{seat}{index + 1}"
        if seat == "bot":
            client = loopback_client(directory, version)
            client.login(name, "bench-password", create=True)
            joined.append((Bot(name, (strategy or AiStrategy)()), client))
        else:
            randoms.append(successResultOf(game.create_account(name, "bench-password")))
    bots = {game.player_id(bot.name): (bot, client) for bot, client in joined}
    while game.state.phase is not Phase.OVER and game.state.turn < max_turns:
        turn = game.state.turn
        state = game.state
        acting = set(game.acting_players())
        for pid in randoms:
            if pid in acting and pid not in game.finished:
                rng = game_rng(seed, turn + 1, f"player {pid}")
                for order in random_player(state, pid, rng):
                    # a random order may be refused (Refused): the player just goes on
                    game.insert_order(pid, order.fleet, -1, order.type, order.target).addErrback(
                        lambda failure: failure.trap(Refused)
                    )
                game.finish_turn(pid)
        if game.state.turn != turn:
            continue
        for bot, client in bots.values():
            if game.state.turn != turn:
                break
            client.run(bot.turn_plan(client.game))
        if game.state.turn == turn:
            raise RuntimeError(f"turn {turn} did not end (seed {seed})")
    for bot, client in bots.values():  # every bot reads the GAME OVER message
        if game.state.phase is Phase.OVER:
            client.run(bot.turn_plan(client.game))
        if not keep_clients:
            client.close()
    result = game.state.result
    return InProcessGame(
        seed=seed,
        ended=game.state.phase is Phase.OVER,
        turns=game.state.turn,
        bots={pid: bot.result for pid, (bot, _c) in bots.items()},
        final=dict(result.final) if result else {},
        winners=result.winners if result else (),
        kinds={pid: ("bot" if pid in bots else "random") for pid in range(1, len(seats) + 1)},
        clients=bots if keep_clients else {},
    )


@contextlib.contextmanager
def cheap_passwords():
    """Account creation hashes passwords with scrypt (~30 ms): not what is measured here. The
    cost of new hashes is made cheap while the block runs (accounts stay verifiable)."""
    original = accounts.SCRYPT_N
    accounts.SCRYPT_N = 2
    try:
        yield
    finally:
        accounts.SCRYPT_N = original


# ------------------------------------------------------------------------------------------
# The figures
# ------------------------------------------------------------------------------------------


def bot_vs_random(
    games: int,
    players: int = 2,
    map_text: str | None = None,
    version: Version = Version.TP04,
    quiet: bool = False,
) -> dict:
    with cheap_passwords():
        return _bot_vs_random(games, players, map_text, version, quiet)


def _bot_vs_random(games: int, players: int, map_text: str | None, version: Version, quiet: bool) -> dict:
    wins = shared = losses = unfinished = 0
    bot_scores, random_scores, turns = [], [], []
    refused = 0
    start = time.perf_counter()
    for seed in range(games):
        seats = ["random"] * (players - 1)
        seats.insert(seed % players, "bot")
        outcome = play_in_process(seed, seats, map_text=map_text, version=version)
        refused += sum(r.orders_refused for r in outcome.bots.values())
        if not outcome.ended:
            unfinished += 1
            continue
        (bot_id,) = [pid for pid, kind in outcome.kinds.items() if kind == "bot"]
        turns.append(outcome.turns)
        bot_scores.append(outcome.final[bot_id])
        random_scores.extend(s for pid, s in outcome.final.items() if pid != bot_id)
        assert outcome.bots[bot_id].final_score == outcome.final[bot_id], "the bot misread GAME OVER"
        if bot_id in outcome.winners:
            if len(outcome.winners) > 1:
                shared += 1
            else:
                wins += 1
        else:
            losses += 1
    elapsed = time.perf_counter() - start
    mean = lambda xs: sum(xs) / len(xs) if xs else float("nan")  # noqa: E731
    figures = dict(
        games=games,
        players=players,
        wins=wins,
        shared=shared,
        losses=losses,
        unfinished=unfinished,
        bot_mean=mean(bot_scores),
        random_mean=mean(random_scores),
        turns_mean=mean(turns),
        refused=refused,
        seconds=elapsed,
    )
    if not quiet:
        finished = games - unfinished
        board = "default map" if map_text is None else "custom map"
        print(
            f"bot vs random-orders player: {games} games of {players} players "
            f"(1 bot, {players - 1} random; {board}; in-process server, loopback wire)"
        )
        print(f"  bot wins      {wins:4d}  ({100 * wins / max(finished, 1):5.1f} % of finished games)")
        print(f"  shared wins   {shared:4d}")
        print(f"  bot losses    {losses:4d}")
        print(f"  did not end   {unfinished:4d}")
        print(
            f"  mean final score: bot {figures['bot_mean']:.2f}, random {figures['random_mean']:.2f}; "
            f"mean game length {figures['turns_mean']:.1f} turns; orders refused {refused}"
        )
        print(f"  {elapsed:.1f} s, {games / elapsed:.2f} games/s")
    return figures


def start_server(directory: Path, port: int, map_path: Path | None = None, seed: int = 1) -> subprocess.Popen:
    command = [
        sys.executable,
        "-m",
        "server.cli",
        "serve",
        "--listen",
        f"tcp:{port}:interface=127.0.0.1",
        "--turn-length",
        "0",
        "--seed",
        str(seed),
        "--database",
        f"sqlite:///{directory / 'bench.db'}",
    ]
    if map_path is not None:
        command += ["--map", str(map_path)]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    process = subprocess.Popen(
        command, cwd=directory, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise RuntimeError("the server did not start") from None
            time.sleep(0.05)


def tcp_game(version: Version = Version.TP04, map_path: Path | None = None) -> tuple[float, list[BotResult]]:
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        process = start_server(Path(tmp), port, map_path)
        try:
            start = time.perf_counter()
            results = run_bots(
                "127.0.0.1",
                port,
                ["ann", "bob", "cid", "dee"],
                "bench-password",
                version,
                timeout=30,
                turn_timeout=60,
                deadline=600,
            )
            return time.perf_counter() - start, results
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bench_bot")
    parser.add_argument("--games", type=int, default=DEFAULT_GAMES)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--map", type=Path, default=None)
    parser.add_argument("--skip-tcp", action="store_true")
    args = parser.parse_args(argv if argv is not None else [])
    map_text = args.map.read_text() if args.map else None
    bot_vs_random(args.games, args.players, map_text)
    if not args.skip_tcp:
        elapsed, results = tcp_game(map_path=args.map)
        ok = all(r.ok for r in results)
        turns = max((r.turn or 0) for r in results)
        finals = ", ".join(f"{r.name} {r.final_score}" for r in results)
        board = "default map" if args.map is None else args.map.name
        print(
            f"4-bot game over TCP (TP04, {board}, server subprocess, SQLite): "
            f"{elapsed:.1f} s, {turns} turns, {'all reached GAME OVER' if ok else 'NOT all ended'}"
            f"; final scores {finals}"
        )
        if not ok:
            for r in results:
                if r.error:
                    print(f"  {r.name}: {r.error}")


if __name__ == "__main__":
    main(sys.argv[1:])
