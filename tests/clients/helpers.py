"""Shared set-up: a BlockingClient talking to a FakeConnection through a FakeSocket (no threads,
no network: every request is answered as soon as it is written)."""

from __future__ import annotations

from dataclasses import dataclass

from clients.blocking import BlockingClient, BlockingConnection
from clients.cache import Cache
from protocol import Connect, Version

from .fake_server import FakeConnection, FakeSocket, FakeWorld, tae_world


@dataclass
class Rig:
    world: FakeWorld
    server: FakeConnection
    socket: FakeSocket
    client: BlockingClient

    def requests_since(self, mark: int) -> list:
        return self.server.requests[mark:]

    @property
    def mark(self) -> int:
        return len(self.server.requests)


def rig(
    version: Version,
    world: FakeWorld | None = None,
    *,
    chunk: int = 1 << 16,
    user: tuple[str, str] = ("alice", "secret"),
    login: bool = True,
    **cache_options,
) -> Rig:
    world = world or tae_world()
    server = FakeConnection(world)
    sock = FakeSocket(server, chunk)
    connection = BlockingConnection(sock, version, timeout=2.0)
    client = BlockingClient(connection, cache=Cache(version, **cache_options))
    client.request(Connect("tests"))
    if login:
        client.login(*user)
    return Rig(world, server, sock, client)


def names(messages) -> list[str]:
    return [type(m).__name__ for m in messages]
