"""Artifact collection at the end of a normal turn (R22)."""

from __future__ import annotations

from .kinds import Kind, Score
from .position import Position


def collect_artifacts(position: Position) -> list[tuple[int, int]]:
    """In each region with k >= 2 artifacts and exactly one merchant leader, its owner takes k-1.

    The artifact left behind is the one on the lowest cell (smallest (y, x), lowest object id).
    Returns (player id, artifacts taken) for each collection.
    """
    labels = position.labels()
    by_region: dict[int, list[int]] = {}
    for cell in position.artifacts:
        label = labels.get(cell)
        if label is not None:
            by_region.setdefault(label, []).append(cell)
    taken: list[tuple[int, int]] = []
    for label in sorted(by_region):
        cells = sorted(by_region[label])
        if len(cells) < 2:
            continue
        merchants = position.leaders_in(label, Kind.MERCHANT)
        if len(merchants) != 1:
            continue
        owner = position.owner(merchants[0])
        for cell in cells[1:]:
            position.artifacts.discard(cell)
        position.scores[owner][Score.ARTIFACTS] += len(cells) - 1
        taken.append((owner, len(cells) - 1))
    return taken
