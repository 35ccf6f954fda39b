"""Server-sent events: a page learns that what it shows has changed and fetches itself again.

One `LiveFeed` per game subscribes to the game while someone listens. Each listener has a key
function of the snapshot (the public page's key covers only public facts; a player's page adds
their own orders and board), and hears a `change` event only when its key changes, so the events
say nothing about other players' private moves. The event carries the turn number only.
A stream opens with a `hello` event naming the version the page should show (`version`), so a
page that missed a change while its stream was connecting fetches itself again. A comment
every `KEEPALIVE` seconds keeps proxies from closing an idle stream.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from twisted.internet.interfaces import IReactorTime
from twisted.web.server import NOT_DONE_YET

from server.model.snapshot import GameSnapshot
from server.web.contract import ServedGame

KEEPALIVE = 25.0


def version(key: Hashable) -> str:
    """A short name for a key's value, written in the page (`data-version`) and in every event:
    a page that hears a version other than its own fetches itself again."""
    return hashlib.blake2b(repr(key).encode(), digest_size=8).hexdigest()


def public_key(snapshot: GameSnapshot) -> Hashable:
    """Everything the public page shows changes one of these (the map changes only with turns)."""
    return (
        snapshot.turn,
        snapshot.phase,
        snapshot.started,
        snapshot.resolving,
        snapshot.deadline,
        snapshot.finished,
        snapshot.removed_players,
        snapshot.stand_ins(),
        tuple(p.name for p in snapshot.state.players),
    )


def player_key(player: int) -> Callable[[GameSnapshot], Hashable]:
    def key(snapshot: GameSnapshot) -> Hashable:
        own = tuple(
            (q.entry.seq, q.entry.target)
            for queue in snapshot.queues.values()
            for q in queue
            if q.order.player == player
        )
        board = tuple(item.index for item in snapshot.board(player))
        return (public_key(snapshot), own, board)

    return key


@dataclass
class _Listener:
    request: Any  # a twisted.web Request
    key: Callable[[GameSnapshot], Hashable]
    last: Hashable


class LiveFeed:
    def __init__(self, game: ServedGame, clock: IReactorTime):
        self.game = game
        self.clock = clock
        self.listeners: list[_Listener] = []
        self._unsubscribe: Callable[[], None] | None = None
        self._keepalive: Any = None  # the IDelayedCall of the next keepalive

    def open(self, request, key: Callable[[GameSnapshot], Hashable]):
        """Answer `request` with an event stream that lasts until the client goes."""
        request.setHeader(b"content-type", b"text/event-stream; charset=utf-8")
        request.setHeader(b"cache-control", b"no-store")
        request.setHeader(b"x-accel-buffering", b"no")
        listener = _Listener(request, key, key(self.game.snapshot))
        # The page may be older than the stream (a turn ended in between): "hello" says what
        # the page should show now, and the page compares.
        hello = json.dumps({"version": version(listener.last)})
        request.write(f"retry: 3000\n: connected\nevent: hello\ndata: {hello}\n\n".encode())
        self.listeners.append(listener)
        if self._unsubscribe is None:
            self._unsubscribe = self.game.subscribe(self._changed)
        if self._keepalive is None:
            self._keepalive = self.clock.callLater(KEEPALIVE, self._ping)
        request.notifyFinish().addBoth(lambda _: self._gone(listener))
        return NOT_DONE_YET

    def _changed(self, snapshot: GameSnapshot) -> None:
        for listener in list(self.listeners):
            key = listener.key(snapshot)
            if key != listener.last:
                listener.last = key
                data = json.dumps(
                    {"turn": snapshot.turn, "phase": snapshot.phase.value, "version": version(key)}
                )
                listener.request.write(f"event: change\ndata: {data}\n\n".encode())

    def _ping(self) -> None:
        self._keepalive = None
        if not self.listeners:
            return
        for listener in list(self.listeners):
            listener.request.write(b": keepalive\n\n")
        self._keepalive = self.clock.callLater(KEEPALIVE, self._ping)

    def _gone(self, listener: _Listener) -> None:
        if listener in self.listeners:
            self.listeners.remove(listener)
        if not self.listeners:
            if self._unsubscribe is not None:
                self._unsubscribe()
                self._unsubscribe = None
            if self._keepalive is not None and self._keepalive.active():
                self._keepalive.cancel()
            self._keepalive = None

    def close(self) -> None:
        """End every stream (the listener is stopping)."""
        for listener in list(self.listeners):
            listener.request.finish()
