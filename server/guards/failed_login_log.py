"""The log of failed logins, rate-limited per source address.

Every failed login (over TP, through `server.guards.login_guard`, and through the web pages and the
JSON API, through `server.web.sessions.LoginBrake`) is logged with the address and the (clipped)
account name, never the password: the first `lines` per address and `window` one by one, then
one summary line per address at the end of the window, so a flood cannot fill the log.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.logger import Logger

from server.model.refusals import clipped

log = Logger()

#: Addresses whose window is remembered; past this, those with nothing pending are forgotten.
MAX_ADDRESSES = 4096


@dataclass
class _Window:
    """One address's logging window."""

    start: float
    logged: int = 0
    unlogged: int = 0
    unlogged_names: set[str] = field(default_factory=set)
    summary: IDelayedCall | None = None


class FailedLoginLog:
    def __init__(self, clock: IReactorTime, window: float = 60.0, lines: int = 10):
        self.clock = clock
        self.window = window if window > 0 else 60.0
        self.lines = lines
        self._windows: dict[str, _Window] = {}

    def failed(self, address: str, name: str, note: str = "", **fields: Any) -> None:
        """A login from `address` for account `name` failed (`note`, if any, is added to the
        line in parentheses); `fields` go into the log event as they are."""
        now = self.clock.seconds()
        record = self._windows.get(address)
        if record is None:
            if len(self._windows) >= MAX_ADDRESSES:
                self._forget_quiet()
            record = self._windows[address] = _Window(now)
        if now - record.start >= self.window:
            self._summarise(address, record)
            record.start, record.logged = now, 0
        shown = clipped(name, 64)
        if record.logged < self.lines:
            record.logged += 1
            log.warn(
                "failed login from {address} for {name}" + (f" ({note})" if note else ""),
                address=address,
                name=shown,
                **fields,
            )
            return
        record.unlogged += 1
        if len(record.unlogged_names) < 5:
            record.unlogged_names.add(shown)
        if record.summary is None:
            left = max(0.0, record.start + self.window - now)
            record.summary = self.clock.callLater(left, self._summarise, address, record)

    def _summarise(self, address: str, record: _Window) -> None:
        if record.summary is not None and record.summary.active():
            record.summary.cancel()
        record.summary = None
        if not record.unlogged:
            return
        log.warn(
            "{count} more failed logins from {address} in the last {window:g} s, not logged one by one "
            "(names: {names})",
            count=record.unlogged,
            address=address,
            window=self.window,
            names=", ".join(sorted(record.unlogged_names)),
        )
        record.unlogged = 0
        record.unlogged_names = set()
        record.start, record.logged = self.clock.seconds(), 0

    def _forget_quiet(self) -> None:
        cutoff = self.clock.seconds() - self.window
        for address, record in list(self._windows.items()):
            if record.summary is None and record.start < cutoff:
                del self._windows[address]
        while len(self._windows) >= MAX_ADDRESSES:  # all busy: drop the oldest, with its summary
            address = next(iter(self._windows))
            self._summarise(address, self._windows.pop(address))

    def stop(self) -> None:
        """Write the pending summaries now (the server stops)."""
        for address, record in list(self._windows.items()):
            self._summarise(address, record)
