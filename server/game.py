"""One game of TaE on the server: accounts, order queues, boards, turns.

The game service is the only place that changes a game. Every rule question goes to `ruleset`
(`check_order` at submission, `resolve_turn` at the end of a turn); every change is handed to the
store and applied here only once the store has it, so nothing a player was told is lost.
Methods that change anything return Deferreds; while a turn is being resolved and stored,
`ready()` holds back the sessions of this game so that no one sees a half-finished turn.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from twisted.internet import defer
from twisted.internet.interfaces import IReactorTime
from twisted.logger import Logger

import ruleset
from ruleset import GameState, Message, Order, Phase, Problem, check_order, game_rng, join_rng, resolve_turn
from ruleset.orders import ProblemCode, owns_queue

from .accounts import hash_password, verify_password
from .frames import FrameCache
from .modtimes import ModTimes
from .store import Account, GameSetup, GameStore, OrderEntry, StoredGame, TurnRecord
from .turn_timer import TurnTimer
from .universe import Universe, all_fingerprints, object_fingerprint, queue_fingerprint

log = Logger()

ACCOUNT_EXISTS = Problem(ProblemCode.UNAVAILABLE_PERMANENTLY, "An account with that name already exists.")
GAME_FULL = Problem(ProblemCode.UNAVAILABLE_PERMANENTLY, "This game has no room for more players.")
GAME_ENDED = Problem(ProblemCode.UNAVAILABLE_PERMANENTLY, "This game is over.")
CREATION_DISABLED = Problem(5, "Account creation Disabled")  # PermissionDenied, as tpserver-cpp
BAD_NAME = Problem(ProblemCode.FRAME, "A user name must be 1 to 64 characters, without '@'.")
BAD_SLOT = Problem(ProblemCode.UNAVAILABLE_TEMPORARILY, "No such slot in that order queue.")
REMOVED = Problem(ProblemCode.UNAVAILABLE_PERMANENTLY, "You have been removed from this game.")
NO_SUCH_PLAYER = Problem(ProblemCode.NO_SUCH_THING, "No player of that name in this game.")
MAX_NAME = 64


@dataclass(slots=True)
class QueuedOrder:
    entry: OrderEntry
    order: Order


@dataclass(slots=True)
class BoardMessage:
    """A message on a player's board; `index` counts every message ever posted to that board."""

    index: int
    message: Message


class Game:
    """A live game: construct it for a new game, or rebuild one with `Game.restore`."""

    def __init__(
        self, game_id: int, setup: GameSetup, state: GameState, store: GameStore, clock: IReactorTime
    ):
        self.id = game_id
        self.setup = setup
        self.state = state
        self.store = store
        self.clock = clock
        self.accounts: dict[str, Account] = {}
        self.queues: dict[int, list[QueuedOrder]] = {}
        self.finished: set[int] = set()
        self.removed_players: set[int] = set()  # removed by an operator: no login, not waited for
        self.boards: dict[int, list[BoardMessage]] = {}
        self.posted: dict[int, int] = {}
        self.order_serial = 0
        self.modtimes = ModTimes()
        self.listeners: list[Callable[[int, int], None]] = []
        self.turn_listeners: list[Callable[[Game], None]] = []
        self.removal_listeners: list[Callable[[int], None]] = []  # told the id of a removed player
        self._ready: defer.Deferred | None = None
        # Every change to the game (accounts, orders, removals, the end of a turn) runs under
        # this lock: each one is checked against, stored with and applied to the state it saw.
        self._lock = defer.DeferredLock()
        self._started = False
        self._universe = None
        self._views: dict[int, tuple[GameState, ruleset.PlayerView]] = {}
        self.frame_cache = FrameCache()
        self._waiters: list[defer.Deferred] = []
        self.timer = TurnTimer(clock, setup.timer, self._timer_ended_turn, self._announce)
        self.refresh_modtimes()

    # -- creation ------------------------------------------------------------------------

    @classmethod
    def initial_state(cls, setup: GameSetup) -> GameState:
        board = ruleset.parse_map(setup.map_text) if setup.map_text else ruleset.DEFAULT_BOARD
        return ruleset.new_game(board, setup.seed)

    @classmethod
    def restore(cls, stored: StoredGame, store: GameStore, clock: IReactorTime) -> Game:
        """Rebuild a game as last stored: the last turn's state, the accounts, the open orders."""
        setup = stored.setup
        state = cls.initial_state(setup)
        if stored.turns:
            state = stored.turns[-1].state
        # Players who joined after the last stored turn are not in its state: join them again
        # (add_player is deterministic, so they get the same hands).
        for account in sorted(stored.accounts, key=lambda a: a.player_id):
            if account.player_id > len(state.players):
                state, _ = ruleset.add_player(
                    state, account.username, join_rng(setup.seed, account.player_id)
                )
        game = cls(stored.game_id, setup, state, store, clock)
        game.accounts = {a.username: a for a in stored.accounts}
        # A join message carries the number of the last played turn: it follows that turn's messages.
        ordered = [(m.turn, 1, i, m) for i, m in enumerate(stored.join_messages)]
        for record in stored.turns:
            ordered.extend((record.turn, 0, i, m) for i, m in enumerate(record.messages))
        for *_, message in sorted(ordered, key=lambda item: item[:3]):
            game._post(message)
        game.modtimes = ModTimes(cls._restart_serial(stored, clock))
        for player, index in stored.removed_messages:
            game.boards[player] = [m for m in game.boards.get(player, []) if m.index != index]
        for entry in stored.orders:
            game.order_serial = max(game.order_serial, entry.seq)
            if entry.seq in stored.removed_orders or entry.turn != game.state.turn + 1:
                continue
            order = Order(entry.player, entry.object_id, entry.type, entry.target)
            game.queues.setdefault(entry.object_id, []).append(QueuedOrder(entry, order))
        game.removed_players = set(stored.removed_players)
        game.finished = {
            player
            for turn, player in stored.finished
            if turn == game.state.turn + 1 and player not in game.removed_players
        }
        game.refresh_modtimes()
        return game

    @staticmethod
    def _restart_serial(stored: StoredGame, clock: IReactorTime) -> int:
        """A modtime serial above any this game can have issued before the restart.

        Only a turn's serial is stored; between turns every join, order, removal and message
        removal moved the serial by at most two. Clients cache by modtime, so after a restart
        every item must look at least as new as before (§5.5); the clock keeps it plausible.
        """
        last = stored.turns[-1].modtime_serial if stored.turns else 0
        events = (
            len(stored.accounts)
            + len(stored.turns)
            + len(stored.removed_messages)
            + 2 * (len(stored.orders) + len(stored.removed_orders))
        )
        return max(last, int(clock.seconds())) + 2 * events + 16

    # -- readiness -----------------------------------------------------------------------

    def ready(self) -> defer.Deferred:
        """Fires when no end of turn is in progress (at once, usually)."""
        if self._ready is None:
            return defer.succeed(None)
        waiter = defer.Deferred()
        self._waiters.append(waiter)
        return waiter

    @property
    def busy(self) -> bool:
        return self._ready is not None

    # -- players and accounts ------------------------------------------------------------

    def player_id(self, username: str) -> int | None:
        account = self.accounts.get(username)
        return None if account is None else account.player_id

    def check_login(self, username: str, password: str) -> int | None:
        account = self.accounts.get(username)
        if (
            account is None
            or account.player_id in self.removed_players
            or not verify_password(password, account.password_hash)
        ):
            return None
        return account.player_id

    def create_account(
        self,
        username: str,
        password: str,
        email: str = "",
        comment: str = "",
        *,
        creation_setting_applies: bool = True,
        password_hash: str | None = None,
    ) -> defer.Deferred:
        """Add a player; fires with (player id, None) or (None, Problem).

        Operators hand over `password_hash` (made by `server.accounts.hash_password`) instead
        of a password."""
        return self._lock.run(
            self._create_account, username, password, email, comment, creation_setting_applies, password_hash
        )

    def _create_account(
        self,
        username: str,
        password: str,
        email: str,
        comment: str,
        creation_setting_applies: bool,
        password_hash: str | None = None,
    ) -> defer.Deferred:
        problem = self._account_problem(username, creation_setting_applies)
        if problem is not None:
            return defer.succeed((None, problem))
        player_id = len(self.state.players) + 1
        state, messages = ruleset.add_player(self.state, username, join_rng(self.setup.seed, player_id))
        account = Account(username, password_hash or hash_password(password), player_id, email, comment)
        d = defer.maybeDeferred(self.store.add_account, self.id, account, messages)

        def stored(_):
            self.state = state
            self.accounts[username] = account
            for message in messages:
                self._post(message)
            self.refresh_modtimes()
            self._start_if_ready()
            return player_id, None

        return d.addCallback(stored)

    def _account_problem(self, username: str, creation_setting_applies: bool) -> Problem | None:
        if creation_setting_applies and not self.setup.account_creation:
            return CREATION_DISABLED
        if not username or len(username) > MAX_NAME or "@" in username or username.strip() != username:
            return BAD_NAME
        if username in self.accounts or self.state.player_by_name(username) is not None:
            return ACCOUNT_EXISTS
        if self.state.phase is Phase.OVER:
            return GAME_ENDED
        if self.setup.max_players and len(self.state.players) >= self.setup.max_players:
            return GAME_FULL
        return None

    def remove_player(self, username: str) -> defer.Deferred:
        """An operator removes a player: they can no longer log in or give orders, and the turn
        no longer waits for them (their fleets stay; orders already accepted are kept).
        Fires with (player id, None) or (None, Problem); removing twice is not an error."""
        return self._lock.run(self._remove_player, username)

    def _remove_player(self, username: str) -> defer.Deferred:
        player_id = self.player_id(username)
        if player_id is None:
            return defer.succeed((None, NO_SUCH_PLAYER))
        if player_id in self.removed_players:
            return defer.succeed((player_id, None))
        remove = getattr(self.store, "remove_player", None)
        d = defer.maybeDeferred(remove, self.id, player_id) if remove else defer.succeed(None)

        def stored(_):
            self.removed_players.add(player_id)
            self.finished.discard(player_id)
            for listener in list(self.removal_listeners):
                listener(player_id)
            self.refresh_modtimes()
            log.info(
                "game {game}: player {player} ({user}) removed",
                game=self.setup.name,
                player=player_id,
                user=username,
            )
            if self._started and self.finished and not self.busy:
                self._check_turn_end()  # the others may all have finished already
            return player_id, None

        return d.addCallback(stored)

    # -- orders --------------------------------------------------------------------------

    def queue(self, object_id: int) -> list[QueuedOrder]:
        return self.queues.get(object_id, [])

    def orders_of(self, player: int) -> list[Order]:
        """The player's accepted orders this turn, in submission order."""
        queued = [q for queue in self.queues.values() for q in queue if q.order.player == player]
        queued.sort(key=lambda q: q.entry.seq)
        return [q.order for q in queued]

    def probe_order(self, player: int, object_id: int, order_type: int, target: int) -> Problem | None:
        return check_order(self.state, Order(player, object_id, order_type, target), self.orders_of(player))

    def insert_order(
        self, player: int, object_id: int, slot: int, order_type: int, target: int
    ) -> defer.Deferred:
        """Check, store, then queue an order; fires with (slot, None) or (None, Problem)."""
        return self._lock.run(self._insert_order, player, object_id, slot, order_type, target)

    def _insert_order(
        self, player: int, object_id: int, slot: int, order_type: int, target: int
    ) -> defer.Deferred:
        if player in self.removed_players:
            return defer.succeed((None, REMOVED))
        order = Order(player, object_id, order_type, target)
        problem = check_order(self.state, order, self.orders_of(player))
        queue = self.queue(object_id)
        if problem is None and not (slot == -1 or 0 <= slot <= len(queue)):
            problem = BAD_SLOT
        if problem is not None:
            return defer.succeed((None, problem))
        self.order_serial += 1
        position = len(queue) if slot == -1 else slot
        entry = OrderEntry(
            self.order_serial, self.state.turn + 1, player, object_id, position, order_type, target
        )
        d = defer.maybeDeferred(self.store.record_order, self.id, entry)

        def stored(_):
            self.queues.setdefault(object_id, []).insert(position, QueuedOrder(entry, order))
            self._touch_queue(object_id)
            return position, None

        return d.addCallback(stored)

    def remove_orders(self, player: int, object_id: int, slots: Iterable[int]) -> defer.Deferred:
        """Remove slots one after another; fires with a list of (slot, Problem | None)."""
        return self._lock.run(self._remove_orders, player, object_id, tuple(slots))

    def _remove_orders(self, player: int, object_id: int, slots: tuple[int, ...]) -> defer.Deferred:
        results: list[tuple[int, Problem | None]] = []
        d = defer.succeed(None)
        for slot in slots:
            d.addCallback(lambda _, s=slot: self._remove_one(player, object_id, s, results))
        return d.addCallback(lambda _: results)

    def _remove_one(self, player: int, object_id: int, slot: int, results: list):
        if self.state.phase is Phase.OVER or not owns_queue(self.state, player, object_id):
            results.append((slot, ruleset.orders.NO_SUCH_QUEUE))
            return None
        queue = self.queue(object_id)
        if not 0 <= slot < len(queue):
            results.append((slot, BAD_SLOT))
            return None
        queued = queue[slot]
        d = defer.maybeDeferred(self.store.remove_order, self.id, queued.entry.seq)

        def stored(_):
            queue.remove(queued)
            if not queue:
                self.queues.pop(object_id, None)
            self._touch_queue(object_id)
            results.append((slot, None))

        return d.addCallback(stored)

    # -- boards --------------------------------------------------------------------------

    def board(self, player: int) -> list[BoardMessage]:
        return self.boards.get(player, [])

    def _post(self, message: Message) -> None:
        index = self.posted.get(message.player, 0)
        self.posted[message.player] = index + 1
        self.boards.setdefault(message.player, []).append(BoardMessage(index, message))

    def remove_message(self, player: int, slot: int) -> defer.Deferred:
        """Remove one message from a player's board; fires with whether there was one."""
        return self._lock.run(self._remove_message, player, slot)

    def _remove_message(self, player: int, slot: int) -> defer.Deferred:
        board = self.board(player)
        if not 0 <= slot < len(board):
            return defer.succeed(False)
        item = board[slot]
        d = defer.maybeDeferred(self.store.remove_message, self.id, player, item.index)

        def stored(_):
            board.remove(item)
            self.refresh_modtimes()
            return True

        return d.addCallback(stored)

    # -- turns ---------------------------------------------------------------------------

    def waiting_for(self) -> list[int]:
        """Players who can act this turn and have not finished it (the TimeRemaining list)."""
        return [pid for pid in self.acting_players() if pid not in self.finished]

    def acting_players(self) -> list[int]:
        return list(ruleset.acting_players(self.state, self.removed_players))

    def finish_turn(self, player: int) -> defer.Deferred:
        """The player has finished the turn. Fires once that is stored (and, when it ended the
        turn, once the new turn is ready), so the player's Okay is never ahead of the store."""
        if self.state.phase is Phase.OVER or self.busy or player in self.removed_players:
            return self.ready()
        stored = defer.succeed(None)
        if player not in self.finished:
            self.finished.add(player)
            stored = self._store_finished(player)
        self._check_turn_end()
        return stored.addCallback(lambda _: self.ready())

    def _check_turn_end(self) -> None:
        acting = self.acting_players()
        done = sum(1 for pid in acting if pid in self.finished)
        self.timer.player_finished(done, len(acting), len(self.state.players))

    def _store_finished(self, player: int) -> defer.Deferred:
        """Remember durably that the player finished, so that a turn whose end a crash cut short
        ends again at restart. A failure is logged, not fatal: losing the flag only means that
        the player must finish again."""
        record = getattr(self.store, "record_finished", None)
        if record is None:
            return defer.succeed(None)
        d = defer.maybeDeferred(record, self.id, self.state.turn + 1, player)
        d.addErrback(
            lambda failure: log.failure(
                "game {game}: storing that player {player} finished failed",
                failure,
                game=self.setup.name,
                player=player,
            )
        )
        return d

    def resume(self, deadline: tuple[int, float] | None = None) -> None:
        """Start a restored game: its timer, the stored deadline of the current turn (a restart
        does not make a turn longer; a deadline already passed ends the turn now), and the
        players who had finished it (when that was everyone, the turn is resolved now)."""
        self.start()
        if not self._started or self.state.phase is Phase.OVER:
            return
        if deadline is not None and deadline[0] == self.state.turn + 1:
            self.timer.resume_deadline(deadline[1])
        if self.finished and not self.busy:
            self._check_turn_end()

    def start(self) -> None:
        """Start the first turn's timer once the game has enough players."""
        self._start_if_ready()

    def _start_if_ready(self) -> None:
        if self._started or self.state.phase is Phase.OVER:
            return
        if len(self.state.players) >= max(1, self.setup.timer.turn_players_min):
            self._started = True
            self.timer.start_turn(len(self.state.players))

    def end_turn(self) -> defer.Deferred:
        """Run the end of turn now (operators, tests); the timer calls the same path."""
        if self.state.phase is not Phase.OVER and not self.busy:
            self.timer.force_end()
        return self.ready()

    def _timer_ended_turn(self, reason: int) -> None:
        self._resolve()

    def _resolve(self) -> None:
        if self.state.phase is Phase.OVER or self._ready is not None:
            return
        self._ready = defer.Deferred()  # sessions of this game wait from now on
        self._lock.acquire().addCallback(self._resolve_locked)

    def _resolve_locked(self, _lock) -> None:
        queued = sorted((q for queue in self.queues.values() for q in queue), key=lambda q: q.entry.seq)
        orders = [q.order for q in queued]
        try:
            outcome = resolve_turn(self.state, orders, game_rng(self.setup.seed, self.state.turn + 1))
        except Exception:
            # A bug in the rules must not freeze every player of the game: keep the turn open.
            log.failure(
                "game {game}: resolving turn {turn} failed", game=self.setup.name, turn=self.state.turn + 1
            )
            self._lock.release()
            self._release()
            return
        record = TurnRecord(
            outcome.state.turn, outcome.state, outcome.messages, outcome.events, self.modtimes.serial + 1
        )
        self._commit(record, outcome)

    def _commit(self, record: TurnRecord, outcome: ruleset.TurnOutcome) -> None:
        d = defer.maybeDeferred(self.store.commit_turn, self.id, record)
        d.addCallback(lambda _: self._apply(outcome))
        d.addErrback(self._commit_failed, record, outcome)

    def _apply(self, outcome: ruleset.TurnOutcome) -> None:
        self.state = outcome.state
        self.queues.clear()
        self.finished.clear()
        for message in outcome.messages:
            self._post(message)
        self.refresh_modtimes()
        for event in outcome.events:
            log.debug(
                "game {game} turn {turn}: {kind} {detail}",
                game=self.setup.name,
                turn=outcome.state.turn,
                kind=event.kind,
                detail=event.detail,
            )
        log.info(
            "game {game}: turn {turn} resolved ({phase})",
            game=self.setup.name,
            turn=outcome.state.turn,
            phase=outcome.state.phase.value,
        )
        self._lock.release()
        self._release()
        for listener in list(self.turn_listeners):
            listener(self)
        if self.state.phase is Phase.OVER:
            self.timer.stop()
            self._announce(-1, 1)
        else:
            self.timer.start_turn(len(self.state.players))

    def _commit_failed(self, failure, record: TurnRecord, outcome: ruleset.TurnOutcome) -> None:
        """The store could not keep the turn. Nothing was told yet: keep the sessions waiting
        and store the very same turn again (if the first attempt did commit and only its answer
        was lost, storing the identical turn again succeeds)."""
        log.failure(
            "game {game}: storing turn {turn} failed; retrying in 5 s",
            failure,
            game=self.setup.name,
            turn=record.turn,
        )
        self.clock.callLater(5, self._commit, record, outcome)

    def _release(self) -> None:
        self._ready = None
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            waiter.callback(None)

    def _announce(self, seconds: int, reason: int) -> None:
        for listener in list(self.listeners):
            listener(seconds, reason)

    # -- the TP view -----------------------------------------------------------------------

    def view(self, player: int) -> ruleset.PlayerView:
        """What `player` may see of the current state (R27), as the ruleset decides it."""
        cached = self._views.get(player)
        if cached is None or cached[0] is not self.state:
            cached = (self.state, ruleset.visible_to(self.state, player))
            self._views[player] = cached
        return cached[1]

    def universe(self):
        """The objects of the current state, built once per state."""
        if self._universe is None or self._universe.state is not self.state:
            self._universe = Universe(self)
        return self._universe

    # -- modtimes ------------------------------------------------------------------------

    def _touch_queue(self, object_id: int) -> None:
        self.modtimes.touch(("queue", object_id), queue_fingerprint(self, object_id))
        self.modtimes.touch(("object", object_id), object_fingerprint(self, object_id))

    def refresh_modtimes(self) -> None:
        self.modtimes.refresh(all_fingerprints(self))
