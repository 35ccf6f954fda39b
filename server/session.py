"""One client connection's conversation (spec/protocol.md §5, §10): a state machine and a
dispatch table from message class to handler.

The session does no I/O. `handle(message, sequence)` returns the bytes to write (or a Deferred
of them); `push` is how it sends asynchronous frames (TimeRemaining, sequence 0). Before login
only the frames of §5.4 (and Ping) are accepted. Handlers for one game wait while that game is
resolving a turn, so after TimeRemaining(0) a client sees only the new turn.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable

from twisted.internet import defer
from twisted.logger import Logger

import protocol as tp
from protocol import FailCode, FeatureId, ReferenceType, Version
from protocol.records import GameConnection, GameParam, IdModtime, Reference
from ruleset import Phase
from ruleset.orders import NOT_ALLOWED, ProblemCode

from . import catalogue, frames
from .accounts import split_login
from .directory import GameDirectory
from .game import Game

log = Logger()

SERVER_VERSION = "0.1.0"
SERVER_TYPE = "tpserver-tae"
RULESET_NAME = "TaE"
RULESET_VERSION = "0.01"
MAX_ID_LIST = 87378  # tpserver-cpp's MAX_ID_LIST_SIZE


class State(enum.Enum):
    NEW = "new"  # waiting for Connect
    CONNECTED = "connected"  # Connect done, not logged in
    PLAYING = "playing"  # logged in to a game


def fail(code: int, text: str, refs: Iterable[tuple[int, int]] = ()) -> tp.Fail:
    return tp.Fail(code, text, tuple(Reference(t, i) for t, i in refs))


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

    # -- entry points --------------------------------------------------------------------

    def handle(self, message: tp.Message, sequence: int):
        """Answer one decoded request: bytes, or a Deferred firing with bytes."""
        handler = _HANDLERS.get(type(message))
        if self.state is State.NEW and not isinstance(message, tp.Connect):
            return self._one(
                fail(FailCode.PROTOCOL, "First frame wasn't Connect, please try again"), sequence
            )
        if handler is None:
            return self._one(fail(FailCode.PROTOCOL, "Did not understand that frame type."), sequence)
        if self.state is not State.PLAYING and type(message) not in _BEFORE_LOGIN:
            return self._one(
                fail(FailCode.FRAME, "Wrong type of frame in this state, please login first"), sequence
            )
        game = self.game if self.state is State.PLAYING else None
        if game is not None and game.busy:
            d = game.ready()
            if isinstance(message, tp.FinishedTurn):
                # Sent while the turn was ending: it was meant for that turn, not the next one.
                d.addCallback(lambda _: self._one(tp.Okay("Turn finished"), sequence))
            else:
                d.addCallback(lambda _: handler(self, message, sequence))
            return d
        return handler(self, message, sequence)

    def connection_lost(self) -> None:
        if self.game is not None:
            for listeners, listener in (
                (self.game.listeners, self._time_listener),
                (self.game.removal_listeners, self._player_removed),
            ):
                if listener in listeners:
                    listeners.remove(listener)

    def _player_removed(self, player: int) -> None:
        """An operator removed this connection's player: it may not stay logged in."""
        if player == self.player and self.close is not None:
            log.info(
                "game {game}: closing the connection of removed player {player}",
                game=self.game.setup.name,
                player=player,
            )
            self.close()

    # -- reply helpers -------------------------------------------------------------------

    def _one(self, message: tp.Message, sequence: int) -> bytes:
        return tp.encode(self._fit(message), self.version, sequence)

    def _fit(self, message: tp.Message) -> tp.Message:
        """TP03 has Fail codes 0-5 only and no references."""
        if isinstance(message, tp.Fail) and self.version == Version.TP03:
            code = message.code if message.code <= FailCode.PERMISSION_DENIED else FailCode.FRAME
            return tp.Fail(code, message.message, ())
        return message

    def _sequence(self, items: list, sequence: int) -> bytes:
        """Sequence(N) and N frames; items are messages or (frame type, cached body) pairs."""
        parts = [tp.encode(tp.Sequence(len(items)), self.version, sequence)]
        for item in items:
            if isinstance(item, tuple):
                parts.append(tp.frame_bytes(self.version, sequence, item[0], item[1]))
            else:
                parts.append(tp.encode(self._fit(item), self.version, sequence))
        return b"".join(parts)

    def _each(self, ids: tuple[int, ...], sequence: int, one: Callable[[int], object]) -> bytes:
        if not ids:
            return self._one(fail(FailCode.NO_SUCH_THING, "You didn't ask for any data, try again"), sequence)
        return self._sequence([one(i) for i in ids], sequence)

    def _id_list(
        self,
        kind: str,
        request: tp.GetIDSequence,
        sequence: int,
        reply_cls,
        items: Callable[[], list[IdModtime]],
    ) -> bytes:
        """A Get…IDs request (§2.1, §6.3): key -1 takes a snapshot, later keys page through it."""
        if request.key == -1:
            self._next_key += 1
            snapshot = items()
            if self.version == Version.TP04 and request.since >= 0:
                snapshot = [entry for entry in snapshot if entry.modtime > request.since]
            self.lists[kind] = (self._next_key, snapshot)
        elif kind not in self.lists or self.lists[kind][0] != request.key:
            return self._one(fail(FailCode.FRAME, "Invalid sequence key, start again with -1"), sequence)
        key, snapshot = self.lists[kind]
        total = len(snapshot)
        if request.start < 0 or request.start > total:
            return self._one(fail(FailCode.NO_SUCH_THING, "Starting number too high"), sequence)
        amount = total - request.start if request.amount == -1 else request.amount
        if amount < 0:
            return self._one(fail(FailCode.FRAME, "Amount must be -1 or positive"), sequence)
        amount = min(amount, total - request.start, MAX_ID_LIST)
        batch = tuple(snapshot[request.start : request.start + amount])
        remaining = total - request.start - len(batch)
        return self._one(reply_cls(key, remaining, batch, request.since), sequence)

    # -- before login --------------------------------------------------------------------

    def on_connect(self, message: tp.Connect, sequence: int) -> bytes:
        self.state = State.CONNECTED if self.state is State.NEW else self.state
        return self._one(
            tp.Okay(f"Protocol check ok, continue! Welcome to {SERVER_TYPE} {SERVER_VERSION}"), sequence
        )

    def on_ping(self, message: tp.Ping, sequence: int) -> bytes:
        return self._one(tp.Okay("Pong"), sequence)

    def on_get_features(self, message: tp.GetFeatures, sequence: int) -> bytes:
        features = [FeatureId.KEEP_ALIVE, FeatureId.PROPERTY_CALC]
        game = self.game or self.directory.default
        if game is not None and game.setup.account_creation:
            features.append(FeatureId.ACCOUNT_CREATE)
        return self._one(tp.Features(tuple(features)), sequence)

    def on_set_filters(self, message: tp.SetFilters, sequence: int) -> bytes:
        if message.filters:
            return self._one(
                fail(FailCode.UNAVAILABLE_PERMANENTLY, "Not all filters specified are available"), sequence
            )
        return self._one(tp.Okay("No filters"), sequence)

    def on_get_games(self, message: tp.GetGames, sequence: int) -> bytes:
        games = self.directory.ordered()
        if not games:
            return self._one(fail(FailCode.NO_SUCH_THING, "No games on this server"), sequence)
        if len(games) == 1:
            return self._one(self._game_frame(games[0]), sequence)
        return self._sequence([self._game_frame(g) for g in games], sequence)

    def _game_frame(self, game: Game) -> tp.Game:
        P = tp.GameParamId
        seconds = game.timer.seconds_left()
        next_turn = int(game.clock.seconds()) + seconds if seconds >= 0 else 0
        params = (
            GameParam(P.SHORT_NAME, game.setup.name, 0),
            GameParam(P.LONG_NAME, game.setup.description or game.setup.name, 0),
            GameParam(P.PLAYERS, "", len(game.state.players)),
            GameParam(P.OBJECTS, "", len(game.universe().ids)),
            GameParam(P.TURN, "", game.state.turn),
            GameParam(P.NEXT_TURN, "", next_turn),
            GameParam(P.PERIOD, "", game.setup.timer.turn_length),
        )
        connections = (GameConnection("tp", self.host, self.host, self.port),)
        return tp.Game(
            game.setup.name,
            "",
            ("0.3", "0.4"),
            SERVER_VERSION,
            SERVER_TYPE,
            RULESET_NAME,
            RULESET_VERSION,
            connections,
            params,
            "",
            game.setup.ctime,
        )

    def on_get_time_remaining(self, message: tp.GetTimeRemaining, sequence: int) -> bytes:
        game = self.game or self.directory.default
        if game is None:
            return self._one(tp.TimeRemaining(-1), sequence)
        return self._one(self._time_remaining(game, game.timer.seconds_left(), 0), sequence)

    def _time_remaining(self, game: Game, seconds: int, reason: int) -> tp.TimeRemaining:
        if self.version == Version.TP03:
            return tp.TimeRemaining(seconds)
        state = game.state
        name = f"Turn {state.turn + 1}"
        if state.phase is Phase.COMBAT:
            name += " (combat)"
        elif state.phase is Phase.OVER:
            name = "Game over"
        return tp.TimeRemaining(seconds, reason, state.turn, name, tuple(game.waiting_for()))

    def _time_listener(self, seconds: int, reason: int) -> None:
        if self.game is not None:
            self.push(tp.encode(self._time_remaining(self.game, seconds, reason), self.version, 0))

    def on_create_account(self, message: tp.CreateAccount, sequence: int):
        username, game_name = split_login(message.username)
        game = self.directory.find(game_name)
        if game is None:
            return self._one(fail(FailCode.NO_SUCH_THING, f"No such game: {game_name}"), sequence)
        if not game.setup.account_creation:
            return self._one(fail(FailCode.PERMISSION_DENIED, "Account creation Disabled"), sequence)
        d = game.create_account(username, message.password, message.email, message.comment)

        def created(result):
            player, problem = result
            if problem is not None:
                return self._one(fail(problem.code, problem.message), sequence)
            log.info(
                "game {game}: account {user} created (player {player})",
                game=game.setup.name,
                user=username,
                player=player,
            )
            return self._one(tp.Okay("Account created."), sequence)

        return d.addCallback(created)

    def on_login(self, message: tp.Login, sequence: int):
        if self.state is State.PLAYING:
            return self._one(fail(FailCode.FRAME, "Already logged in"), sequence)
        username, game_name = split_login(message.username)
        game = self.directory.find(game_name)
        bad = fail(FailCode.FRAME, "Login Error - bad username or password")
        if game is None:
            return self._one(fail(FailCode.FRAME, f"Login Error - no such game {game_name!r}"), sequence)
        if game.player_id(username) is None and game.setup.auto_add:
            d = game.create_account(username, message.password, creation_setting_applies=False)

            def added(result):
                if result[1] is not None:
                    return self._one(fail(result[1].code, result[1].message), sequence)
                return self._logged_in(game, result[0], sequence)

            return d.addCallback(added)
        player = game.check_login(username, message.password)
        if player is None:
            return self._one(bad, sequence)
        return self._logged_in(game, player, sequence)

    def _logged_in(self, game: Game, player: int, sequence: int) -> bytes:
        self.game, self.player, self.state = game, player, State.PLAYING
        game.listeners.append(self._time_listener)
        game.removal_listeners.append(self._player_removed)
        log.info("game {game}: player {player} logged in", game=game.setup.name, player=player)
        return self._one(tp.Okay("Welcome"), sequence)

    # -- objects -------------------------------------------------------------------------

    def _object_ids(self) -> list[IdModtime]:
        game = self.game
        return [IdModtime(i, game.modtimes.get(("object", i)) or 1) for i in game.universe().ids]

    def on_get_object_ids(self, message: tp.GetObjectIDs, sequence: int) -> bytes:
        return self._id_list("objects", message, sequence, tp.ObjectIDs, self._object_ids)

    def _object_item(self, object_id: int):
        body = frames.object_body(self.game, object_id, self.player, self.version)
        if body is None:
            return fail(FailCode.NO_SUCH_THING, "No such object", [(ReferenceType.OBJECT, object_id)])
        return (tp.FrameType.OBJECT, body)

    def on_get_objects_by_id(self, message: tp.GetObjectsByID, sequence: int) -> bytes:
        return self._each(message.ids, sequence, self._object_item)

    def _objects_near(self, position, radius: int) -> list[int]:
        x, y, z = position
        found = []
        for obj in self.game.universe():
            ox, oy, oz = obj.position
            reach = radius + obj.size // 2
            if (ox - x) ** 2 + (oy - y) ** 2 + (oz - z) ** 2 <= reach * reach:
                found.append(obj.id)
        return found

    def on_get_objects_by_pos(self, message: tp.GetObjectsByPos, sequence: int) -> bytes:
        return self._sequence(
            [self._object_item(i) for i in self._objects_near(message.position, message.radius)], sequence
        )

    def on_get_object_ids_by_pos(self, message: tp.GetObjectIDsByPos, sequence: int) -> bytes:
        ids = tuple(
            IdModtime(i, self.game.modtimes.get(("object", i)) or 1)
            for i in self._objects_near(message.position, message.radius)
        )
        return self._one(tp.ObjectIDs(0, 0, ids, -1), sequence)

    def on_get_object_ids_by_container(self, message: tp.GetObjectIDsByContainer, sequence: int) -> bytes:
        obj = self.game.universe().get(message.id)
        if obj is None:
            return self._one(
                fail(FailCode.NO_SUCH_THING, "No such object", [(ReferenceType.OBJECT, message.id)]), sequence
            )
        ids = tuple(IdModtime(i, self.game.modtimes.get(("object", i)) or 1) for i in obj.children)
        return self._one(tp.ObjectIDs(0, 0, ids, -1), sequence)

    def on_get_object_desc(self, message: tp.GetObjectDesc, sequence: int) -> bytes:
        return self._each(
            message.ids,
            sequence,
            lambda i: (
                catalogue.OBJECT_DESCS.get(i)
                or fail(FailCode.NO_SUCH_THING, "No such object type", [(ReferenceType.OBJECT_TYPE, i)])
            ),
        )

    def on_get_object_desc_ids(self, message: tp.GetObjectDescIDs, sequence: int) -> bytes:
        return self._id_list(
            "objectdescs",
            message,
            sequence,
            tp.ObjectDescIDs,
            lambda: [IdModtime(i, d.modtime) for i, d in sorted(catalogue.OBJECT_DESCS.items())],
        )

    def on_modify_object(self, message, sequence: int) -> bytes:
        return self._one(
            fail(FailCode.UNAVAILABLE_PERMANENTLY, "Objects cannot be modified in TaE"), sequence
        )

    # -- orders --------------------------------------------------------------------------

    def on_get_order_desc(self, message: tp.GetOrderDesc, sequence: int) -> bytes:
        return self._each(
            message.ids,
            sequence,
            lambda i: (
                catalogue.ORDER_DESCS.get(i)
                or fail(FailCode.NO_SUCH_THING, "No such order type", [(ReferenceType.ORDER_TYPE, i)])
            ),
        )

    def on_get_order_desc_ids(self, message: tp.GetOrderDescIDs, sequence: int) -> bytes:
        return self._id_list(
            "orderdescs",
            message,
            sequence,
            tp.OrderDescIDs,
            lambda: [IdModtime(i, d.modtime) for i, d in sorted(catalogue.ORDER_DESCS.items())],
        )

    def _queue_refused(self, queue_id: int, sequence: int) -> bytes | None:
        """A Fail unless this player may see the queue (TP03: the object's orders)."""
        if frames.can_see_queue(self.game, queue_id, self.player):
            return None
        name = "No such Object" if self.version == Version.TP03 else "No such OrderQueue"
        return self._one(
            fail(FailCode.NO_SUCH_THING, name, [(ReferenceType.ORDER_QUEUE, queue_id)]), sequence
        )

    def on_get_order(self, message: tp.GetOrder, sequence: int) -> bytes:
        refused = self._queue_refused(message.id, sequence)
        if refused is not None:
            return refused
        queue = self.game.queue(message.id)

        def one(slot: int):
            if not 0 <= slot < len(queue):
                return fail(
                    FailCode.UNAVAILABLE_TEMPORARILY,
                    "Could not get Order",
                    [(ReferenceType.ORDER_QUEUE, message.id), (ReferenceType.ORDER_INSTANCE, slot)],
                )
            order = queue[slot].order
            return frames.order_message(message.id, slot, order.type, order.target)

        return self._each(message.slots, sequence, one)

    def _target(self, order: tp.Order) -> int:
        for arg in order.args:
            if isinstance(arg, tp.ObjectArg):
                return arg.object_id
        return 0

    def on_insert_order(self, message: tp.InsertOrder, sequence: int):
        target = self._target(message)
        d = self.game.insert_order(self.player, message.id, message.slot, message.type, target)

        def inserted(result):
            slot, problem = result
            if problem is not None:
                return self._one(
                    fail(problem.code, problem.message, [(ReferenceType.ORDER_QUEUE, message.id)]), sequence
                )
            if self.version == Version.TP03:
                return self._one(tp.Okay("Order Added"), sequence)
            return self._one(frames.order_message(message.id, slot, message.type, target), sequence)

        return d.addCallback(inserted)

    def on_probe_order(self, message: tp.ProbeOrder, sequence: int) -> bytes:
        target = self._target(message)
        problem = self.game.probe_order(self.player, message.id, message.type, target)
        if problem is not None:
            code = problem.code
            text = problem.message
            if problem is NOT_ALLOWED:  # tpserver-cpp's wording and code for a probe
                code, text = (
                    ProblemCode.UNAVAILABLE_PERMANENTLY,
                    "The order to be probed is not allowed on this object",
                )
            return self._one(fail(code, text, [(ReferenceType.ORDER_QUEUE, message.id)]), sequence)
        return self._one(frames.order_message(message.id, message.slot, message.type, target), sequence)

    def on_remove_order(self, message: tp.RemoveOrder, sequence: int):
        if not message.slots:
            return self._one(fail(FailCode.NO_SUCH_THING, "You didn't ask for any data, try again"), sequence)
        refused = self._queue_refused(message.id, sequence)
        if refused is not None:
            return refused
        d = self.game.remove_orders(self.player, message.id, message.slots)

        def removed(results):
            return self._sequence(
                [
                    tp.Okay("Order removed")
                    if problem is None
                    else fail(
                        FailCode.UNAVAILABLE_TEMPORARILY,
                        "Could not remove Order",
                        [(ReferenceType.ORDER_QUEUE, message.id), (ReferenceType.ORDER_INSTANCE, slot)],
                    )
                    for slot, problem in results
                ],
                sequence,
            )

        return d.addCallback(removed)

    def _my_queues(self) -> list[int]:
        game = self.game
        return [0] + [obj.id for obj in game.universe() if obj.has_queue and obj.owner == self.player]

    def on_get_order_queue_ids(self, message: tp.GetOrderQueueIDs, sequence: int) -> bytes:
        return self._id_list(
            "orderqueues",
            message,
            sequence,
            tp.OrderQueueIDs,
            lambda: [IdModtime(q, frames.queue_modtime(self.game, q)) for q in self._my_queues()],
        )

    def on_get_order_queue(self, message: tp.GetOrderQueue, sequence: int) -> bytes:
        def one(queue_id: int):
            if not frames.can_see_queue(self.game, queue_id, self.player):
                return fail(
                    FailCode.NO_SUCH_THING, "No such OrderQueue", [(ReferenceType.ORDER_QUEUE, queue_id)]
                )
            return frames.order_queue_message(self.game, queue_id)

        return self._each(message.ids, sequence, one)

    # -- turns ---------------------------------------------------------------------------

    def on_finished_turn(self, message: tp.FinishedTurn, sequence: int):
        d = self.game.finish_turn(self.player)
        return d.addCallback(lambda _: self._one(tp.Okay("Turn finished"), sequence))

    # -- boards and messages -------------------------------------------------------------

    def _board_id(self, board_id: int) -> int | None:
        if board_id in (0, self.player):
            return self.player
        return None

    def on_get_board_ids(self, message: tp.GetBoardIDs, sequence: int) -> bytes:
        return self._id_list(
            "boards",
            message,
            sequence,
            tp.BoardIDs,
            lambda: [IdModtime(self.player, frames.board_modtime(self.game, self.player))],
        )

    def on_get_boards(self, message: tp.GetBoards, sequence: int) -> bytes:
        def one(board_id: int):
            if self._board_id(board_id) is None:
                return fail(FailCode.NO_SUCH_THING, "No such board", [(ReferenceType.BOARD, board_id)])
            name = self.game.state.player(self.player).name
            return tp.Board(
                self.player,
                f"Messages for {name}",
                "Your personal message board",
                len(self.game.board(self.player)),
                frames.board_modtime(self.game, self.player),
            )

        return self._each(message.ids, sequence, one)

    def on_get_message(self, message: tp.GetMessage, sequence: int) -> bytes:
        if self._board_id(message.id) is None:
            return self._one(
                fail(FailCode.NO_SUCH_THING, "No such board", [(ReferenceType.BOARD, message.id)]), sequence
            )

        def one(slot: int):
            frame = frames.board_message_frame(self.game, self.player, slot)
            if frame is None:
                return fail(
                    FailCode.NO_SUCH_THING,
                    "No such message",
                    [(ReferenceType.BOARD, message.id), (ReferenceType.MESSAGE, slot)],
                )
            return frame

        return self._each(message.slots, sequence, one)

    def on_remove_message(self, message: tp.RemoveMessage, sequence: int):
        if self._board_id(message.id) is None:
            return self._one(
                fail(FailCode.NO_SUCH_THING, "No such board", [(ReferenceType.BOARD, message.id)]), sequence
            )
        if not message.slots:
            return self._one(fail(FailCode.NO_SUCH_THING, "You didn't ask for any data, try again"), sequence)
        results: list = []
        d = defer.succeed(None)
        for slot in message.slots:
            d.addCallback(lambda _, s=slot: self.game.remove_message(self.player, s))
            d.addCallback(
                lambda ok, s=slot: results.append(
                    tp.Okay("Message removed") if ok else fail(FailCode.NO_SUCH_THING, "No such message")
                )
            )
        return d.addCallback(lambda _: self._sequence(results, sequence))

    def on_post_message(self, message: tp.PostMessage, sequence: int) -> bytes:
        return self._one(
            fail(FailCode.UNAVAILABLE_PERMANENTLY, "Posting messages is not supported by TaE"), sequence
        )

    # -- catalogues ----------------------------------------------------------------------

    def _catalogue(self, kind: str, table: dict, message, sequence: int, reply_cls) -> bytes:
        return self._id_list(
            kind,
            message,
            sequence,
            reply_cls,
            lambda: [IdModtime(i, item.modtime) for i, item in sorted(table.items())],
        )

    def _lookup(self, table: dict, ids, sequence: int, what: str, reftype: int) -> bytes:
        return self._each(
            ids,
            sequence,
            lambda i: table.get(i) or fail(FailCode.NO_SUCH_THING, f"No such {what}", [(reftype, i)]),
        )

    def on_get_resource_ids(self, message, sequence):
        return self._catalogue("resources", catalogue.RESOURCES, message, sequence, tp.ResourceIDs)

    def on_get_resource(self, message, sequence):
        return self._lookup(catalogue.RESOURCES, message.ids, sequence, "resource", ReferenceType.RESOURCE)

    def on_get_category_ids(self, message, sequence):
        return self._catalogue("categories", catalogue.CATEGORIES, message, sequence, tp.CategoryIDs)

    def on_get_category(self, message, sequence):
        return self._lookup(catalogue.CATEGORIES, message.ids, sequence, "category", ReferenceType.CATEGORY)

    def on_get_component_ids(self, message, sequence):
        return self._catalogue("components", catalogue.COMPONENTS, message, sequence, tp.ComponentIDs)

    def on_get_component(self, message, sequence):
        return self._lookup(catalogue.COMPONENTS, message.ids, sequence, "component", ReferenceType.COMPONENT)

    def on_get_property_ids(self, message, sequence):
        return self._catalogue("properties", catalogue.PROPERTIES, message, sequence, tp.PropertyIDs)

    def on_get_property(self, message, sequence):
        return self._lookup(catalogue.PROPERTIES, message.ids, sequence, "property", ReferenceType.PROPERTY)

    def on_refused_edit(self, message, sequence):
        return self._one(
            fail(FailCode.UNAVAILABLE_PERMANENTLY, "Server does not support this frame type"), sequence
        )

    def on_get_design_ids(self, message, sequence):
        game = self.game
        return self._id_list(
            "designs",
            message,
            sequence,
            tp.DesignIDs,
            lambda: [IdModtime(fid, game.modtimes.get(("design", fid)) or 1) for fid in game.state.fleets],
        )

    def on_get_design(self, message, sequence):
        return self._each(
            message.ids,
            sequence,
            lambda i: (
                frames.design_message(self.game, i, self.player)
                or fail(FailCode.NO_SUCH_THING, "No such design", [(ReferenceType.DESIGN, i)])
            ),
        )

    # -- players -------------------------------------------------------------------------

    def on_get_player_ids(self, message, sequence):
        game = self.game
        return self._id_list(
            "players",
            message,
            sequence,
            tp.PlayerIDs,
            lambda: [IdModtime(p.id, game.modtimes.get(("player", p.id)) or 1) for p in game.state.players],
        )

    def on_get_player(self, message, sequence):
        def one(player_id: int):
            pid = self.player if player_id == 0 else player_id
            if not self.game.state.has_player(pid):
                return fail(FailCode.NO_SUCH_THING, "No such player", [(ReferenceType.PLAYER, player_id)])
            return frames.player_message(self.game, pid)

        return self._each(message.ids, sequence, one)


_HANDLERS: dict[type, Callable] = {
    tp.Connect: Session.on_connect,
    tp.Login: Session.on_login,
    tp.Ping: Session.on_ping,
    tp.GetFeatures: Session.on_get_features,
    tp.SetFilters: Session.on_set_filters,
    tp.GetGames: Session.on_get_games,
    tp.GetTimeRemaining: Session.on_get_time_remaining,
    tp.CreateAccount: Session.on_create_account,
    tp.GetObjectIDs: Session.on_get_object_ids,
    tp.GetObjectsByID: Session.on_get_objects_by_id,
    tp.GetObjectsByPos: Session.on_get_objects_by_pos,
    tp.GetObjectIDsByPos: Session.on_get_object_ids_by_pos,
    tp.GetObjectIDsByContainer: Session.on_get_object_ids_by_container,
    tp.GetObjectDesc: Session.on_get_object_desc,
    tp.GetObjectDescIDs: Session.on_get_object_desc_ids,
    tp.ModifyObject: Session.on_modify_object,
    tp.GetOrderDesc: Session.on_get_order_desc,
    tp.GetOrderDescIDs: Session.on_get_order_desc_ids,
    tp.GetOrder: Session.on_get_order,
    tp.InsertOrder: Session.on_insert_order,
    tp.ProbeOrder: Session.on_probe_order,
    tp.RemoveOrder: Session.on_remove_order,
    tp.GetOrderQueueIDs: Session.on_get_order_queue_ids,
    tp.GetOrderQueue: Session.on_get_order_queue,
    tp.FinishedTurn: Session.on_finished_turn,
    tp.GetBoardIDs: Session.on_get_board_ids,
    tp.GetBoards: Session.on_get_boards,
    tp.GetMessage: Session.on_get_message,
    tp.RemoveMessage: Session.on_remove_message,
    tp.PostMessage: Session.on_post_message,
    tp.GetResourceIDs: Session.on_get_resource_ids,
    tp.GetResource: Session.on_get_resource,
    tp.GetCategoryIDs: Session.on_get_category_ids,
    tp.GetCategory: Session.on_get_category,
    tp.AddCategory: Session.on_refused_edit,
    tp.RemoveCategory: Session.on_refused_edit,
    tp.GetComponentIDs: Session.on_get_component_ids,
    tp.GetComponent: Session.on_get_component,
    tp.GetPropertyIDs: Session.on_get_property_ids,
    tp.GetProperty: Session.on_get_property,
    tp.GetDesignIDs: Session.on_get_design_ids,
    tp.GetDesign: Session.on_get_design,
    tp.AddDesign: Session.on_refused_edit,
    tp.ModifyDesign: Session.on_refused_edit,
    tp.RemoveDesign: Session.on_refused_edit,
    tp.GetPlayerIDs: Session.on_get_player_ids,
    tp.GetPlayer: Session.on_get_player,
}

_BEFORE_LOGIN = {
    tp.Connect,
    tp.Login,
    tp.Ping,
    tp.GetFeatures,
    tp.SetFilters,
    tp.GetGames,
    tp.GetTimeRemaining,
    tp.CreateAccount,
}
