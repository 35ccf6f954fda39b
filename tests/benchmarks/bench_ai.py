"""The computer player's cost: time per decision at each level, and a hard stand-in's share of
an end of turn.

    python -m tests.benchmarks ai        (or python -m tests.benchmarks.bench_ai [--games N])

1. Time per decision (`ruleset.ai.decide` on the seat's view) for `easy`, `normal` and `hard` at
   its default budget (100 playouts) and at 200, on the default map, over positions taken every
   third turn of ``--games`` (6) four-player games of `normal` players: median, 95th percentile,
   worst. `hard` runs as it plays, with its time bound (`DEFAULT_SECONDS`, 0.9 s: then its best
   so far); the count of decisions the bound cut short is printed.
2. The end of a turn in the game service (``server.game.game.Game``, a ``MemoryStore``, a
   ``task.Clock``) with four players of whom three are absent and the stand-in plays at `hard`:
   its searches start when the turn opens (in a process pool), the benchmark lets the turn last
   until they are done (a turn lasts minutes), then times the last finish to the next turn,
   against the same game with nobody absent. The goal: the hard stand-in adds ≤ 5 ms.

How well each level plays is the tournament's (`python -m ruleset.tournament`).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor

from ruleset import DEFAULT_BOARD
from ruleset.ai import DEFAULT_ITERATIONS, DEFAULT_SECONDS, Level, ai_rng, decide, stop_after
from ruleset.seat import seat_view
from ruleset.simulator import GameDidNotEnd, play_game
from server.game.stand_in import StandInPlayer
from server.model.stand_in import StandInSettings
from tests.benchmarks.bench_stand_in import turn_end_times

CASES = (
    ("easy", Level.EASY, 0),
    ("normal", Level.NORMAL, 0),
    (f"hard {DEFAULT_ITERATIONS}", Level.HARD, DEFAULT_ITERATIONS),
    ("hard 200", Level.HARD, 200),
)


def positions(games: int) -> list:
    found = []

    def normal(state, player, rng):
        return list(decide(seat_view(state, player), Level.NORMAL, rng))

    def observe(state, orders, outcome) -> None:
        if state.turn % 3 == 0:
            found.append(state)

    for seed in range(games):
        try:
            play_game(4, DEFAULT_BOARD, seed, normal, observer=observe)
        except GameDidNotEnd:
            pass
    return found


def decision_times(games: int) -> None:
    states = positions(games)
    for label, level, budget in CASES:
        times = []
        bounded = 0
        for state in states:
            player = 1 + state.turn % len(state.players)
            seat = seat_view(state, player)
            started = time.perf_counter()
            stopped = [False]
            bound = stop_after(DEFAULT_SECONDS, time.perf_counter)

            def should_stop(bound=bound, stopped=stopped) -> bool:
                stopped[0] = stopped[0] or bound()
                return stopped[0]

            rng = ai_rng(state.seed, state.turn + 1, player)
            decide(seat, level, rng, budget=budget or DEFAULT_ITERATIONS, should_stop=should_stop)
            times.append(time.perf_counter() - started)
            bounded += stopped[0]
        times.sort()
        p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
        cut = f", {bounded} cut short by the {DEFAULT_SECONDS:g} s bound" if level is Level.HARD else ""
        print(
            f"{label:9} decision: median {statistics.median(times) * 1000:8.2f} ms, "
            f"p95 {p95 * 1000:8.2f} ms, worst {times[-1] * 1000:8.2f} ms ({len(times)} positions{cut})"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bench_ai", description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=6)
    args = parser.parse_args(argv if argv is not None else [])
    decision_times(args.games)
    plain = statistics.median(turn_end_times(0, turns=12))
    with ProcessPoolExecutor(2) as pool:
        hard = StandInPlayer(
            StandInSettings(Level.HARD, hard_budget=DEFAULT_ITERATIONS, hard_wait=2.0),
            executor=pool,
            call_from_thread=lambda f, *a: f(*a),
        )
        three = statistics.median(turn_end_times(3, turns=12, stand_in=hard))
    print(
        f"end of turn in the game service: {plain * 1000:.2f} ms with nobody absent, "
        f"{three * 1000:.2f} ms with a hard stand-in ({DEFAULT_ITERATIONS} playouts) playing 3 of 4 seats "
        f"(median; adds {(three - plain) * 1000:.2f} ms)"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
