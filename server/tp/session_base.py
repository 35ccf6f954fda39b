"""What every TP request handler of a session stands on: the connection's state (game, player,
listed id sequences), the snapshot it reads, and the shared ways of answering (one item per
asked id; Get…IDs paging; catalogue tables). The handlers are grouped by what they serve
(`login_requests`, `universe_requests`, `order_requests`, `board_requests`); `session.Session`
joins them and dispatches."""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

import protocol as tp
from protocol import FailCode, ReferenceType, Version
from protocol.records import IdModtime
from server.game.directory import GameDirectory
from server.game.game import Game
from server.model.snapshot import GameSnapshot
from server.tp.errors import TPRefusal, fail
from server.views.tp.frame_cache import FrameCache

MAX_ID_LIST = 87378  # tpserver-cpp's MAX_ID_LIST_SIZE

Refs = tuple[tuple[int, int], ...]
#: An item of a Sequence answer: a message, or an object frame already encoded (type, body).
Item = tp.Message | tuple[int, bytes]


class State(enum.Enum):
    NEW = "new"  # waiting for Connect
    CONNECTED = "connected"  # Connect done, not logged in
    PLAYING = "playing"  # logged in to a game


def queue_ref(message: Any) -> Refs:
    return ((ReferenceType.ORDER_QUEUE, message.id),)


class SessionBase:
    """The protocol state of one connection and the helpers its handlers share."""

    def __init__(
        self,
        directory: GameDirectory,
        version: Version,
        push: Callable[[bytes], None],
        host: str = "",
        port: int = 6923,
        close: Callable[[], None] | None = None,
        frames: Callable[[int], FrameCache] | None = None,
    ):
        self.directory = directory
        self.version = version
        self.push = push
        self.close = close
        self.host = host
        self.port = port
        self.state = State.NEW
        self.game: Game | None = None
        self.player: int | None = None
        self.lists: dict[str, tuple[int, list[IdModtime]]] = {}
        self._next_key = 0
        self._frames = frames or private_frame_caches()
        self._unsubscribe: Callable[[], None] | None = None

    @property
    def snapshot(self) -> GameSnapshot:
        """The logged-in game as last published."""
        assert self.game is not None
        return self.game.snapshot

    def connection_lost(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    # -- reply helpers -------------------------------------------------------------------

    @staticmethod
    def _each(ids: tuple[int, ...], one: Callable[[int], Item]) -> list[Item]:
        if not ids:
            raise TPRefusal(FailCode.NO_SUCH_THING, "You didn't ask for any data, try again")
        return [one(i) for i in ids]

    def _id_list(
        self,
        kind: str,
        request: tp.GetIDSequence,
        reply_cls: Callable[..., tp.Message],
        items: Callable[[], list[IdModtime]],
    ) -> tp.Message:
        """A Get…IDs request (§2.1, §6.3): key -1 takes a snapshot, later keys page through it."""
        if request.key == -1:
            self._next_key += 1
            listed = items()
            if self.version == Version.TP04 and request.since >= 0:
                listed = [entry for entry in listed if entry.modtime > request.since]
            self.lists[kind] = (self._next_key, listed)
        elif kind not in self.lists or self.lists[kind][0] != request.key:
            raise TPRefusal(FailCode.FRAME, "Invalid sequence key, start again with -1")
        key, listed = self.lists[kind]
        total = len(listed)
        if request.start < 0 or request.start > total:
            raise TPRefusal(FailCode.NO_SUCH_THING, "Starting number too high")
        amount = total - request.start if request.amount == -1 else request.amount
        if amount < 0:
            raise TPRefusal(FailCode.FRAME, "Amount must be -1 or positive")
        amount = min(amount, total - request.start, MAX_ID_LIST)
        batch = tuple(listed[request.start : request.start + amount])
        remaining = total - request.start - len(batch)
        return reply_cls(key, remaining, batch, request.since)

    def _catalogue_ids(
        self, kind: str, table: dict, message: tp.GetIDSequence, reply_cls: Callable[..., tp.Message]
    ) -> tp.Message:
        return self._id_list(
            kind,
            message,
            reply_cls,
            lambda: [IdModtime(i, item.modtime) for i, item in sorted(table.items())],
        )

    def _lookup(self, table: dict, ids: tuple[int, ...], what: str, reftype: int) -> list[Item]:
        return self._each(
            ids, lambda i: table.get(i) or fail(FailCode.NO_SUCH_THING, f"No such {what}", [(reftype, i)])
        )


def private_frame_caches() -> Callable[[int], FrameCache]:
    """Frame caches for a session made without a listener (tests): one per game, its own."""
    caches: dict[int, FrameCache] = {}
    return lambda game_id: caches.setdefault(game_id, FrameCache())
