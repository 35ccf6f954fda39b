"""An admin connection driven in memory: StringTransport in, decoded admin frames out."""

from __future__ import annotations

from twisted.internet.address import IPv4Address
from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport
from twisted.logger import LogPublisher

from protocol import Connect, Deframer, Login, Okay
from protocol.admin import LogMessage, decode_admin, encode_admin
from server.admin.live import LiveBackend
from server.admin.network import AdminFactory
from server.config.admin import AdminSettings
from server.config.file import GameConfig
from server.game.passwords import InlineHasher, hash_password
from server.model.timer_settings import TimerSettings
from tests.server.wire import make_directory

ADMIN = "tpadm"
PASSWORD = "secret7"
USERS = {ADMIN: hash_password(PASSWORD, n=2**4)}


def make_factory(directory=None, game=None, backend=None, **settings):
    """A factory over one in-memory game "tae" (unless given), its clock as the reactor."""
    if directory is None:
        directory, game = make_directory()
    clock = game.clock if game is not None else Clock()
    if backend is None:
        backend = LiveBackend(
            directory,
            game.store,
            clock,
            GameConfig(timer=TimerSettings(turn_length=0)),
            new_seed=lambda: 42,
        )
    publisher = LogPublisher()
    settings.setdefault("users", USERS)
    factory = AdminFactory(AdminSettings(**settings), backend, clock, InlineHasher(), log_publisher=publisher)
    factory.doStart()
    return factory


class AdminWire:
    """One admin client connection to an in-memory server."""

    def __init__(self, factory: AdminFactory, host: str = "127.0.0.1"):
        self.factory = factory
        peer = IPv4Address("TCP", host, 40000)
        self.connection = factory.buildProtocol(peer)
        self.transport = StringTransport(peerAddress=peer)
        self.connection.makeConnection(self.transport)
        self.deframer = Deframer()
        self.sequence = 0
        self.logs: list[LogMessage] = []

    def raw(self, data: bytes) -> list[tuple[int, object]]:
        """Send bytes; every (sequence, message) written back, LogMessages included."""
        self.connection.dataReceived(data)
        return self.read()

    def read(self) -> list[tuple[int, object]]:
        data = self.transport.value()
        self.transport.clear()
        self.deframer.feed(data)
        out = []
        while (frame := self.deframer.next_frame()) is not None:
            out.append((frame.sequence, decode_admin(frame, command_descs=self.factory.descriptions)))
        return out

    def send(self, *messages) -> list:
        """Send requests in one write; the replies (LogMessages set aside in `logs`)."""
        data = b""
        for message in messages:
            self.sequence += 1
            data += encode_admin(message, self.sequence)
        replies = []
        for sequence, message in self.raw(data):
            if isinstance(message, LogMessage):
                assert sequence == 0
                self.logs.append(message)
            else:
                replies.append((sequence, message))
        return replies

    def one(self, message):
        replies = self.send(message)
        assert len(replies) == 1, replies
        sequence, reply = replies[0]
        assert sequence == self.sequence
        return reply

    def login(self, name: str = ADMIN, password: str = PASSWORD) -> None:
        assert isinstance(self.one(Connect("libtpproto-cpp/0.1.9 tpadmin-cpp/0.1.0 (admin)")), Okay)
        assert self.one(Login(name, password)) == Okay("Welcome")
