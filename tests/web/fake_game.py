"""A stand-in for `server.game.game.Game`, `GameDirectory` and the store's turn archive, for the web
tests: real ruleset states and checks, snapshots published after every change, no storage."""

from __future__ import annotations

from types import MappingProxyType

from twisted.internet import defer

import ruleset
from ruleset import Board, Order, Phase, check_order, game_rng, join_rng, resolve_turn
from ruleset.orders import NO_SUCH_QUEUE, owns_queue
from server.game.passwords import credential_mark
from server.model.refusals import ACCOUNT_EXISTS, BAD_LOGIN, BAD_NAME, BAD_SLOT, GAME_ENDED, REMOVED, Refused
from server.model.snapshot import BoardMessage, GameSnapshot, QueuedOrder
from server.model.store import GameSetup, OrderEntry, TurnRecord
from server.model.timer_settings import TimerSettings


class FakeArchive:
    web_sessions = None  # as a store kept in memory: logouts are known to this process only

    def __init__(self) -> None:
        self.turns: dict[tuple[int, int], TurnRecord] = {}
        self.loads = 0

    def turn_record(self, game_id: int, turn: int):
        self.loads += 1
        return self.turns.get((game_id, turn))


class FakeDirectory:
    def __init__(self, *games: FakeGame) -> None:
        self.games = {g.snapshot.name: g for g in games}

    def find(self, name):
        if not name:
            return next(iter(self.games.values()), None)
        return self.games.get(name)

    def ordered(self):
        return list(self.games.values())


class FakeGame:
    def __init__(
        self,
        name: str,
        clock,
        archive: FakeArchive | None = None,
        board: Board = ruleset.DEFAULT_BOARD,
        seed: int = 1,
        game_id: int = 1,
        turn_length: int = 300,
        players_min: int = 2,
    ):
        self.clock = clock
        self.archive = archive if archive is not None else FakeArchive()
        self.setup = GameSetup(
            name=name,
            map_text=board.to_text(),
            seed=seed,
            timer=TimerSettings(turn_length=turn_length, turn_players_min=players_min),
            description="A game for the web tests",
        )
        self.game_id = game_id
        self.state = ruleset.new_game(board, seed)
        self.passwords: dict[str, tuple[str, int]] = {}
        self.queues: dict[int, list[QueuedOrder]] = {}
        self.finished: set[int] = set()
        self.removed: set[int] = set()
        self.boards: dict[int, list[BoardMessage]] = {}
        self.posted: dict[int, int] = {}
        self.seq = 0
        self.serial = 0
        self.paused = False  # as an operator's `tae-server pause` leaves a Game
        self.listeners: list = []
        self.last_events: tuple = ()
        self.last_messages: tuple = ()
        self.deadline: float | None = None
        self._publish()

    # -- the contract ----------------------------------------------------------------------

    @property
    def snapshot(self) -> GameSnapshot:
        return self._snapshot

    def subscribe(self, listener):
        self.listeners.append(listener)
        return lambda: self.listeners.remove(listener) if listener in self.listeners else None

    def authenticate(self, username: str, password: str):
        found = self.passwords.get(username)
        if found is None or found[0] != password:
            return defer.fail(Refused(BAD_LOGIN))
        if found[1] in self.removed:
            return defer.fail(Refused(REMOVED))
        return defer.succeed(found[1])

    def change_password(self, username: str, old_password: str, new_password: str):
        def change(player: int) -> int:
            self.passwords[username] = (new_password, player)
            self._publish()
            return player

        return self.authenticate(username, old_password).addCallback(change)

    def create_account(self, username: str, password: str, email: str = "", comment: str = ""):
        if not username or len(username) > 64 or "@" in username:
            return defer.fail(Refused(BAD_NAME))
        if username in self.passwords:
            return defer.fail(Refused(ACCOUNT_EXISTS))
        if self.state.phase is Phase.OVER:
            return defer.fail(Refused(GAME_ENDED))
        player = len(self.state.players) + 1
        self.state, messages = ruleset.add_player(self.state, username, join_rng(self.setup.seed, player))
        self.passwords[username] = (password, player)
        for message in messages:
            self._post(message)
        self._publish()
        return defer.succeed(player)

    def would_create(self, name: str):
        return defer.succeed(name not in self.passwords)

    def create_or_join(self, username: str, password: str, email: str = "", comment: str = ""):
        """The fake keeps accounts per game: a creation never joins an existing account."""
        return self.create_account(username, password, email, comment).addCallback(
            lambda player: (player, False)
        )

    def come_back(self, player: int):
        """Saying "I am back" is recorded (`came_back`); the fake keeps no seats: never refused."""
        self.came_back = getattr(self, "came_back", []) + [player]
        return defer.succeed(None)

    def check_order(self, player, object_id, order_type, target):
        return check_order(self.state, Order(player, object_id, order_type, target), self._orders_of(player))

    def insert_order(self, player, object_id, slot, order_type, target):
        if player in self.removed:
            return defer.fail(Refused(REMOVED))
        problem = self.check_order(player, object_id, order_type, target)
        queue = self.queues.get(object_id, [])
        if problem is None and not (slot == -1 or 0 <= slot <= len(queue)):
            problem = BAD_SLOT
        if problem is not None:
            return defer.fail(Refused(problem))
        self.seq += 1
        position = len(queue) if slot == -1 else slot
        entry = OrderEntry(self.seq, self.state.turn + 1, player, object_id, position, order_type, target)
        self.queues.setdefault(object_id, []).insert(
            position, QueuedOrder(entry, Order(player, object_id, order_type, target))
        )
        self._publish()
        return defer.succeed(position)

    def remove_order(self, player, object_id, slot):
        if self.state.phase is Phase.OVER or not owns_queue(self.state, player, object_id):
            return defer.fail(Refused(NO_SUCH_QUEUE))
        queue = self.queues.get(object_id, [])
        if not 0 <= slot < len(queue):
            return defer.fail(Refused(BAD_SLOT))
        del queue[slot]
        if not queue:
            del self.queues[object_id]
        self._publish()
        return defer.succeed(None)

    def finish_turn(self, player):
        if self.state.phase is Phase.OVER:
            return defer.succeed(None)
        self.finished.add(player)
        self._publish()
        acting = ruleset.acting_players(self.state, self.removed)
        if len(self.state.players) >= self.setup.timer.turn_players_min and all(
            pid in self.finished for pid in acting
        ):
            self.end_turn()
        return defer.succeed(None)

    # -- what the real game does by itself ------------------------------------------------

    def end_turn(self) -> None:
        queued = sorted((q for queue in self.queues.values() for q in queue), key=lambda q: q.entry.seq)
        outcome = resolve_turn(
            self.state, [q.order for q in queued], game_rng(self.setup.seed, self.state.turn + 1)
        )
        self.state = outcome.state
        self.archive.turns[(self.game_id, outcome.state.turn)] = TurnRecord(
            outcome.state.turn, outcome.state, outcome.messages, outcome.events, self.serial
        )
        for message in outcome.messages:
            self._post(message)
        self.queues.clear()
        self.finished.clear()
        self.deadline = None
        self.last_events = outcome.events
        self.last_messages = outcome.messages
        self._publish()

    def remove_player(self, player: int) -> None:
        self.removed.add(player)
        self._publish()

    def _orders_of(self, player):
        queued = [q for queue in self.queues.values() for q in queue if q.order.player == player]
        return [q.order for q in sorted(queued, key=lambda q: q.entry.seq)]

    def _post(self, message) -> None:
        index = self.posted.get(message.player, 0)
        self.posted[message.player] = index + 1
        self.boards.setdefault(message.player, []).append(BoardMessage(index, message))

    def _publish(self) -> None:
        self.serial += 1
        started = len(self.state.players) >= self.setup.timer.turn_players_min
        if not started or self.state.phase is Phase.OVER:
            self.deadline = None
        elif self.deadline is None:
            self.deadline = self.clock.seconds() + self.setup.timer.turn_length
        previous = getattr(self, "_snapshot", None)
        if previous is None or previous.state is not self.state:
            self._state_cache: dict = {}
        self._snapshot = GameSnapshot(
            game_id=self.game_id,
            setup=self.setup,
            serial=self.serial,
            state=self.state,
            queues=MappingProxyType({k: tuple(v) for k, v in self.queues.items()}),
            finished=frozenset(self.finished),
            removed_players=frozenset(self.removed),
            usernames=MappingProxyType({pid: name for name, (_, pid) in self.passwords.items()}),
            # the fake keeps passwords, not hashes: the mark of the password stands in for the hash's
            credential_marks=MappingProxyType(
                {pid: credential_mark(password) for password, pid in self.passwords.values()}
            ),
            boards=MappingProxyType({k: tuple(v) for k, v in self.boards.items()}),
            posted=MappingProxyType(dict(self.posted)),
            deadline=None if self.paused else self.deadline,
            paused=self.paused,
            started=started,
            last_turn_messages=self.last_messages,
            last_turn_events=self.last_events,
            state_cache=self._state_cache,
        )
        for listener in list(self.listeners):
            listener(self._snapshot)
