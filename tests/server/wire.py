"""Driving a server connection in memory: StringTransport in, decoded frames out."""

from __future__ import annotations

from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport

import protocol as tp
from protocol import Deframer, Version
from server.game.directory import GameDirectory
from server.game.game import Game
from server.model.memory_store import MemoryStore
from server.model.store import GameSetup
from server.model.timer_settings import TimerSettings
from server.tp.network import TPConnection
from server.views.tp import catalogue


def make_directory(**setup) -> tuple[GameDirectory, Game]:
    store = MemoryStore()
    setup.setdefault("timer", TimerSettings(turn_length=0))
    game_setup = GameSetup(setup.pop("name", "tae"), ctime=1_700_000_000, **setup)
    game_id = store.create_game(game_setup)
    game = Game(game_id, game_setup, Game.initial_state(game_setup), store, Clock())
    directory = GameDirectory()
    directory.add(game)
    game.start()
    return directory, game


class Wire:
    """One client connection to an in-memory server."""

    def __init__(self, directory: GameDirectory, version: Version = Version.TP04):
        self.version = version
        self.connection = TPConnection(directory)
        self.transport = StringTransport()
        self.connection.makeConnection(self.transport)
        self.deframer = Deframer()
        self.sequence = 1
        self.pushed: list = []

    def raw(self, data: bytes) -> list:
        """Send bytes; return every frame written back (decoded)."""
        self.connection.dataReceived(data)
        return self.read()

    def read(self) -> list:
        data = self.transport.value()
        self.transport.clear()
        self.deframer.feed(data)
        out = []
        while (frame := self.deframer.next_frame()) is not None:
            out.append(
                tp.decode(frame, object_descs=catalogue.OBJECT_DESCS, order_descs=catalogue.ORDER_DESCS)
            )
        return out

    def frames(self, data: bytes) -> list[tp.Frame]:
        deframer = Deframer()
        deframer.feed(data)
        out = []
        while (frame := deframer.next_frame()) is not None:
            out.append(frame)
        return out

    def send(self, message) -> list:
        """Send a request; return the replies carrying its sequence number (asyncs kept apart)."""
        self.sequence += 1
        replies = []
        for frame in self.raw(tp.encode(message, self.version, self.sequence)):
            replies.append(frame)
        mine = []
        for frame in replies:
            (
                self.pushed
                if isinstance(frame, tp.TimeRemaining)
                and frame is not replies[-1]
                and not isinstance(message, tp.GetTimeRemaining)
                else mine
            ).append(frame)
        return mine

    def one(self, message):
        replies = self.send(message)
        assert len(replies) == 1, replies
        return replies[0]

    def items(self, message) -> list:
        replies = self.send(message)
        assert isinstance(replies[0], tp.Sequence), replies
        assert replies[0].number == len(replies) - 1
        return replies[1:]

    def login(self, name: str, password: str = "pw", create: bool = True) -> None:
        assert isinstance(self.one(tp.Connect("test")), tp.Okay)
        if create:
            assert isinstance(self.one(tp.CreateAccount(name, password, "", "")), tp.Okay)
        assert isinstance(self.one(tp.Login(name, password)), tp.Okay)

    def id_request(self, cls, key=-1, start=0, amount=-1):
        if self.version == Version.TP04:
            return cls(key, start, amount, -1)
        return cls(key, start, amount)
