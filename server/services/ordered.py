"""Services started one after another and stopped in reverse, each waited for.

Twisted's `MultiService` starts its children without waiting for them and stops them all at
once; a server's parts need more: the store must be open before the games are loaded, and the
turns being resolved must be stored before the store closes. `OrderedServices` waits for each
child's `startService` (which may return a Deferred, as in buildbot's `AsyncMultiService`)
before starting the next, and on `stopService` stops them in reverse, each after the one
started after it has stopped.

A child whose start fails stops what started, in reverse, once: the failing child first (its
`stopService` undoes what it had done so far), then the others; then the failure goes on to the
caller. While that runs, `undoing_start` is true, which tells a child's `stopService` that the
run it ends never served (a SQLite file that start created is removed, see
`server.services.store`).
"""

from __future__ import annotations

from twisted.application.service import IService, MultiService, Service
from twisted.internet import defer
from twisted.logger import Logger

log = Logger()


class AsyncService(Service):
    """A Service whose start and stop may wait: `start` and `stop` are coroutines, and
    `startService`/`stopService` return their Deferreds for `OrderedServices` to wait for."""

    def startService(self) -> defer.Deferred[None]:
        super().startService()
        return defer.ensureDeferred(self.start())

    def stopService(self) -> defer.Deferred[None]:
        super().stopService()
        return defer.ensureDeferred(self.stop())

    async def start(self) -> None:
        """Do this part's share of starting the server."""

    async def stop(self) -> None:
        """Undo `start`, also when it stopped half-way (it raised)."""


class OrderedServices(MultiService):
    """Children started in order, stopped in reverse (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self.undoing_start = False
        self._begun: list[IService] = []
        self._stopping: defer.Deferred[None] | None = None

    def startService(self) -> defer.Deferred[None]:
        Service.startService(self)
        return defer.ensureDeferred(self._start())

    async def _start(self) -> None:
        for child in list(self):
            self._begun.append(child)
            try:
                await defer.maybeDeferred(child.startService)
            except BaseException:
                self.undoing_start = True
                await self.stopService()
                raise

    def stopService(self) -> defer.Deferred[None]:
        """Stop every child that began to start, the last first; fires when all have stopped.
        Calling it again gives the same Deferred: the children are stopped once."""
        if self._stopping is None:
            Service.stopService(self)
            self._stopping = defer.ensureDeferred(self._stop())
        return self._stopping

    async def _stop(self) -> None:
        while self._begun:
            child = self._begun.pop()
            try:
                await defer.maybeDeferred(child.stopService)
            except Exception:
                log.failure("stopping {service} failed", service=child.name or type(child).__name__)
