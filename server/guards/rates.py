"""Counting what a client takes: the source address a limit counts by, a token bucket, and the
frame rate of a TP or admin connection.

Every listener (TP, web, admin) and every brake (`server.guards.login_guard`) counts with these.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable

from twisted.internet.interfaces import IDelayedCall, IReactorTime


def address_key(host: str) -> str:
    """The source address a limit counts by: an IPv4 address as it is (also when mapped into
    IPv6), an IPv6 address by its /64 (one site's network), anything else (a UNIX socket) as given."""
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return host or "local"
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


class TokenBucket:
    """`rate` tokens a second, at most `burst` kept; time is given by the caller (`now`)."""

    __slots__ = ("burst", "rate", "stamp", "tokens")

    def __init__(self, rate: float, burst: float, now: float):
        self.rate = rate
        self.burst = burst
        self.tokens = float(burst)
        self.stamp = now

    def _refill(self, now: float) -> None:
        if now > self.stamp:
            self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = max(self.stamp, now)

    def available(self, now: float) -> float:
        self._refill(now)
        return self.tokens

    def take(self, now: float, amount: float = 1.0) -> bool:
        """Take `amount` tokens if there are that many."""
        self._refill(now)
        if self.tokens >= amount:
            self.tokens -= amount
            return True
        return False

    def spend(self, now: float, amount: float = 1.0) -> None:
        """Take `amount` tokens, going below zero if need be (a debt paid back by the rate)."""
        self._refill(now)
        self.tokens -= amount

    def wait(self, now: float, amount: float = 1.0) -> float:
        """Seconds until `amount` tokens are there (0 when they are)."""
        self._refill(now)
        missing = amount - self.tokens
        return 0.0 if missing <= 0 else missing / self.rate

    def full(self, now: float) -> bool:
        self._refill(now)
        return self.tokens >= self.burst


class RateTable:
    """A `TokenBucket` per key (an address, an account), made when first used: `rate` a second,
    `burst` at most; at most `keys` kept (full buckets are forgotten first, they hold nothing)."""

    def __init__(self, rate: float, burst: float, keys: int = 65_536):
        self.rate = rate
        self.burst = burst
        self.keys = keys
        self.buckets: dict[str, TokenBucket] = {}

    def bucket(self, key: str, now: float) -> TokenBucket:
        found = self.buckets.get(key)
        if found is None:
            if len(self.buckets) >= self.keys:
                self._forget(now)
            found = self.buckets[key] = TokenBucket(self.rate, self.burst, now)
        return found

    def _forget(self, now: float) -> None:
        for key in [k for k, b in self.buckets.items() if b.full(now)]:
            del self.buckets[key]
        while len(self.buckets) >= self.keys:  # all in use: the oldest go
            del self.buckets[next(iter(self.buckets))]

    def empty(self, key: str, now: float) -> bool:
        """Whether `key` has used up its budget for now (a key never seen has not)."""
        found = self.buckets.get(key)
        return found is not None and found.available(now) < 1

    def take(self, key: str, now: float) -> bool:
        return self.bucket(key, now).take(now)

    def spend(self, key: str, now: float) -> None:
        self.bucket(key, now).spend(now)

    def wait(self, key: str, now: float) -> float:
        found = self.buckets.get(key)
        return 0.0 if found is None else found.wait(now)


def per_window(count: int, window: float, keys: int = 65_536) -> RateTable | None:
    """A table allowing `count` per `window` seconds (a burst of `count`); None when off (0)."""
    if not count or window <= 0:
        return None
    return RateTable(count / window, count, keys)


class FrameThrottle:
    """The frames one connection may have answered: `rate` a second after a burst of `burst`
    (a `TokenBucket` on `clock`). Used by the connections of the TP and the admin listener as their
    request pump's `may_answer`: a frame without a token waits (none is lost), and `ready()` is
    called once the token is there; `slowed(rate)` is called the first time a frame must wait."""

    def __init__(
        self,
        clock: IReactorTime,
        rate: float,
        burst: float,
        ready: Callable[[], None],
        slowed: Callable[[float], None] = lambda rate: None,
    ):
        self.clock = clock
        self.bucket = TokenBucket(rate, burst, clock.seconds())
        self._ready = ready
        self._slowed: Callable[[float], None] | None = slowed
        self._waiting: IDelayedCall | None = None

    def may_answer(self) -> bool:
        """Take a frame's token; without one, say no and call `ready()` when it is there."""
        if self._waiting is not None:
            return False
        now = self.clock.seconds()
        if self.bucket.take(now):
            return True
        if self._slowed is not None:
            slowed, self._slowed = self._slowed, None
            slowed(self.bucket.rate)
        self._waiting = self.clock.callLater(self.bucket.wait(now), self._token_came)
        return False

    def _token_came(self) -> None:
        self._waiting = None
        self._ready()

    def stop(self) -> None:
        """The connection is gone: `ready` is not called any more."""
        if self._waiting is not None and self._waiting.active():
            self._waiting.cancel()
        self._waiting = None
