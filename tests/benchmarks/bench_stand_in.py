"""What the stand-in costs, and how it plays.

Run with ``python -m tests.benchmarks stand_in`` (or ``python -m tests.benchmarks.bench_stand_in
[--games N]``). Figures:

1. The stand-in's decision for one seat and turn (``seat_view`` + ``stand_in_orders``) on the
   default map, over the normal turns of ``--games`` (20) four-player games of random players:
   median and 99th percentile, in milliseconds.
2. The end of a turn in the game service (``server.game.game.Game`` on a ``MemoryStore`` and a
   ``task.Clock``) with four players of whom three are absent, so the stand-in plays three seats
   and its orders are checked, stored and queued like anyone's: median time from the last
   finish to the next turn, against the same game with nobody absent (and no orders: the
   difference is what the stand-in adds to the end of a turn).
3. How it plays: one stand-in against three random players (``ruleset.simulator.RandomPlayer``)
   over ``--games`` games: its mean final score against theirs, and how often it wins.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from twisted.internet.task import Clock

from ruleset import DEFAULT_BOARD, Phase
from ruleset.simulator import GameDidNotEnd, RandomPlayer, play_game
from ruleset.stand_in import seat_view, stand_in_orders, stand_in_rng
from server.game.game import Game
from server.game.stand_in import StandInPlayer
from server.model.memory_store import MemoryStore
from server.model.store import GameSetup
from server.model.timer_settings import TimerSettings


def decision_times(games: int) -> list[float]:
    times: list[float] = []

    def observe(state, orders, outcome) -> None:
        if state.phase is not Phase.NORMAL:
            return
        for player in state.players:
            started = time.perf_counter()
            stand_in_orders(seat_view(state, player.id), stand_in_rng(state.seed, state.turn + 1, player.id))
            times.append(time.perf_counter() - started)

    for seed in range(games):
        try:
            play_game(4, DEFAULT_BOARD, seed, observer=observe)
        except GameDidNotEnd:
            pass
    return times


def turn_end_times(absent: int, turns: int = 15, stand_in: StandInPlayer | None = None) -> list[float]:
    """Seconds from the last finish of a turn to the next turn, with `absent` seats resigned
    (played by `stand_in`, or by the game's own stand-in)."""
    clock = Clock()
    store = MemoryStore()
    setup = GameSetup("bench", seed=3, timer=TimerSettings(turn_length=0))
    game = Game(store.create_game(setup), setup, setup.initial_state(), store, clock)
    if stand_in is not None:
        game.stand_in = stand_in
    for name in ("ann", "bob", "cyd", "dee"):
        game.create_account(name, "secret-password")
    for player in range(2, 2 + absent):
        game.resign(player)
    times = []
    for _ in range(turns):
        if game.snapshot.over:
            break
        turn = game.state.turn
        acting = list(game.snapshot.acting_players())
        if not acting:
            clock.advance(0)
            continue
        if stand_in is not None:
            # The turn lasts until the searches that started when it opened are done.
            while stand_in.searching():
                time.sleep(0.01)
        *first, last = acting
        for player in first:
            game.finish_turn(player)
        started = time.perf_counter()
        game.finish_turn(last)
        clock.advance(0)
        if game.state.turn > turn:
            times.append(time.perf_counter() - started)
    return times


def against_random(games: int) -> tuple[float, float, int]:
    random_player = RandomPlayer()
    mine: list[int] = []
    theirs: list[int] = []
    wins = 0

    def strategy(state, player, rng):
        if player == 1:
            return list(stand_in_orders(seat_view(state, 1), stand_in_rng(state.seed, state.turn + 1, 1)))
        return random_player(state, player, rng)

    for seed in range(games):
        try:
            record = play_game(4, DEFAULT_BOARD, seed, strategies=strategy)
        except GameDidNotEnd:
            continue
        result = record.state.result
        assert result is not None
        mine.append(result.final[1])
        theirs.extend(result.final[p] for p in (2, 3, 4))
        wins += 1 in result.winners
    return statistics.mean(mine), statistics.mean(theirs), wins


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bench_stand_in", description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    args = parser.parse_args(argv if argv is not None else [])
    times = sorted(decision_times(args.games))
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    print(
        f"stand-in decision, default map: median {statistics.median(times) * 1000:.2f} ms, "
        f"p99 {p99 * 1000:.2f} ms over {len(times)} seat-turns"
    )
    plain = statistics.median(turn_end_times(0))
    three = statistics.median(turn_end_times(3))
    print(
        f"end of turn in the game service: {plain * 1000:.2f} ms with nobody absent, "
        f"{three * 1000:.2f} ms with the stand-in playing 3 of 4 seats (median)"
    )
    mine, theirs, wins = against_random(args.games)
    print(
        f"stand-in vs 3 random players, {args.games} games: mean final score {mine:.2f} "
        f"(random players {theirs:.2f}), {wins} wins"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
