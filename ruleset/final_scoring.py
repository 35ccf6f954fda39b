"""Final scoring (R25): artifacts are wildcards, the weakest category is the score, and the ranking."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .state import EndReason, FinalResult, Player


def distribute_artifacts(scores: Sequence[int]) -> tuple[int, int, int, int]:
    """Add the artifacts one at a time to the currently lowest of M, T, P, R (ties: M, T, P, R)."""
    values = list(scores[:4])
    for _ in range(scores[4]):
        lowest = min(range(4), key=values.__getitem__)
        values[lowest] += 1
    return values[0], values[1], values[2], values[3]


def _profile(values: tuple[int, int, int, int]) -> tuple[int, ...]:
    """What players are compared by: the lowest category, then the second-lowest, … (R25)."""
    return tuple(sorted(values))


def final_result(players: Iterable[Player], reason: EndReason) -> FinalResult:
    """Scores after wildcards; the winners have the best (lowest, second-lowest, …) profile."""
    distributed = {p.id: distribute_artifacts(p.scores) for p in players}
    final = {pid: min(values) for pid, values in distributed.items()}
    profiles = {pid: _profile(values) for pid, values in distributed.items()}
    best = max(profiles.values(), default=None)
    winners = tuple(pid for pid in sorted(profiles) if profiles[pid] == best)
    return FinalResult(final=final, distributed=distributed, winners=winners, reason=reason)


def ranking(result: FinalResult) -> list[tuple[int, int]]:
    """(rank, player id), best first: players with equal profiles share a rank (1, 1, 3, …) and
    are listed in ascending id; rank 1 is the winners."""
    order = sorted(
        result.distributed, key=lambda pid: (tuple(-v for v in _profile(result.distributed[pid])), pid)
    )
    ranked: list[tuple[int, int]] = []
    for position, pid in enumerate(order, start=1):
        if ranked and _profile(result.distributed[pid]) == _profile(result.distributed[ranked[-1][1]]):
            ranked.append((ranked[-1][0], pid))
        else:
            ranked.append((position, pid))
    return ranked
