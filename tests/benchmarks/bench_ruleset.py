"""Ruleset speed: whole simulated games and single turn resolutions.

    python -m tests.benchmarks ruleset

Random players (`ruleset.simulator.RandomPlayer`) play complete games. Only `resolve_turn` is
timed for the turn figures (the players' own choices are not); the game figures include
everything: set-up, the players' choices and every turn. A whole game is timed twice: with the
board messages written (`resolve_turn(..., messages=True)`, as the server plays every turn, and
as every simulated game was played before), and without (`messages=False`, as simulations and
the AI's playouts play; the states are the same). The clock is read here, never in `ruleset/`.
"""

from __future__ import annotations

import statistics
import time

from ruleset import DEFAULT_BOARD, parse_map, resolve_turn
from ruleset.board import grid_map_text
from ruleset.simulator import play_game

GAMES_FOR_RATE = 300  # complete 4-player games on the default map
GAMES_FOR_TURNS = 150  # games whose resolve_turn calls are timed
BIG_MAP_GAMES = 100  # 16-player games on the 64×64 map
GAME_TARGET_MS = 5.0  # a whole game without messages (the AI's playouts live on it)


class TimedResolver:
    """resolve_turn, timed with perf_counter; remembers every duration (seconds)."""

    def __init__(self):
        self.durations: list[float] = []
        self.combat: list[float] = []

    def __call__(self, state, orders, rng):
        start = time.perf_counter()
        outcome = resolve_turn(state, orders, rng)
        elapsed = time.perf_counter() - start
        (self.combat if state.phase.value == "combat" else self.durations).append(elapsed)
        return outcome


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.3f} ms"


def _turn_figures(label: str, timer: TimedResolver) -> None:
    normal, combat = timer.durations, timer.combat
    everything = normal + combat
    print(f"{label}: {len(everything)} turns resolved ({len(combat)} combat turns)")
    print(
        f"    median {_ms(statistics.median(everything))}, worst {_ms(max(everything))}, "
        f"95th percentile {_ms(statistics.quantiles(everything, n=20)[-1])}"
    )
    if combat:
        print(
            f"    normal turns median {_ms(statistics.median(normal))}, "
            f"combat turns median {_ms(statistics.median(combat))}"
        )


def games_per_second() -> None:
    for label, messages in (("with messages (as before)", True), ("without messages", False)):
        durations = []
        cpu = []  # this process's CPU time: what other processes on the machine do not inflate
        turns = 0
        start = time.perf_counter()
        for seed in range(GAMES_FOR_RATE):
            begin, begin_cpu = time.perf_counter(), time.process_time()
            record = play_game(4, DEFAULT_BOARD, seed, messages=messages)
            durations.append(time.perf_counter() - begin)
            cpu.append(time.process_time() - begin_cpu)
            turns += record.turns
        total = time.perf_counter() - start
        median = statistics.median(durations)
        print(
            f"4 players, default map, {label}: {GAMES_FOR_RATE} complete games in {total:.2f} s = "
            f"{GAMES_FOR_RATE / total:.1f} games/s ({turns / GAMES_FOR_RATE:.1f} turns per game)"
        )
        verdict = "within" if median * 1000 < GAME_TARGET_MS else "OVER"
        print(
            f"    full game: median {_ms(median)}, worst {_ms(max(durations))} "
            f"({verdict} the {GAME_TARGET_MS:.0f} ms target); CPU time median {_ms(statistics.median(cpu))}"
        )


def turn_times_default_map() -> None:
    timer = TimedResolver()
    for seed in range(GAMES_FOR_TURNS):
        play_game(4, DEFAULT_BOARD, 10_000 + seed, resolver=timer)
    _turn_figures(f"resolve_turn, 4 players, default map, {GAMES_FOR_TURNS} games", timer)


def turn_times_big_map() -> None:
    board = parse_map(grid_map_text(64, 64))
    timer = TimedResolver()
    turns = 0
    start = time.perf_counter()
    for seed in range(BIG_MAP_GAMES):
        turns += play_game(16, board, seed, resolver=timer).turns
    total = time.perf_counter() - start
    _turn_figures(
        f"resolve_turn, 16 players, 64x64 map ({board.size} systems, "
        f"{len(board.artifact_cells())} artifacts), {BIG_MAP_GAMES} games",
        timer,
    )
    print(f"    full game: mean {_ms(total / BIG_MAP_GAMES)} ({turns / BIG_MAP_GAMES:.1f} turns per game)")


def main() -> None:
    games_per_second()
    turn_times_default_map()
    turn_times_big_map()


if __name__ == "__main__":
    main()
