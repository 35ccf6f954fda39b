"""Computer players against each other: `python -m ruleset.tournament`.

    python -m ruleset.tournament --players hard,normal,normal,normal --games 400 --seed 1 \
        [--budget 100] [--depth 4] [--jobs 2] [--json]
    python -m ruleset.tournament --merge run1.json run2.json   # several runs' --json summaries

Game g is played on the default map when g is even and on a random small map (drawn from the
seed and g) when it is odd; the levels sit in the seats rotated by g, so every level plays every
seat equally often. Each seat decides from its own view (`ruleset.seat.seat_view`) with
`ruleset.ai.decide`. The final standing is the rules' (`ruleset.final_standing`, R25): players
with the same profile share a place, and a win shared by k players counts 1/k. For each level:
seat-games played, sole wins, shared wins, its share of the wins, mean place, and a 95 % Wilson
interval of the win share. Games run in `--jobs` processes; like the rest of the ruleset the
games are deterministic for a seed and budget (`python -m tests.benchmarks ai` times decisions).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .ai import DEFAULT_ITERATIONS, LEVEL_NAMES, Level, decide, parse_level
from .board import ARTIFACT, DEFAULT_BOARD, HABITABLE, UNINHABITABLE, Board, parse_map
from .orders import Order
from .randomness import game_rng
from .seat import seat_view
from .simulator import GameDidNotEnd, Strategy, play_game
from .standing import final_standing
from .state import GameState

Z_95 = 1.959963984540054
MAX_TURNS = 600


def random_map(rng: random.Random) -> Board:
    """A small random map: 8–12 × 6–9 systems, about one in eight uninhabitable, 5–8 artifacts."""
    width, height = rng.randint(8, 12), rng.randint(6, 9)
    rows = [
        [UNINHABITABLE if rng.random() < 0.125 else HABITABLE for _ in range(width)] for _ in range(height)
    ]
    for y, x in rng.sample([(y, x) for y in range(height) for x in range(width)], rng.randint(5, 8)):
        rows[y][x] = ARTIFACT
    return parse_map("".join("".join(row) + "\n" for row in rows))


@dataclass(frozen=True)
class GameSpec:
    index: int
    seed: int
    levels: tuple[Level, ...]  # by seat (player id - 1)
    budget: int
    depth: int


@dataclass
class GameResult:
    index: int
    levels: tuple[str, ...]
    ranks: tuple[int, ...]  # by seat
    winners: tuple[int, ...]  # seats (player ids) that share first place
    turns: int
    ended: bool
    default_map: bool
    decisions: dict[str, int] = field(default_factory=dict)


def board_of(spec: GameSpec) -> Board:
    if spec.index % 2 == 0:
        return DEFAULT_BOARD
    return random_map(game_rng(spec.seed, 0, f"tournament map {spec.index}"))


def play(spec: GameSpec) -> GameResult:
    decisions: dict[str, int] = {level.value: 0 for level in spec.levels}

    def strategy_for(level: Level) -> Strategy:
        def strategy(state: GameState, player: int, rng: random.Random) -> list[Order]:
            decisions[level.value] += 1
            return list(decide(seat_view(state, player), level, rng, budget=spec.budget, depth=spec.depth))

        return strategy

    board = board_of(spec)
    strategies = [strategy_for(level) for level in spec.levels]
    levels = tuple(level.value for level in spec.levels)
    try:
        record = play_game(
            len(spec.levels), board, spec.seed, strategies, max_turns=MAX_TURNS, stall_turns=60
        )
    except GameDidNotEnd as stopped:
        return GameResult(
            spec.index, levels, (), (), stopped.record.turns, False, board is DEFAULT_BOARD, decisions
        )
    standing = final_standing(record.state)
    assert standing is not None
    ranks = tuple(standing.of(pid).rank for pid in range(1, len(spec.levels) + 1))  # type: ignore[union-attr]
    winners = tuple(place.player for place in standing.winners)
    return GameResult(
        spec.index, levels, ranks, winners, record.turns, True, board is DEFAULT_BOARD, decisions
    )


def game_specs(players: Sequence[Level], games: int, seed: int, budget: int, depth: int) -> list[GameSpec]:
    n = len(players)
    return [
        GameSpec(g, seed * 1_000_003 + g, tuple(players[(seat + g) % n] for seat in range(n)), budget, depth)
        for g in range(games)
    ]


def wilson(successes: float, n: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (successes may be fractional: shared wins)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def summary(results: Sequence[GameResult], players: Sequence[Level]) -> dict[str, Any]:
    levels: dict[str, dict[str, Any]] = {}
    for level in dict.fromkeys(p.value for p in players):
        levels[level] = {
            "seats": 0,
            "wins": 0,
            "shared_wins": 0,
            "win_share": 0.0,
            "places": [],
            "decisions": 0,
        }
    ended = [r for r in results if r.ended]
    for result in results:
        for level, count in result.decisions.items():
            levels[level]["decisions"] += count
    for result in ended:
        for seat, level in enumerate(result.levels, start=1):
            entry = levels[level]
            entry["seats"] += 1
            entry["places"].append(result.ranks[seat - 1])
            if seat in result.winners:
                if len(result.winners) == 1:
                    entry["wins"] += 1
                else:
                    entry["shared_wins"] += 1
                entry["win_share"] += 1 / len(result.winners)
    out: dict[str, Any] = {"games": len(results), "ended": len(ended), "levels": {}}
    for level, entry in levels.items():
        seats = entry["seats"]
        low, high = wilson(entry["win_share"], seats)
        out["levels"][level] = {
            "seat_games": seats,
            "wins": entry["wins"],
            "shared_wins": entry["shared_wins"],
            "win_rate": entry["win_share"] / seats if seats else 0.0,
            "win_rate_95": [low, high],
            "mean_place": sum(entry["places"]) / seats if seats else None,
            "decisions": entry["decisions"],
        }
    return out


def merge(summaries: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One summary of several runs' `--json` summaries (games of different seeds, say)."""
    out: dict[str, Any] = {"games": 0, "ended": 0, "levels": {}}
    shares: dict[str, float] = {}
    places: dict[str, float] = {}
    for part in summaries:
        out["games"] += part["games"]
        out["ended"] += part["ended"]
        for level, entry in part["levels"].items():
            total = out["levels"].setdefault(
                level, {"seat_games": 0, "wins": 0, "shared_wins": 0, "decisions": 0}
            )
            for key in ("seat_games", "wins", "shared_wins", "decisions"):
                total[key] += entry[key]
            shares[level] = shares.get(level, 0.0) + entry["win_rate"] * entry["seat_games"]
            places[level] = places.get(level, 0.0) + (entry["mean_place"] or 0) * entry["seat_games"]
    for level, total in out["levels"].items():
        seats = total["seat_games"]
        total["win_rate"] = shares[level] / seats if seats else 0.0
        total["win_rate_95"] = list(wilson(shares[level], seats))
        total["mean_place"] = places[level] / seats if seats else None
    return out


def print_summary(out: dict[str, Any], header: str) -> None:
    print(f"{out['games']} games ({out['ended']} ended), {header}")
    for level, entry in out["levels"].items():
        low, high = entry["win_rate_95"]
        place = entry["mean_place"]
        place_text = "-" if place is None else f"{place:.2f}"
        print(
            f"  {level:7} {entry['seat_games']:5} seat-games  wins {entry['wins']:4}"
            f"  shared {entry['shared_wins']:3}"
            f"  win rate {entry['win_rate']:.1%} (95 % CI {low:.1%}–{high:.1%})"
            f"  mean place {place_text}"
        )
        print(f"          {entry['decisions']} decisions")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ruleset.tournament", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--players",
        default="hard,normal,normal,normal",
        help=f"levels, one per seat ({', '.join(LEVEL_NAMES)})",
    )
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--budget", type=int, default=DEFAULT_ITERATIONS, help="playouts per hard decision")
    parser.add_argument("--depth", type=int, default=4, help="turns per playout")
    parser.add_argument("--jobs", type=int, default=2, help="processes (1: in this one)")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument(
        "--merge",
        nargs="+",
        metavar="FILE",
        help="combine the --json summaries of earlier runs; play nothing",
    )
    args = parser.parse_args(argv)
    if args.merge:
        try:
            parts = [json.loads(Path(path).read_text(encoding="utf-8")) for path in args.merge]
            out = merge(parts)
        except (OSError, ValueError, KeyError, TypeError) as error:
            parser.error(f"--merge: not a tournament summary: {error}")
        if args.json:
            json.dump(out, sys.stdout, indent=2)
            print()
        else:
            print_summary(out, f"{len(parts)} runs merged")
        return 0
    try:
        players = [parse_level(name) for name in args.players.split(",")]
    except ValueError as error:
        parser.error(str(error))
    if not 2 <= len(players) <= 6:
        parser.error("a game here has 2 to 6 players")
    if args.games < 1 or args.budget < 0 or args.depth < 1 or args.jobs < 1:
        parser.error("--games, --depth and --jobs must be positive and --budget not negative")
    specs = game_specs(players, args.games, args.seed, args.budget, args.depth)
    if args.jobs == 1:
        results = [play(spec) for spec in specs]
    else:
        with ProcessPoolExecutor(args.jobs) as pool:
            results = list(pool.map(play, specs, chunksize=1))
    out = summary(results, players)
    if args.json:
        json.dump(out, sys.stdout, indent=2)
        print()
    else:
        header = (
            f"players {args.players}, seed {args.seed}, budget {args.budget} playouts, depth {args.depth}"
        )
        print_summary(out, header)
    return 0


if __name__ == "__main__":
    sys.exit(main())
