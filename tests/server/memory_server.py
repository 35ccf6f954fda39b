"""A whole server in memory: a reactor whose ports only pretend, and a store that says when it
is closed; both write what happens to one journal, so a test can check the order of a start
and of a stop (`server.app.Server` on a `ServerReactor` with a `JournalStore`)."""

from __future__ import annotations

import errno

from twisted.internet.address import IPv4Address
from twisted.internet.error import CannotListenError
from twisted.internet.testing import MemoryReactorClock

from server.model.memory_store import MemoryStore


class JournalPort:
    """A listening port that notes being held, opened and closed."""

    def __init__(self, journal: list[str], port: int, factory, interface: str):
        self.journal = journal
        self.port = port
        self.factory = factory
        self.address = IPv4Address("TCP", interface or "0.0.0.0", port)
        self.listening = True

    def getHost(self) -> IPv4Address:
        return self.address

    def stopReading(self) -> None:
        self.journal.append(f"hold {self.port}")

    def startReading(self) -> None:
        self.journal.append(f"open {self.port}")

    def stopListening(self) -> None:
        assert self.listening, f"port {self.port} closed twice"
        self.listening = False
        self.journal.append(f"close {self.port}")
        self.factory.doStop()


class ServerReactor(MemoryReactorClock):
    """A MemoryReactorClock whose TCP ports are `JournalPort`s; a port number in `taken` cannot
    be had (Address already in use)."""

    def __init__(self, taken: tuple[int, ...] = ()):
        super().__init__()
        self.taken = set(taken)
        self.journal: list[str] = []
        self.ports: dict[int, JournalPort] = {}

    def listenTCP(self, port, factory, backlog=50, interface=""):
        if port in self.taken:
            raise CannotListenError(interface, port, OSError(errno.EADDRINUSE, "Address already in use"))
        self.tcpServers.append((port, factory, backlog, interface))
        listening = self.ports[port] = JournalPort(self.journal, port, factory, interface)
        factory.doStart()
        self.journal.append(f"bind {port}")
        return listening


class JournalStore(MemoryStore):
    """A MemoryStore that notes being closed in the reactor's journal."""

    def __init__(self, journal: list[str]):
        super().__init__()
        self.journal = journal

    def close(self) -> None:
        self.journal.append("close store")
