"""One client connection's conversation (spec/protocol.md §5, §10): a state machine and a
dispatch table from request class to command.

The session does no I/O. `handle(message, sequence)` returns the bytes to write (or a Deferred
of them); `push` is how it sends asynchronous frames (TimeRemaining, sequence 0). Before login
only the frames of §5.4 (and Ping) are accepted.

Like AMP's responders, the pieces are apart: `COMMANDS` says, per request class, which handler
answers it, whether it is allowed before login and which references a refusal carries; the
handler returns its answer as a message (or a list of items, for requests answered with
Sequence + N, as `protocol.replies` declares for both ends) or raises; the encoding and the
error map (`server.tp.errors`) are shared by all. Handlers read the game from one snapshot
(`self.snapshot`) and write through the game service. Handlers for one game wait while that
game is resolving a turn, so after TimeRemaining(0) a client sees only the new turn.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from twisted.internet import defer
from twisted.logger import Logger
from twisted.python.failure import Failure

import protocol as tp
from protocol import FailCode, FeatureId, ReferenceType, Version, fit_fail
from protocol.records import IdModtime
from protocol.replies import ReplyForm, reply_spec
from ruleset.orders import NOT_ALLOWED
from server.game.directory import GameDirectory
from server.game.game import Game
from server.game.passwords import split_login
from server.model.attendance import Presence
from server.model.refusals import Refused, clipped
from server.model.snapshot import GameSnapshot
from server.tp.errors import TPRefusal, fail, fail_for, internal_error
from server.views.tp import catalogue
from server.views.tp import frames as tp_frames
from server.views.tp.frame_cache import FrameCache
from server.views.tp.games import SERVER_TYPE, SERVER_VERSION, game_frame, time_remaining
from server.views.tp.universe import universe_of

log = Logger()

MAX_ID_LIST = 87378  # tpserver-cpp's MAX_ID_LIST_SIZE

Refs = tuple[tuple[int, int], ...]
#: An item of a Sequence answer: a message, or an object frame already encoded (type, body).
Item = tp.Message | tuple[int, bytes]


class State(enum.Enum):
    NEW = "new"  # waiting for Connect
    CONNECTED = "connected"  # Connect done, not logged in
    PLAYING = "playing"  # logged in to a game


@dataclass(frozen=True, slots=True)
class Command:
    """How one request class is served (AMP's Command, for TP requests)."""

    handler: Callable[..., Any]
    before_login: bool = False
    refs: Callable[[Any], Refs] = lambda message: ()


def _queue_ref(message: Any) -> Refs:
    return ((ReferenceType.ORDER_QUEUE, message.id),)


class Session:
    """The protocol state of one connection."""

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
        self._frames = frames or _private_frame_caches()
        self._unsubscribe: Callable[[], None] | None = None

    @property
    def snapshot(self) -> GameSnapshot:
        """The logged-in game as last published."""
        assert self.game is not None
        return self.game.snapshot

    # -- entry points --------------------------------------------------------------------

    def handle(self, message: tp.Message, sequence: int) -> bytes | defer.Deferred:
        """Answer one decoded request: bytes, or a Deferred firing with bytes."""
        command = COMMANDS.get(type(message))
        if self.state is State.NEW and not isinstance(message, tp.Connect):
            return self._encode(
                fail(FailCode.PROTOCOL, "First frame wasn't Connect, please try again"), sequence
            )
        if command is None:
            return self._encode(fail(FailCode.PROTOCOL, "Did not understand that frame type."), sequence)
        if self.state is not State.PLAYING and not command.before_login:
            return self._encode(
                fail(FailCode.FRAME, "Wrong type of frame in this state, please login first"), sequence
            )
        game = self.game if self.state is State.PLAYING else None
        if game is not None and game.busy and not isinstance(message, tp.Ping):
            # Wait for the new turn; while the store cannot keep it, answer "try again" at once.
            d = game.ready_or_refused()
            if isinstance(message, tp.FinishedTurn):
                # Sent while the turn was ending: it was meant for that turn, not the next one.
                d.addCallback(lambda _: self._encode(tp.Okay("Turn finished"), sequence))
            else:
                d.addCallback(lambda _: self._run(command, message, sequence))
            d.addErrback(
                lambda failure: self._encode(self._failure(failure.value, command, message), sequence)
            )
            return d
        return self._run(command, message, sequence)

    def connection_lost(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    # -- running a command ---------------------------------------------------------------

    def _run(self, command: Command, message: tp.Message, sequence: int) -> bytes | defer.Deferred:
        try:
            answer = command.handler(self, message)
        except Exception as error:
            return self._encode(self._failure(error, command, message), sequence)
        if isinstance(answer, defer.Deferred):
            answer.addCallbacks(
                lambda result: self._answer(message, result, sequence),
                lambda failure: self._encode(self._failure(failure.value, command, message), sequence),
            )
            return answer
        return self._answer(message, answer, sequence)

    def _failure(self, error: BaseException, command: Command, message: tp.Message) -> tp.Fail:
        answer = fail_for(error, command.refs(message))
        if answer is None:
            log.failure("handler failed for {message}", Failure(error), message=type(message).__name__)
            return internal_error()
        return answer

    def _answer(self, request: tp.Message, answer: tp.Message | list[Item], sequence: int) -> bytes:
        """Encode a handler's answer in the form `protocol.replies` declares for the request."""
        if isinstance(answer, list):
            spec = reply_spec(request, self.version)
            if spec.form is ReplyForm.LIST and spec.lone_when_one and len(answer) == 1:
                return self._encode(answer[0], sequence)
            return self._sequence(answer, sequence)
        return self._encode(answer, sequence)

    # -- encoding ------------------------------------------------------------------------

    def _encode(self, item: Item, sequence: int) -> bytes:
        if isinstance(item, tuple):
            return tp.frame_bytes(self.version, sequence, item[0], item[1])
        if isinstance(item, tp.Fail):
            item = fit_fail(item, self.version)
        return tp.encode(item, self.version, sequence)

    def _sequence(self, items: list[Item], sequence: int) -> bytes:
        """Sequence(N) and N frames, in one write."""
        parts = [tp.encode(tp.Sequence(len(items)), self.version, sequence)]
        parts.extend(self._encode(item, sequence) for item in items)
        return b"".join(parts)

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

    # -- before login --------------------------------------------------------------------

    def on_connect(self, message: tp.Connect) -> tp.Message:
        self.state = State.CONNECTED if self.state is State.NEW else self.state
        return tp.Okay(f"Protocol check ok, continue! Welcome to {SERVER_TYPE} {SERVER_VERSION}")

    def on_ping(self, message: tp.Ping) -> tp.Message:
        return tp.Okay("Pong")

    def on_get_features(self, message: tp.GetFeatures) -> tp.Message:
        features = [FeatureId.KEEP_ALIVE, FeatureId.PROPERTY_CALC]
        game = self.game or self.directory.default
        if game is not None and game.setup.account_creation:
            features.append(FeatureId.ACCOUNT_CREATE)
        return tp.Features(tuple(features))

    def on_set_filters(self, message: tp.SetFilters) -> tp.Message:
        if message.filters:
            raise TPRefusal(FailCode.UNAVAILABLE_PERMANENTLY, "Not all filters specified are available")
        return tp.Okay("No filters")

    def on_get_games(self, message: tp.GetGames) -> list[Item]:
        games = self.directory.ordered()
        if not games:
            raise TPRefusal(FailCode.NO_SUCH_THING, "No games on this server")
        return [game_frame(g.snapshot, self.host, self.port, g.clock.seconds()) for g in games]

    def on_get_time_remaining(self, message: tp.GetTimeRemaining) -> tp.Message:
        game = self.game or self.directory.default
        if game is None:
            return tp.TimeRemaining(-1)
        snapshot = game.snapshot
        return time_remaining(snapshot, self.version, snapshot.seconds_left(game.clock.seconds()), 0)

    def _snapshot_published(self, snapshot: GameSnapshot) -> None:
        """News of the logged-in game: a timer announcement is pushed as TimeRemaining; a
        player an operator removed, or who resigned, may not stay logged in."""
        gone = (
            "removed"
            if self.player in snapshot.removed_players
            else "resigned"
            if self.player is not None and snapshot.presence(self.player) is Presence.RESIGNED
            else None
        )
        if gone is not None and self.close is not None:
            log.info(
                "game {game}: closing the connection of {gone} player {player}",
                game=snapshot.name,
                gone=gone,
                player=self.player,
            )
            self.connection_lost()
            self.close()
            return
        news = snapshot.announcement
        if news is not None:
            frame = time_remaining(snapshot, self.version, news.seconds, news.reason)
            self.push(tp.encode(frame, self.version, 0))

    def on_create_account(self, message: tp.CreateAccount) -> defer.Deferred:
        username, game_name = split_login(message.username)
        game = self.directory.find(game_name)
        if game is None:
            raise TPRefusal(FailCode.NO_SUCH_THING, f"No such game: {_game_named(game_name)}")
        d = game.create_account(username, message.password, message.email, message.comment)

        def created(player: int) -> tp.Message:
            log.info(
                "game {game}: account {user} created (player {player})",
                game=game.setup.name,
                user=username,
                player=player,
            )
            return tp.Okay("Account created.")

        return d.addCallback(created)

    def on_login(self, message: tp.Login) -> defer.Deferred:
        if self.state is State.PLAYING:
            raise TPRefusal(FailCode.FRAME, "Already logged in")
        username, game_name = split_login(message.username)
        game = self.directory.find(game_name)
        if game is None:
            raise TPRefusal(FailCode.FRAME, f"Login Error - no such game {_game_named(game_name)}")
        if game.player_id(username) is None and game.setup.auto_add:
            d = game.create_account(username, message.password, creation_setting_applies=False)
        else:
            d = game.authenticate(username, message.password)  # a read: the seat stays as it is
        return d.addCallback(lambda player: self._logged_in(game, player))

    def _logged_in(self, game: Game, player: int) -> tp.Message:
        self.game, self.player, self.state = game, player, State.PLAYING
        self._unsubscribe = game.subscribe(self._snapshot_published)
        log.info("game {game}: player {player} logged in", game=game.setup.name, player=player)
        return tp.Okay("Welcome")

    # -- objects -------------------------------------------------------------------------

    def on_get_object_ids(self, message: tp.GetObjectIDs) -> tp.Message:
        snapshot = self.snapshot
        return self._id_list(
            "objects",
            message,
            tp.ObjectIDs,
            lambda: [IdModtime(i, snapshot.modtime(("object", i))) for i in universe_of(snapshot).ids],
        )

    def _object_item(self, snapshot: GameSnapshot, object_id: int) -> Item:
        assert self.player is not None and self.game is not None
        cache = self._frames(self.game.id)
        body = tp_frames.object_body(snapshot, cache, object_id, self.player, self.version)
        if body is None:
            return fail(FailCode.NO_SUCH_THING, "No such object", [(ReferenceType.OBJECT, object_id)])
        return (tp.FrameType.OBJECT, body)

    def on_get_objects_by_id(self, message: tp.GetObjectsByID) -> list[Item]:
        snapshot = self.snapshot
        return self._each(message.ids, lambda i: self._object_item(snapshot, i))

    @staticmethod
    def _objects_near(snapshot: GameSnapshot, position: tuple[int, int, int], radius: int) -> list[int]:
        x, y, z = position
        found = []
        for obj in universe_of(snapshot):
            ox, oy, oz = obj.position
            reach = radius + obj.size // 2
            if (ox - x) ** 2 + (oy - y) ** 2 + (oz - z) ** 2 <= reach * reach:
                found.append(obj.id)
        return found

    def on_get_objects_by_pos(self, message: tp.GetObjectsByPos) -> list[Item]:
        snapshot = self.snapshot
        near = self._objects_near(snapshot, message.position, message.radius)
        return [self._object_item(snapshot, i) for i in near]

    def on_get_object_ids_by_pos(self, message: tp.GetObjectIDsByPos) -> tp.Message:
        snapshot = self.snapshot
        near = self._objects_near(snapshot, message.position, message.radius)
        return tp.ObjectIDs(0, 0, tuple(IdModtime(i, snapshot.modtime(("object", i))) for i in near), -1)

    def on_get_object_ids_by_container(self, message: tp.GetObjectIDsByContainer) -> tp.Message:
        snapshot = self.snapshot
        obj = universe_of(snapshot).get(message.id)
        if obj is None:
            raise TPRefusal(FailCode.NO_SUCH_THING, "No such object", [(ReferenceType.OBJECT, message.id)])
        ids = tuple(IdModtime(i, snapshot.modtime(("object", i))) for i in obj.children)
        return tp.ObjectIDs(0, 0, ids, -1)

    def on_get_object_desc(self, message: tp.GetObjectDesc) -> list[Item]:
        return self._each(
            message.ids,
            lambda i: (
                catalogue.OBJECT_DESCS.get(i)
                or fail(FailCode.NO_SUCH_THING, "No such object type", [(ReferenceType.OBJECT_TYPE, i)])
            ),
        )

    def on_get_object_desc_ids(self, message: tp.GetObjectDescIDs) -> tp.Message:
        return self._catalogue_ids("objectdescs", catalogue.OBJECT_DESCS, message, tp.ObjectDescIDs)

    def on_modify_object(self, message: tp.Message) -> tp.Message:
        raise TPRefusal(FailCode.UNAVAILABLE_PERMANENTLY, "Objects cannot be modified in TaE")

    # -- orders --------------------------------------------------------------------------

    def on_get_order_desc(self, message: tp.GetOrderDesc) -> list[Item]:
        return self._lookup(catalogue.ORDER_DESCS, message.ids, "order type", ReferenceType.ORDER_TYPE)

    def on_get_order_desc_ids(self, message: tp.GetOrderDescIDs) -> tp.Message:
        return self._catalogue_ids("orderdescs", catalogue.ORDER_DESCS, message, tp.OrderDescIDs)

    def _require_queue(self, snapshot: GameSnapshot, queue_id: int) -> None:
        """Refuse unless this player may see the queue (TP03: the object's orders)."""
        assert self.player is not None
        if not tp_frames.can_see_queue(snapshot, queue_id, self.player):
            name = "No such Object" if self.version == Version.TP03 else "No such OrderQueue"
            raise TPRefusal(FailCode.NO_SUCH_THING, name, [(ReferenceType.ORDER_QUEUE, queue_id)])

    def on_get_order(self, message: tp.GetOrder) -> list[Item]:
        snapshot = self.snapshot
        self._require_queue(snapshot, message.id)
        queue = snapshot.queue(message.id)

        def one(slot: int) -> Item:
            if not 0 <= slot < len(queue):
                return fail(
                    FailCode.UNAVAILABLE_TEMPORARILY,
                    "Could not get Order",
                    [(ReferenceType.ORDER_QUEUE, message.id), (ReferenceType.ORDER_INSTANCE, slot)],
                )
            order = queue[slot].order
            return tp_frames.order_message(message.id, slot, order.type, order.target)

        return self._each(message.slots, one)

    @staticmethod
    def _target(order: tp.Order) -> int:
        for arg in order.args:
            if isinstance(arg, tp.ObjectArg):
                return int(arg.object_id)
        return 0

    def on_insert_order(self, message: tp.InsertOrder) -> defer.Deferred:
        assert self.game is not None and self.player is not None
        target = self._target(message)
        d = self.game.insert_order(self.player, message.id, message.slot, message.type, target)

        def inserted(slot: int) -> tp.Message:
            if self.version == Version.TP03:
                return tp.Okay("Order Added")
            return tp_frames.order_message(message.id, slot, message.type, target)

        return d.addCallback(inserted)

    def on_probe_order(self, message: tp.ProbeOrder) -> tp.Message:
        assert self.game is not None and self.player is not None
        target = self._target(message)
        problem = self.game.check_order(self.player, message.id, message.type, target)
        if problem is NOT_ALLOWED:  # tpserver-cpp's wording and code for a probe
            raise TPRefusal(
                FailCode.UNAVAILABLE_PERMANENTLY,
                "The order to be probed is not allowed on this object",
                _queue_ref(message),
            )
        if problem is not None:
            raise TPRefusal(int(problem.code), problem.message, _queue_ref(message))
        return tp_frames.order_message(message.id, message.slot, message.type, target)

    def on_remove_order(self, message: tp.RemoveOrder) -> defer.Deferred:
        assert self.game is not None and self.player is not None
        if not message.slots:
            raise TPRefusal(FailCode.NO_SUCH_THING, "You didn't ask for any data, try again")
        self._require_queue(self.snapshot, message.id)
        game, player = self.game, self.player
        results: list[Item] = []

        def remove(_: object, slot: int) -> defer.Deferred:
            d = game.remove_order(player, message.id, slot)
            d.addCallbacks(
                lambda _: results.append(tp.Okay("Order removed")),
                lambda failure: results.append(self._not_removed(failure, message.id, slot)),
            )
            return d

        d: defer.Deferred = defer.succeed(None)
        for slot in message.slots:
            d.addCallback(remove, slot)
        return d.addCallback(lambda _: results)

    @staticmethod
    def _not_removed(failure: Any, queue_id: int, slot: int) -> tp.Fail:
        """A slot that could not be removed gets tpserver-cpp's Fail; store trouble its own."""
        refs = ((ReferenceType.ORDER_QUEUE, queue_id), (ReferenceType.ORDER_INSTANCE, slot))
        if isinstance(failure.value, Refused):
            return fail(FailCode.UNAVAILABLE_TEMPORARILY, "Could not remove Order", refs)
        answer = fail_for(failure.value, refs)
        if answer is None:
            log.failure("removing an order failed", failure)
            return internal_error()
        return answer

    def _my_queues(self, snapshot: GameSnapshot) -> list[int]:
        return [0] + [obj.id for obj in universe_of(snapshot) if obj.has_queue and obj.owner == self.player]

    def on_get_order_queue_ids(self, message: tp.GetOrderQueueIDs) -> tp.Message:
        snapshot = self.snapshot
        return self._id_list(
            "orderqueues",
            message,
            tp.OrderQueueIDs,
            lambda: [IdModtime(q, tp_frames.queue_modtime(snapshot, q)) for q in self._my_queues(snapshot)],
        )

    def on_get_order_queue(self, message: tp.GetOrderQueue) -> list[Item]:
        snapshot = self.snapshot
        assert self.player is not None
        player = self.player

        def one(queue_id: int) -> Item:
            if not tp_frames.can_see_queue(snapshot, queue_id, player):
                return fail(
                    FailCode.NO_SUCH_THING, "No such OrderQueue", [(ReferenceType.ORDER_QUEUE, queue_id)]
                )
            return tp_frames.order_queue_message(snapshot, queue_id)

        return self._each(message.ids, one)

    # -- turns ---------------------------------------------------------------------------

    def on_finished_turn(self, message: tp.FinishedTurn) -> defer.Deferred:
        assert self.game is not None and self.player is not None
        return self.game.finish_turn(self.player).addCallback(lambda _: tp.Okay("Turn finished"))

    # -- boards and messages -------------------------------------------------------------

    def _require_board(self, board_id: int) -> int:
        """Board 0 and the player's own id name the player's board; no other is visible."""
        assert self.player is not None
        if board_id not in (0, self.player):
            raise TPRefusal(FailCode.NO_SUCH_THING, "No such board", [(ReferenceType.BOARD, board_id)])
        return self.player

    def on_get_board_ids(self, message: tp.GetBoardIDs) -> tp.Message:
        snapshot, player = self.snapshot, self.player
        assert player is not None
        return self._id_list(
            "boards",
            message,
            tp.BoardIDs,
            lambda: [IdModtime(player, tp_frames.board_modtime(snapshot, player))],
        )

    def on_get_boards(self, message: tp.GetBoards) -> list[Item]:
        snapshot = self.snapshot

        player = self.player
        assert player is not None

        def one(board_id: int) -> Item:
            if board_id not in (0, player):
                return fail(FailCode.NO_SUCH_THING, "No such board", [(ReferenceType.BOARD, board_id)])
            return tp_frames.board_frame(snapshot, player)

        return self._each(message.ids, one)

    def on_get_message(self, message: tp.GetMessage) -> list[Item]:
        player = self._require_board(message.id)
        snapshot = self.snapshot

        def one(slot: int) -> Item:
            frame = tp_frames.board_message_frame(snapshot, player, slot)
            if frame is None:
                return fail(
                    FailCode.NO_SUCH_THING,
                    "No such message",
                    [(ReferenceType.BOARD, message.id), (ReferenceType.MESSAGE, slot)],
                )
            return frame

        return self._each(message.slots, one)

    def on_remove_message(self, message: tp.RemoveMessage) -> defer.Deferred:
        assert self.game is not None
        player = self._require_board(message.id)
        if not message.slots:
            raise TPRefusal(FailCode.NO_SUCH_THING, "You didn't ask for any data, try again")
        game = self.game
        results: list[Item] = []

        def remove(_: object, slot: int) -> defer.Deferred:
            d = game.remove_message(player, slot)
            d.addCallbacks(
                lambda _: results.append(tp.Okay("Message removed")),
                lambda failure: results.append(fail_for(failure.value) or internal_error()),
            )
            return d

        d: defer.Deferred = defer.succeed(None)
        for slot in message.slots:
            d.addCallback(remove, slot)
        return d.addCallback(lambda _: results)

    def on_post_message(self, message: tp.PostMessage) -> tp.Message:
        raise TPRefusal(FailCode.UNAVAILABLE_PERMANENTLY, "Posting messages is not supported by TaE")

    # -- catalogues ----------------------------------------------------------------------

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

    def on_get_resource_ids(self, message: tp.GetResourceIDs) -> tp.Message:
        return self._catalogue_ids("resources", catalogue.RESOURCES, message, tp.ResourceIDs)

    def on_get_resource(self, message: tp.GetResource) -> list[Item]:
        return self._lookup(catalogue.RESOURCES, message.ids, "resource", ReferenceType.RESOURCE)

    def on_get_category_ids(self, message: tp.GetCategoryIDs) -> tp.Message:
        return self._catalogue_ids("categories", catalogue.CATEGORIES, message, tp.CategoryIDs)

    def on_get_category(self, message: tp.GetCategory) -> list[Item]:
        return self._lookup(catalogue.CATEGORIES, message.ids, "category", ReferenceType.CATEGORY)

    def on_get_component_ids(self, message: tp.GetComponentIDs) -> tp.Message:
        return self._catalogue_ids("components", catalogue.COMPONENTS, message, tp.ComponentIDs)

    def on_get_component(self, message: tp.GetComponent) -> list[Item]:
        return self._lookup(catalogue.COMPONENTS, message.ids, "component", ReferenceType.COMPONENT)

    def on_get_property_ids(self, message: tp.GetPropertyIDs) -> tp.Message:
        return self._catalogue_ids("properties", catalogue.PROPERTIES, message, tp.PropertyIDs)

    def on_get_property(self, message: tp.GetProperty) -> list[Item]:
        return self._lookup(catalogue.PROPERTIES, message.ids, "property", ReferenceType.PROPERTY)

    def on_refused_edit(self, message: tp.Message) -> tp.Message:
        raise TPRefusal(FailCode.UNAVAILABLE_PERMANENTLY, "Server does not support this frame type")

    def on_get_design_ids(self, message: tp.GetDesignIDs) -> tp.Message:
        snapshot = self.snapshot
        return self._id_list(
            "designs",
            message,
            tp.DesignIDs,
            lambda: [IdModtime(fid, snapshot.modtime(("design", fid))) for fid in snapshot.state.fleets],
        )

    def on_get_design(self, message: tp.GetDesign) -> list[Item]:
        snapshot, player = self.snapshot, self.player
        assert player is not None
        return self._each(
            message.ids,
            lambda i: (
                tp_frames.design_message(snapshot, i, player)
                or fail(FailCode.NO_SUCH_THING, "No such design", [(ReferenceType.DESIGN, i)])
            ),
        )

    # -- players -------------------------------------------------------------------------

    def on_get_player_ids(self, message: tp.GetPlayerIDs) -> tp.Message:
        snapshot = self.snapshot
        return self._id_list(
            "players",
            message,
            tp.PlayerIDs,
            lambda: [IdModtime(p.id, snapshot.modtime(("player", p.id))) for p in snapshot.state.players],
        )

    def on_get_player(self, message: tp.GetPlayer) -> list[Item]:
        snapshot = self.snapshot

        def one(player_id: int) -> Item:
            pid = self.player if player_id == 0 else player_id
            if pid is None or not snapshot.state.has_player(pid):
                return fail(FailCode.NO_SUCH_THING, "No such player", [(ReferenceType.PLAYER, player_id)])
            return tp_frames.player_message(snapshot, pid, self.player)

        return self._each(message.ids, one)


def _game_named(name: str | None) -> str:
    """A game name from a login, as a refusal quotes it (clipped: it is the peer's text)."""
    return clipped(name) if name is not None else "(none named, and no default game)"


def _private_frame_caches() -> Callable[[int], FrameCache]:
    """Frame caches for a session made without a listener (tests): one per game, its own."""
    caches: dict[int, FrameCache] = {}
    return lambda game_id: caches.setdefault(game_id, FrameCache())


COMMANDS: dict[type, Command] = {
    tp.Connect: Command(Session.on_connect, before_login=True),
    tp.Login: Command(Session.on_login, before_login=True),
    tp.Ping: Command(Session.on_ping, before_login=True),
    tp.GetFeatures: Command(Session.on_get_features, before_login=True),
    tp.SetFilters: Command(Session.on_set_filters, before_login=True),
    tp.GetGames: Command(Session.on_get_games, before_login=True),
    tp.GetTimeRemaining: Command(Session.on_get_time_remaining, before_login=True),
    tp.CreateAccount: Command(Session.on_create_account, before_login=True),
    tp.GetObjectIDs: Command(Session.on_get_object_ids),
    tp.GetObjectsByID: Command(Session.on_get_objects_by_id),
    tp.GetObjectsByPos: Command(Session.on_get_objects_by_pos),
    tp.GetObjectIDsByPos: Command(Session.on_get_object_ids_by_pos),
    tp.GetObjectIDsByContainer: Command(Session.on_get_object_ids_by_container),
    tp.GetObjectDesc: Command(Session.on_get_object_desc),
    tp.GetObjectDescIDs: Command(Session.on_get_object_desc_ids),
    tp.ModifyObject: Command(Session.on_modify_object),
    tp.GetOrderDesc: Command(Session.on_get_order_desc),
    tp.GetOrderDescIDs: Command(Session.on_get_order_desc_ids),
    tp.GetOrder: Command(Session.on_get_order),
    tp.InsertOrder: Command(Session.on_insert_order, refs=_queue_ref),
    tp.ProbeOrder: Command(Session.on_probe_order, refs=_queue_ref),
    tp.RemoveOrder: Command(Session.on_remove_order),
    tp.GetOrderQueueIDs: Command(Session.on_get_order_queue_ids),
    tp.GetOrderQueue: Command(Session.on_get_order_queue),
    tp.FinishedTurn: Command(Session.on_finished_turn),
    tp.GetBoardIDs: Command(Session.on_get_board_ids),
    tp.GetBoards: Command(Session.on_get_boards),
    tp.GetMessage: Command(Session.on_get_message),
    tp.RemoveMessage: Command(Session.on_remove_message),
    tp.PostMessage: Command(Session.on_post_message),
    tp.GetResourceIDs: Command(Session.on_get_resource_ids),
    tp.GetResource: Command(Session.on_get_resource),
    tp.GetCategoryIDs: Command(Session.on_get_category_ids),
    tp.GetCategory: Command(Session.on_get_category),
    tp.AddCategory: Command(Session.on_refused_edit),
    tp.RemoveCategory: Command(Session.on_refused_edit),
    tp.GetComponentIDs: Command(Session.on_get_component_ids),
    tp.GetComponent: Command(Session.on_get_component),
    tp.GetPropertyIDs: Command(Session.on_get_property_ids),
    tp.GetProperty: Command(Session.on_get_property),
    tp.GetDesignIDs: Command(Session.on_get_design_ids),
    tp.GetDesign: Command(Session.on_get_design),
    tp.AddDesign: Command(Session.on_refused_edit),
    tp.ModifyDesign: Command(Session.on_refused_edit),
    tp.RemoveDesign: Command(Session.on_refused_edit),
    tp.GetPlayerIDs: Command(Session.on_get_player_ids),
    tp.GetPlayer: Command(Session.on_get_player),
}
