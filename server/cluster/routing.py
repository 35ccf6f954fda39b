"""The TP session of a cluster node: any node answers any client.

`ClusterSession` stands where `server.tp.session.Session` stands on a single server (the listener
makes one per connection, `server.tp.network.TPFactory(session_factory=...)`). Before login it
answers locally what needs no game; the Login (or CreateAccount) names the game, and then:

* the game runs on this node: a local `Session` serves it, exactly as on a single server;
* it runs on another node: the session is *relayed*: an `Upstream` connection to the owner's
  advertised address carries every frame there and every answer and pushed TimeRemaining back,
  with the client's sequence numbers (`server.cluster.relay`); the client sees no difference.

When the game leaves (handed over, its node died, this node lost its claim) the session finds
the new owner (claim rounds, `ClusterNode.placement`), logs in there again with the client's
credentials and goes on; the client keeps its connection, and a request under way then is
answered as if nothing had happened: a read sent again, a write whose answer was lost looked
up in the change records and answered, or sent again when it is not stored
(`server.cluster.carry_over`, `server.cluster.write_outcome`).

Sessions relayed here from another node are not relayed once more: when their game leaves,
their connection is closed, and the relaying node carries the client over itself
(`server.cluster.carry_over`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from twisted.internet import defer
from twisted.logger import Logger
from twisted.python.failure import Failure

import protocol as tp
from protocol import FailCode, FeatureId, Frame, Version
from server.cluster.carry_over import CarryOver, PagedList, sleep
from server.cluster.game_list import GameList
from server.cluster.relay import (
    RELAY_CLIENT,
    Upstream,
    UpstreamLost,
    answer_bytes,
    connect_upstream,
    decode_answer,
)
from server.cluster.session_state import NOT_HERE
from server.cluster.write_outcome import Ledger, frames_of
from server.game.directory import GameDirectory
from server.game.passwords import split_login
from server.tp.errors import STORE_UNAVAILABLE_TEXT
from server.tp.session import Session, State

log = Logger()

AWAY_TEXT = "The game's server is not available right now; try again shortly."


class ClusterSession(CarryOver, GameList):
    """A TP connection of a cluster node (see the module docstring); carrying it over to a game's
    new owner is `server.cluster.carry_over`, the cluster's game list `server.cluster.game_list`."""

    def __init__(
        self,
        node,
        directory: GameDirectory,
        version: Version,
        push: Callable[[bytes], None],
        host: str = "",
        port: int = 6923,
        close: Callable[[], None] | None = None,
        frames=None,
    ):
        self.node = node
        self.version = version
        self.push = push
        self.close = close
        self.host = host
        self.port = port
        self._make_local = lambda: Session(directory, version, push, host, port, close=close, frames=frames)
        self.local = self._make_local()
        self.client = ""
        self.relayed = False  # this connection is another node's relay
        self.credentials: tuple[str, str] | None = None  # (user, password) once logged in
        self.game_name: str | None = None
        self.game_id: int | None = None
        self.mode: str | None = None  # None before login; "local", "remote"; "moving" meanwhile
        self.upstream: Upstream | None = None
        self.upstream_node: str | None = None
        self.upstream_epoch: int | None = None
        self._exchanging = 0
        self._recovery: defer.Deferred | None = None
        self._after_recovery: list[defer.Deferred] = []
        self._abandon: Callable[[], None] | None = None
        self.ledger: Ledger | None = None  # this session's writes, to look one up (write_outcome)
        self.generation = 0  # how many times the session was carried over
        self.owner_changed = False  # the last carry-over found another owner (or epoch)
        self._lists: dict[type, PagedList] = {}  # the Get…IDs lists started, by request type
        self.closed = False
        self._unwatch = node.watch_departures(self._departed)
        self._unwatch_moves = node.watch_moves(self._moved)

    # -- the listener's side ---------------------------------------------------------------

    def handle_frame(self, message: tp.Message, frame: Frame) -> bytes | defer.Deferred:
        if self._recovery is not None:
            d: defer.Deferred = defer.Deferred()
            self._after_recovery.append(d)
            return d.addCallback(lambda ok: self._dispatch(message, frame) if ok else b"")
        return self._dispatch(message, frame)

    def handle(self, message: tp.Message, sequence: int) -> bytes | defer.Deferred:
        """For callers without frames (tests): the frame is rebuilt from the message."""
        frame = Frame(self.version, 0, sequence, message.TYPE, tp.encode_body(message, self.version))
        return self.handle_frame(message, frame)

    def connection_lost(self) -> None:
        self.closed = True
        self._unwatch()
        self._unwatch_moves()
        self.local.connection_lost()
        self._drop_upstream()

    # -- dispatch --------------------------------------------------------------------------

    def _dispatch(self, message: tp.Message, frame: Frame) -> bytes | defer.Deferred:
        if self.closed:
            return b""
        if isinstance(message, tp.Connect):
            self.client = message.client
            self.relayed = message.client.startswith(RELAY_CLIENT)
        if isinstance(message, tp.GetGames):  # the whole cluster's, whoever runs this session's game
            return defer.ensureDeferred(self._games(frame))
        if self.mode in ("remote", "local"):
            if isinstance(message, tp.GetIDSequence):
                return defer.ensureDeferred(self._listed(message, frame))
            return self._serve(message, frame)
        if isinstance(message, (tp.Login, tp.CreateAccount)):
            return defer.ensureDeferred(self._route(message, frame))
        if isinstance(message, (tp.GetFeatures, tp.GetTimeRemaining)):
            placement = self.node.placement(None)
            if placement is not None and placement.owned and self.node.local(None) is None:
                if isinstance(message, tp.GetFeatures):
                    return self._encode(self._features(placement.account_creation), frame.sequence)
                return defer.ensureDeferred(self._ask_owner(placement, frame))
        return self.local.handle(message, frame.sequence)

    def _serve(self, message: tp.Message, frame: Frame) -> bytes | defer.Deferred:
        """A logged-in session's request: relayed to the owner, or served here."""
        if self.mode == "remote":
            return defer.ensureDeferred(self._forward(message, frame))
        return self._serve_locally(message, frame)

    def _encode(self, message: tp.Message, sequence: int) -> bytes:
        if isinstance(message, tp.Fail):
            message = tp.fit_fail(message, self.version)
        return tp.encode(message, self.version, sequence)

    @staticmethod
    def _features(account_creation: bool) -> tp.Features:
        features = [FeatureId.KEEP_ALIVE, FeatureId.PROPERTY_CALC]
        if account_creation:
            features.append(FeatureId.ACCOUNT_CREATE)
        return tp.Features(tuple(features))

    # -- before login: finding the game ----------------------------------------------------

    async def _route(self, message: tp.Login | tp.CreateAccount, frame: Frame) -> bytes:
        user, name = split_login(message.username)
        deadline = self.node.reactor.seconds() + self.node.settings.relay_timeout
        refreshed = False
        existed: bool | None = None  # the account, before a CreateAccount was sent
        lost = False  # the answer to a CreateAccount sent was lost
        while not self.closed:
            placement = self.node.placement(name)
            if placement is None and not refreshed:
                refreshed = True
                await self.node.refresh()  # a game created a moment ago
                continue
            routed_to = self.node.local(name)
            if placement is None or routed_to is not None:
                here = await self._route_locally(message, frame, placement)
                if routed_to is not None and self.mode is None and _refused_for_now(here):
                    # Refused, nothing stored: was it because the game left this node meanwhile
                    # (a node that wakes from a freeze handles what came during it before it
                    # learns that its games moved)? Then it goes to the game's new owner.
                    await self.node.refresh()
                    if self.node.local(name) is not routed_to and self.node.reactor.seconds() < deadline:
                        log.info(
                            "game {game}: left this node while a {request} was handled; routed again",
                            game=name,
                            request=type(message).__name__,
                        )
                        continue
                if lost and placement is not None:
                    here = await self._created_after_all(message, placement.game_id, user, existed, here)
                return here
            left = deadline - self.node.reactor.seconds()
            if left <= 0:
                return self._encode(tp.Fail(FailCode.UNAVAILABLE_TEMPORARILY, AWAY_TEXT), frame.sequence)
            if placement.node == self.node.name:
                await self.node.arrival(placement.name, left)
                continue
            if self.relayed:
                await self.node.refresh()
                if self.node.local(name) is None:
                    return self._encode(tp.Fail(FailCode.UNAVAILABLE_TEMPORARILY, NOT_HERE), frame.sequence)
                continue
            if not placement.owned:
                await self.node.refresh()
                await sleep(self.node.reactor, min(left, 0.2))
                continue
            explicit = type(message)(*((f"{user}@{placement.name}",) + _fields(message)[1:]))
            if isinstance(message, tp.CreateAccount) and existed is None:
                existed = await self._account_exists(placement.game_id, user)
            answer = await self._via_owner(placement, explicit)
            if answer is None:
                lost = lost or isinstance(message, tp.CreateAccount)
                await self.node.refresh()
                await sleep(self.node.reactor, min(left, 0.2))
                continue
            reply = decode_answer(answer)
            if isinstance(reply, tp.Fail) and reply.message == NOT_HERE:
                await self.node.refresh()
                continue
            if isinstance(message, tp.Login) and isinstance(reply, tp.Okay):
                self.mode = "remote"
                self._logged_in(user, message.password, placement.name, placement.game_id)
                await self._open_ledger()
            if lost:
                return await self._created_after_all(
                    message, placement.game_id, user, existed, answer_bytes(answer, frame.sequence)
                )
            return answer_bytes(answer, frame.sequence)
        return b""

    async def _route_locally(self, message, frame: Frame, placement) -> bytes:
        result: bytes = await defer.maybeDeferred(self.local.handle, message, frame.sequence)  # type: ignore[call-overload]
        if (
            isinstance(message, tp.Login)
            and self.local.state is State.PLAYING
            and self.local.game is not None
        ):
            self.mode = "local"
            user, _ = split_login(message.username)
            game = self.local.game
            self._logged_in(user, message.password, game.setup.name, game.id)
            await self._open_ledger()
            if game.closed:  # the game left this node while the login was checked
                self._departed(game.id)
        return result

    def _logged_in(self, user: str, password: str, game_name: str, game_id: int) -> None:
        self.credentials = (user, password)
        self.game_name, self.game_id = game_name, game_id

    async def _via_owner(self, placement, message: tp.Message) -> list[Frame] | None:
        """Send `message` to the game's owner on this session's upstream; None if unreachable."""
        try:
            upstream = await self._upstream_to(placement)
            body = tp.encode_body(message, self.version)
            return await self._exchange(upstream, Frame(self.version, 0, 1, message.TYPE, body))
        except UpstreamLost:
            return None

    async def _ask_owner(self, placement, frame: Frame) -> bytes:
        try:
            upstream = await self._upstream_to(placement)
            return answer_bytes(await self._exchange(upstream, frame), frame.sequence)
        except UpstreamLost:
            local: bytes = await defer.maybeDeferred(  # type: ignore[call-overload]
                self.local.handle, decode_answer([frame]), frame.sequence
            )
            return local

    async def _upstream_to(self, placement) -> Upstream:
        if self.upstream is not None and not self.upstream.lost and self.upstream_node == placement.node:
            return self.upstream
        self._drop_upstream()
        upstream: Upstream = await connect_upstream(
            self.node.reactor,
            placement.advertise,
            self.version,
            self._pushed,
            self._upstream_lost,
            self.node.settings.relay_answer_timeout,
        )
        answer = await upstream.request(tp.Connect(f"{RELAY_CLIENT} {self.node.name} for {self.client}"))
        if not isinstance(decode_answer(answer), tp.Okay):
            upstream.close()
            raise UpstreamLost(f"node {placement.node} refused the relay")
        self.upstream, self.upstream_node, self.upstream_epoch = upstream, placement.node, placement.epoch
        return upstream

    def _moved(self, game_id: int) -> None:
        """A claim round saw this session's game leave the node it is relayed to (moved, or
        its owner died or was cut off): give that owner up now, rather than when it answers
        or its answer's deadline passes; the request under way, or the idle session, is
        carried over to the new owner (`_upstream_lost`, `_forward`)."""
        upstream = self.upstream
        if self.closed or self.mode != "remote" or game_id != self.game_id or upstream is None:
            return
        placement = self.node.by_id.get(game_id)
        if placement is not None and placement.node == self.upstream_node:
            return
        log.info(
            "game {game}: left node {old} ({now}); the relayed session follows it",
            game=self.game_name,
            old=self.upstream_node,
            now=f"now on node {placement.node}"
            if placement is not None and placement.owned
            else "no owner yet",
        )
        upstream.give_up()

    def _drop_upstream(self) -> None:
        upstream, self.upstream = self.upstream, None
        if upstream is not None:
            upstream.on_lost = lambda: None
            upstream.close()

    async def _exchange(self, upstream: Upstream, frame: Frame) -> list[Frame]:
        self._exchanging += 1
        try:
            return await upstream.exchange(frame)
        finally:
            self._exchanging -= 1

    def _pushed(self, frame: Frame) -> None:
        if not self.closed and self.mode in ("remote", None):
            self.push(frame.to_bytes())

    def _upstream_lost(self) -> None:
        # An answer being waited for fails by itself and recovers there; an idle session is
        # carried over now, so that it keeps receiving the game's news.
        if self.mode == "remote" and not self._exchanging and not self.closed:
            self._recover()

    # -- logged in -------------------------------------------------------------------------

    async def _forward(self, message: tp.Message, frame: Frame) -> bytes:
        placement = self.node.placement(self.game_name)
        turn = (placement.last_turn + 1) if placement is not None else 0
        upstream = self.upstream
        try:
            if upstream is None:
                raise UpstreamLost("no connection to the owner")
            answer = answer_bytes(await self._exchange(upstream, frame), frame.sequence)
        except UpstreamLost:
            if not await self._recover():
                return b""
            return await self._repeat(message, frame, turn)
        self._note_answer(message, answer)
        return answer

    def _serve_locally(self, message: tp.Message, frame: Frame) -> bytes | defer.Deferred:
        game = self.local.game
        if game is None:  # the local session logged itself out (a removed player)
            return self.local.handle(message, frame.sequence)
        leaving = self.node.leaving_game(game.id)
        if leaving is not None:
            return leaving.addCallback(lambda _: self.handle_frame(message, frame))
        gid = game.id
        self.node.begin(gid)
        try:
            result = self.local.handle(message, frame.sequence)
        except Exception:
            self.node.end(gid)
            raise
        if not isinstance(result, defer.Deferred):
            self.node.end(gid)
            self._note_answer(message, result)
            return result
        outer: defer.Deferred = defer.Deferred()
        turn = game.state.turn + 1
        abandoned: list[bool] = []

        def answered(value: Any) -> None:
            self.node.end(gid)
            if self._abandon is abandon:
                self._abandon = None
            if not abandoned and not outer.called:
                self._note_answer(message, value)
                outer.callback(value)

        def abandon() -> None:
            abandoned.append(True)
            self._abandon = None
            d = defer.ensureDeferred(self._carry_over_request(message, frame, turn))

            def carried_over(value: Any) -> None:
                if not outer.called:
                    outer.callback(b"" if isinstance(value, (Exception, Failure)) else value)

            d.addBoth(carried_over)

        self._abandon = abandon
        result.addBoth(answered)
        return outer


def _refused_for_now(answer: bytes) -> bool:
    """Whether `answer` is the Fail of a request the game's database refused with nothing
    stored (`server.tp.errors.STORE_UNAVAILABLE_TEXT`), which may be sent again as it is."""
    reply = decode_answer(frames_of(answer))
    return (
        isinstance(reply, tp.Fail)
        and reply.code == FailCode.UNAVAILABLE_TEMPORARILY
        and reply.message == STORE_UNAVAILABLE_TEXT
    )


def _fields(message: tp.Message) -> tuple:
    from dataclasses import astuple

    return astuple(message)  # type: ignore[call-overload]  # every TP message is a dataclass
