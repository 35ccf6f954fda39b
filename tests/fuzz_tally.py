"""What the fuzzer (`python -m tests.fuzz_web`) counts: one `Exchange` per attack on a listener,
summed up in a `Tally` per run."""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field


@dataclass
class Exchange:
    """One attack and what came of it: `requests` sent (HTTP requests, admin frames), the
    answers by `labels` ("200", "Fail 3", "closed"), and what was wrong with them."""

    listener: str
    requests: int = 0
    labels: list[str] = field(default_factory=list)
    server_errors: list[str] = field(default_factory=list)
    not_json: list[str] = field(default_factory=list)
    unanswered: str | None = None


@dataclass
class Tally:
    requests: Counter = field(default_factory=Counter)  # by listener
    statuses: Counter = field(default_factory=Counter)  # "listener label"
    server_errors: list[str] = field(default_factory=list)
    not_json: list[str] = field(default_factory=list)
    unanswered: Counter = field(default_factory=Counter)
    lock: threading.Lock | None = field(default_factory=threading.Lock)

    def add(self, exchange: Exchange) -> None:
        assert self.lock is not None
        with self.lock:
            self.requests[exchange.listener] += exchange.requests
            for label in exchange.labels:
                self.statuses[f"{exchange.listener} {label}"] += 1
            self.server_errors.extend(f"{exchange.listener}: {e}" for e in exchange.server_errors)
            self.not_json.extend(exchange.not_json)
            if exchange.unanswered is not None:
                self.unanswered[exchange.unanswered] += 1
