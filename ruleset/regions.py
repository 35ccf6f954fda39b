"""Regions (R5): connected components of region members, derived and never stored.

A member is a board system that holds a colony or a leader, is not destroyed and is not a pending
unification system. A region is labelled by its smallest cell index, so the label is stable
whichever member a flood fill starts from; its exposed id is that cell's star-system object id.
"""

from __future__ import annotations

from collections.abc import Iterable

from .board import Board


def label_regions(board: Board, members: Iterable[int]) -> dict[int, int]:
    """Map every member cell to its region label (the smallest cell index in its component)."""
    member_set = set(members)
    labels: dict[int, int] = {}
    neighbours = board.neighbours
    for start in sorted(member_set):
        if start in labels:
            continue
        labels[start] = start
        stack = [start]
        while stack:
            cell = stack.pop()
            for n in neighbours[cell]:
                if n in member_set and n not in labels:
                    labels[n] = start
                    stack.append(n)
    return labels


def group_regions(labels: dict[int, int]) -> dict[int, list[int]]:
    """Region label -> member cells in ascending order."""
    groups: dict[int, list[int]] = {}
    for cell in sorted(labels):
        groups.setdefault(labels[cell], []).append(cell)
    return groups


def region_of_each_member(
    board: Board, colonies: Iterable[int], leader_cells: Iterable[int], unification: Iterable[int] = ()
) -> dict[int, int]:
    """Labels for the members of a position (R5) given its colonies, leaders and pending systems."""
    members = set(colonies)
    members.update(leader_cells)
    members.difference_update(unification)
    return label_regions(board, members)
