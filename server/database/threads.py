"""The one database thread: every query of the server runs on it, one after another.

One thread means one writer, so the store needs no locking of its own and SQLite never sees two
writers from this process. The reactor thread hands work over with `run(fn, *args)`, which
returns a Deferred fired (on the reactor thread) with fn's result once fn has returned.
`SynchronousDatabaseThread` runs the work at once in the caller's thread: tests and the CLI.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from twisted.internet import defer
from twisted.internet.threads import deferToThreadPool
from twisted.python.threadpool import ThreadPool


class DatabaseThreadClosed(RuntimeError):
    """Work was handed to a database thread after it was stopped."""


class DatabaseThread:
    """A Twisted ThreadPool of exactly one thread, started now and stopped by `stop()` (or at
    reactor shutdown, whichever comes first)."""

    def __init__(self, reactor=None, name: str = "tae-database"):
        if reactor is None:
            from twisted.internet import reactor
        self.reactor = reactor
        self.pool = ThreadPool(minthreads=1, maxthreads=1, name=name)
        self.pool.start()
        self._trigger = reactor.addSystemEventTrigger("during", "shutdown", self._shutdown)

    @property
    def running(self) -> bool:
        return self.pool.started and not self.pool.joined

    def run(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> defer.Deferred:
        if not self.running:
            return defer.fail(DatabaseThreadClosed("the database thread is stopped"))
        return deferToThreadPool(self.reactor, self.pool, fn, *args, **kwargs)

    def stop(self) -> None:
        """Stop the thread after the work already handed over (this waits for that work)."""
        if self._trigger is not None:
            self.reactor.removeSystemEventTrigger(self._trigger)
            self._trigger = None
        if self.running:
            self.pool.stop()

    def _shutdown(self) -> None:
        self._trigger = None
        self.stop()


class SynchronousDatabaseThread:
    """The same interface, running each call at once in the calling thread."""

    running = True

    def run(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> defer.Deferred:
        if not self.running:
            return defer.fail(DatabaseThreadClosed("the database thread is stopped"))
        return defer.maybeDeferred(fn, *args, **kwargs)

    def stop(self) -> None:
        self.running = False
