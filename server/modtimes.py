"""Modification times for the Thousand Parsec cache protocol (spec/protocol.md §5.5).

Clients re-download an item only when its listed modtime is greater than the one they hold, so
a modtime must strictly increase whenever anything a client sees of the item changes, and the
modtime in an ID list must equal the one in the item's frame. Items are compared by a
fingerprint (a hashable summary of everything visible about them); a changed fingerprint gets the
next serial. Serials start above the stored high-water mark after a restart, so they never go back.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable


class ModTimes:
    def __init__(self, start: int = 1):
        self.serial = start
        self._stamps: dict[Hashable, tuple[Hashable, int]] = {}

    def refresh(self, items: Iterable[tuple[Hashable, Hashable]]) -> None:
        """Stamp every (key, fingerprint); keys not given are forgotten (the item is gone)."""
        old = self._stamps
        new: dict[Hashable, tuple[Hashable, int]] = {}
        bumped = False
        for key, fingerprint in items:
            previous = old.get(key)
            if previous is not None and previous[0] == fingerprint:
                new[key] = previous
            else:
                if not bumped:
                    self.serial += 1
                    bumped = True
                new[key] = (fingerprint, self.serial)
        self._stamps = new

    def touch(self, key: Hashable, fingerprint: Hashable) -> int:
        """Update one item (e.g. an order queue after an insert) and return its modtime."""
        previous = self._stamps.get(key)
        if previous is not None and previous[0] == fingerprint:
            return previous[1]
        self.serial += 1
        self._stamps[key] = (fingerprint, self.serial)
        return self.serial

    def forget(self, key: Hashable) -> None:
        self._stamps.pop(key, None)

    def get(self, key: Hashable) -> int | None:
        stamp = self._stamps.get(key)
        return None if stamp is None else stamp[1]

    def __contains__(self, key: Hashable) -> bool:
        return key in self._stamps
