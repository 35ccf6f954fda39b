"""Final scoring (R25): artifacts are wildcards, the weakest category is the score."""

from __future__ import annotations

from collections.abc import Iterable

from .state import FinalResult, Player


def distribute_artifacts(scores: tuple[int, ...]) -> tuple[int, int, int, int]:
    """Add the artifacts one at a time to the currently lowest of M, T, P, R (ties: M, T, P, R)."""
    values = list(scores[:4])
    for _ in range(scores[4]):
        lowest = min(range(4), key=values.__getitem__)
        values[lowest] += 1
    return tuple(values)


def final_result(players: Iterable[Player]) -> FinalResult:
    """Scores after wildcards; the winners have the best (lowest, second-lowest, …) profile."""
    distributed = {p.id: distribute_artifacts(p.scores) for p in players}
    final = {pid: min(values) for pid, values in distributed.items()}
    profiles = {pid: tuple(sorted(values)) for pid, values in distributed.items()}
    best = max(profiles.values(), default=None)
    winners = tuple(pid for pid in sorted(profiles) if profiles[pid] == best)
    return FinalResult(final=final, distributed=distributed, winners=winners)
