"""Encoded frame bodies, kept per game across snapshots and reused while their modtime holds.

A TP object's body is the same for every session that sees it the same way (one version, owner
or not), so it is encoded once per (modtime, version, owner-or-not) and shared. An entry is used
only at the modtime it was built for; a newer modtime rebuilds it. The cache lives on the read
side (one per game per TP listener), never in the game service.
"""

from __future__ import annotations

from collections.abc import Callable


class FrameCache:
    """Encoded bodies keyed by what makes them differ; an entry is used only at its modtime."""

    def __init__(self) -> None:
        self._bodies: dict[tuple, tuple[int, bytes]] = {}

    def get(self, key: tuple, modtime: int, build: Callable[[], bytes]) -> bytes:
        hit = self._bodies.get(key)
        if hit is not None and hit[0] == modtime:
            return hit[1]
        body = build()
        self._bodies[key] = (modtime, body)
        return body

    def __len__(self) -> int:
        return len(self._bodies)
