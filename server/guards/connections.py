"""Open connections: how many one address holds, and how many the listeners other than TP hold.

A process has a fixed number of file descriptors (`ulimit -n`); a flood of idle connections
to one listener must not take them all, or TP players are cut off and every accept fails with
"Too many open files". So:

* each listener counts its connections per source address (`address_key`: IPv6 by /64) and
  refuses an address's connection beyond its share (`ConnectionLimiter`);
* the listeners other than TP (web, admin) share one `DescriptorShare`: together they hold at
  most the part of the descriptors that `tp_descriptor_share` does not keep for TP (minus a
  reserve for the database, log files and the like). A connection beyond it is refused.

A refused connection is answered at once and closed: it holds its descriptor for a moment only.
"""

from __future__ import annotations

import resource

#: Descriptors never handed to connections: the database, files, the listeners themselves.
RESERVED_DESCRIPTORS = 64


def descriptor_limit() -> int | None:
    """The process's soft limit on open files (None: unlimited or unknown)."""
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (OSError, ValueError):
        return None
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return None
    return int(soft)


class DescriptorShare:
    """The connections the listeners other than TP may hold together: `(1 - tp_share)` of the
    process's descriptors, less `RESERVED_DESCRIPTORS` (`ceiling` given: exactly that; 0 or a
    share of 0: no ceiling)."""

    def __init__(self, tp_share: float, ceiling: int | None = None):
        if ceiling is None and tp_share > 0:
            limit = descriptor_limit()
            if limit is not None:
                ceiling = max(1, int(limit * (1 - tp_share)) - RESERVED_DESCRIPTORS)
        self.ceiling = ceiling or 0
        self.open = 0

    def take(self) -> bool:
        if self.ceiling and self.open >= self.ceiling:
            return False
        self.open += 1
        return True

    def give_back(self) -> None:
        self.open = max(0, self.open - 1)


class ConnectionLimiter:
    """One listener's connections per address key (`per_address`, 0: no limit), within the
    `share` of descriptors it takes from."""

    ADDRESS = "address"
    SHARE = "share"

    def __init__(self, per_address: int, share: DescriptorShare | None = None):
        self.per_address = per_address
        self.share = share
        self.counts: dict[str, int] = {}

    def open(self, key: str, *, exempt: bool = False) -> str | None:
        """Count a new connection from `key`; None if it may stay, else why not (`ADDRESS`: the
        address has its share; `SHARE`: the listeners are full). An `exempt` address (a trusted
        proxy, which carries many clients) has no per-address limit."""
        held = self.counts.get(key, 0)
        if self.per_address and not exempt and held >= self.per_address:
            return self.ADDRESS
        if self.share is not None and not self.share.take():
            return self.SHARE
        self.counts[key] = held + 1
        return None

    def close(self, key: str) -> None:
        held = self.counts.get(key, 0) - 1
        if held > 0:
            self.counts[key] = held
        else:
            self.counts.pop(key, None)
        if self.share is not None:
            self.share.give_back()

    @property
    def total(self) -> int:
        return sum(self.counts.values())
