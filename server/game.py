"""The write side of one game of TaE: accounts, order queues, boards and the turn lifecycle.

`Game` is the only place that changes a game. Every change runs under one lock, is checked by
the ruleset (`check_order` at submission, `resolve_turn` at the end of a turn), handed to the
store, and applied here only once the store has it, so nothing a player was told is lost. After
every applied change the game publishes one immutable `GameSnapshot` (`game.snapshot`, and to
every `subscribe`r): readers render from snapshots and never look inside the game.

Writes return Deferreds; a refused write fails with `server.refusals.Refused`. While a turn is
being resolved and stored, `ready()` holds back the TP sessions of this game so that no one sees
a half-finished turn.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import replace
from types import MappingProxyType

from twisted.internet import defer
from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.logger import Logger

import ruleset
from ruleset import GameState, Message, Order, Phase, Problem, check_order, game_rng, join_rng, resolve_turn
from ruleset.orders import NO_SUCH_QUEUE, owns_queue
from ruleset.stand_in import seat_view, stand_in_orders, stand_in_rng

from . import absence_notices as notices
from .accounts import InlineHasher, PasswordHasher
from .attendance import DAY_S, Attendance, Presence, after_turn, attendance_of, back
from .refusals import (
    ACCOUNT_EXISTS,
    BAD_LOGIN,
    BAD_NAME,
    BAD_SLOT,
    CREATION_DISABLED,
    GAME_ENDED,
    GAME_FULL,
    MAX_NAME,
    NO_SUCH_MESSAGE,
    NO_SUCH_PLAYER,
    NO_VACATIONS,
    NOT_ON_VACATION,
    REMOVED,
    RESIGNED,
    TURN_NOT_STORED,
    Refused,
    vacation_days,
)
from .snapshot import Announcement, BoardMessage, GameSnapshot, QueuedOrder
from .store import Account, GameSetup, GameStore, OrderEntry, StoredGame, StoreUnavailable, TurnRecord
from .turn_timer import TurnTimer
from .views.modtimes import ModTimes, all_fingerprints, object_fingerprint, queue_fingerprint

log = Logger()

COMMIT_RETRY_S = 5


def _refuse(problem: Problem) -> defer.Deferred:
    return defer.fail(Refused(problem))


class Game:
    """A live game: construct it for a new game, or rebuild one with `Game.restore`."""

    def __init__(
        self,
        game_id: int,
        setup: GameSetup,
        state: GameState,
        store: GameStore,
        clock: IReactorTime,
        *,
        hasher: PasswordHasher | None = None,
        modtime_start: int = 1,
    ):
        self.id = game_id
        self.setup = setup
        self.store = store
        self.clock = clock
        self.hasher: PasswordHasher = hasher or InlineHasher()
        self._state = state
        self._accounts: dict[str, Account] = {}
        self._queues: dict[int, tuple[QueuedOrder, ...]] = {}
        self._finished: set[int] = set()
        self._removed: set[int] = set()  # removed by an operator: no login, not waited for
        self._attendance: dict[int, Attendance] = {}  # seats the stand-in plays, missed turns
        self._vacation_ends: dict[int, IDelayedCall] = {}
        self._boards: dict[int, tuple[BoardMessage, ...]] = {}
        self._posted: dict[int, int] = {}
        self._last_turn: tuple[tuple[Message, ...], tuple] = ((), ())
        self.order_serial = 0
        self._modtimes = ModTimes(modtime_start)
        self._subscribers: list[Callable[[GameSnapshot], None]] = []
        self._ready: defer.Deferred | None = None
        self._waiters: list[defer.Deferred] = []
        self._refusable: list[defer.Deferred] = []  # players' requests waiting for a turn's end
        self._store_trouble: Exception | None = None  # why the ending turn is not stored yet
        # Every change to the game (accounts, orders, removals, the end of a turn) runs under
        # this lock: each one is checked against, stored with and applied to the state it saw.
        self._lock = defer.DeferredLock()
        self._started = False
        self._serial = 0
        self._state_cache: dict = {}
        self._closed = False
        self._retry: IDelayedCall | None = None
        self.timer = TurnTimer(clock, setup.timer, self._timer_ended_turn, self._announce)
        self.snapshot: GameSnapshot = self._draft()
        self._publish()

    # -- creation ------------------------------------------------------------------------

    @classmethod
    def initial_state(cls, setup: GameSetup) -> GameState:
        return setup.initial_state()

    @classmethod
    def restore(
        cls,
        stored: StoredGame,
        store: GameStore,
        clock: IReactorTime,
        *,
        hasher: PasswordHasher | None = None,
    ) -> Game:
        """Rebuild a game as last stored: the last turn's state, the accounts, the open orders."""
        setup = stored.setup
        state = stored.turns[-1].state if stored.turns else setup.initial_state()
        # Players who joined after the last stored turn are not in its state: join them again
        # (add_player is deterministic, so they get the same hands).
        for account in sorted(stored.accounts, key=lambda a: a.player_id):
            if account.player_id > len(state.players):
                state, _ = ruleset.add_player(
                    state, account.username, join_rng(setup.seed, account.player_id)
                )
        game = cls(
            stored.game_id,
            setup,
            state,
            store,
            clock,
            hasher=hasher,
            modtime_start=cls._restart_serial(stored, clock),
        )
        game._accounts = {a.username: a for a in stored.accounts}
        # A join message carries the number of the last played turn: it follows that turn's messages.
        ordered = [(m.turn, 1, i, m) for i, m in enumerate(stored.join_messages)]
        for record in stored.turns:
            ordered.extend((record.turn, 0, i, m) for i, m in enumerate(record.messages))
        for *_, message in sorted(ordered, key=lambda item: item[:3]):
            game._post(message)
        for player, index in stored.removed_messages:
            game._boards[player] = tuple(m for m in game._boards.get(player, ()) if m.index != index)
        queues: dict[int, list[QueuedOrder]] = {}
        for entry in stored.orders:
            game.order_serial = max(game.order_serial, entry.seq)
            if entry.seq in stored.removed_orders or entry.turn != state.turn + 1:
                continue
            order = Order(entry.player, entry.object_id, entry.type, entry.target)
            queues.setdefault(entry.object_id, []).append(QueuedOrder(entry, order))
        game._queues = {object_id: tuple(queue) for object_id, queue in queues.items()}
        game._removed = set(stored.removed_players)
        game._attendance = dict(stored.attendance)
        game._finished = {
            player
            for turn, player in stored.finished
            if turn == state.turn + 1 and player not in game._removed
        }
        if stored.turns:
            last = stored.turns[-1]
            game._last_turn = (tuple(last.messages), tuple(last.events))
        game._publish()
        return game

    @staticmethod
    def _restart_serial(stored: StoredGame, clock: IReactorTime) -> int:
        """A modtime serial above any this game can have issued before the restart.

        Only a turn's serial is stored; between turns every join, order, removal, message
        removal and change of a seat moved the serial by at most two. Clients cache by
        modtime, so after a restart every item must look at least as new as before (§5.5); the
        clock keeps it plausible.
        """
        last = stored.turns[-1].modtime_serial if stored.turns else 0
        events = (
            len(stored.accounts)
            + len(stored.turns)
            + len(stored.removed_messages)
            + 2 * (len(stored.orders) + len(stored.removed_orders))
            # a seat's change (server.attendance) posts a notice to every player's board
            + len(stored.join_messages)
        )
        return max(last, int(clock.seconds())) + 2 * events + 16

    # -- snapshots -----------------------------------------------------------------------

    def subscribe(self, listener: Callable[[GameSnapshot], None]) -> Callable[[], None]:
        """Call `listener(snapshot)` after every new snapshot; returns the unsubscribe call."""
        self._subscribers.append(listener)

        def unsubscribe() -> None:
            if listener in self._subscribers:
                self._subscribers.remove(listener)

        return unsubscribe

    def _draft(self, announcement: Announcement | None = None) -> GameSnapshot:
        """A snapshot of the current state, stamped with the current modtimes."""
        previous = getattr(self, "snapshot", None)
        if previous is None or previous.state is not self._state:
            self._state_cache = {}
        self._serial += 1
        return GameSnapshot(
            game_id=self.id,
            setup=self.setup,
            serial=self._serial,
            state=self._state,
            queues=MappingProxyType(dict(self._queues)),
            finished=frozenset(self._finished),
            removed_players=frozenset(self._removed),
            attendance=MappingProxyType(dict(self._attendance)),
            usernames=MappingProxyType({a.player_id: a.username for a in self._accounts.values()}),
            boards=MappingProxyType(dict(self._boards)),
            posted=MappingProxyType(dict(self._posted)),
            modtimes=self._modtimes.table(),
            modtime_serial=self._modtimes.serial,
            deadline=self.timer.deadline,
            started=self._started,
            resolving=self._ready is not None,
            last_turn_messages=self._last_turn[0],
            last_turn_events=self._last_turn[1],
            announcement=announcement,
            state_cache=self._state_cache,
        )

    def _publish(
        self, touched: tuple[int, ...] | None = None, announcement: Announcement | None = None
    ) -> None:
        """Publish a new snapshot. Modtimes move for what changed: every item (the default), or
        only the order queues of `touched` objects (an order inserted or removed)."""
        draft = self._draft(announcement)
        if touched is None:
            self._modtimes.refresh(all_fingerprints(draft))
        else:
            for object_id in touched:
                self._modtimes.touch(("queue", object_id), queue_fingerprint(draft, object_id))
                self._modtimes.touch(("object", object_id), object_fingerprint(draft, object_id))
        self.snapshot = replace(draft, modtimes=self._modtimes.table(), modtime_serial=self._modtimes.serial)
        for listener in list(self._subscribers):
            try:
                listener(self.snapshot)
            except Exception:
                log.failure("game {game}: a snapshot subscriber failed", game=self.setup.name)

    # -- what the write side needs to know -------------------------------------------------

    @property
    def state(self) -> GameState:
        return self._state

    @property
    def accounts(self) -> MappingProxyType:
        """Username → Account (with its password hash): the write side's, never a reader's."""
        return MappingProxyType(self._accounts)

    @property
    def finished(self) -> frozenset[int]:
        return self.snapshot.finished

    @property
    def removed_players(self) -> frozenset[int]:
        return self.snapshot.removed_players

    def player_id(self, username: str) -> int | None:
        account = self._account_named(username)
        return None if account is None else account.player_id

    def _account_named(self, username: str) -> Account | None:
        """The account of that name; names are compared without regard to case (an exact match
        first: a database from before that rule may hold names that differ only in case)."""
        account = self._accounts.get(username)
        if account is None:
            key = username.casefold()
            matches = [a for name, a in self._accounts.items() if name.casefold() == key]
            account = matches[0] if len(matches) == 1 else None
        return account

    def queue(self, object_id: int) -> list[QueuedOrder]:
        """The orders in an object's queue, in slot order."""
        return list(self._queues.get(object_id, ()))

    def orders_of(self, player: int) -> list[Order]:
        """The player's accepted orders of the coming turn, in submission order."""
        return self.snapshot.orders_of(player)

    def acting_players(self) -> list[int]:
        return list(self.snapshot.acting_players())

    def waiting_for(self) -> list[int]:
        """Players who can act this turn and have not finished it (the TimeRemaining list)."""
        return list(self.snapshot.waiting_for())

    # -- readiness -----------------------------------------------------------------------

    def ready(self) -> defer.Deferred:
        """Fires when no end of turn is in progress (at once, usually)."""
        if self._ready is None:
            return defer.succeed(None)
        waiter: defer.Deferred = defer.Deferred()
        self._waiters.append(waiter)
        return waiter

    @property
    def busy(self) -> bool:
        return self._ready is not None

    def ready_or_refused(self) -> defer.Deferred:
        """What a player's request waits for: `ready()`, but while the store cannot keep the
        ending turn (the database is away; the turn is stored again every COMMIT_RETRY_S) it
        fails at once with Refused(TURN_NOT_STORED), so that the player gets a prompt "try
        again"."""
        if self._ready is None:
            return defer.succeed(None)
        if self._store_trouble is not None:
            return _refuse(TURN_NOT_STORED)
        waiter: defer.Deferred = defer.Deferred()
        self._refusable.append(waiter)
        return waiter

    # -- players and accounts ------------------------------------------------------------

    def authenticate(self, username: str, password: str) -> defer.Deferred:
        """The player id of a correct login; fails with Refused(BAD_LOGIN) otherwise, taking the
        same time whether or not the name exists, or Refused(REMOVED) for a removed player.
        A correct password whose stored hash is weaker than the policy's is hashed again."""
        account = self._account_named(username)
        d = self.hasher.verify(password, None if account is None else account.password_hash)

        def checked(ok: bool) -> int:
            if not ok or account is None:
                raise Refused(BAD_LOGIN)
            if account.player_id in self._removed:
                raise Refused(REMOVED)
            if attendance_of(self._attendance, account.player_id).presence is Presence.RESIGNED:
                raise Refused(RESIGNED)
            if self.hasher.policy.needs_upgrade(account.password_hash):
                self._upgrade_hash(account, password)
            return account.player_id

        return d.addCallback(checked)

    def _upgrade_hash(self, account: Account, password: str) -> None:
        """Store a hash of the policy's strength for a password just verified (in the background:
        the login is answered at once; a failure only leaves the old hash in place)."""
        d = self.hasher.hash(password)
        d.addCallback(lambda digest: self._lock.run(self._replace_hash, account.username, digest, account))
        d.addCallbacks(
            lambda _: log.info(
                "game {game}: the password hash of player {player} was upgraded",
                game=self.setup.name,
                player=account.player_id,
            ),
            lambda failure: log.failure(
                "game {game}: upgrading the password hash of player {player} failed",
                failure,
                game=self.setup.name,
                player=account.player_id,
            ),
        )

    def change_password(self, username: str, old_password: str, new_password: str) -> defer.Deferred:
        """A player changes their password (the web API's password change): fails with
        Refused(BAD_LOGIN) for a wrong name or old password (as a login would), or with the
        policy's Refused for a new password that cannot be one. Fires with the player id."""
        problem = self.hasher.policy.problem(new_password)
        if problem is not None:
            return _refuse(problem)
        d = self.authenticate(username, old_password)

        def hash_new(player: int) -> defer.Deferred:
            account = self._account_named(username)
            assert account is not None
            return self.hasher.hash(new_password).addCallback(
                lambda digest: self._lock.run(self._replace_hash, account.username, digest, None)
            )

        return d.addCallback(hash_new)

    def set_password(
        self, username: str, password: str | None = None, *, password_hash: str | None = None
    ) -> defer.Deferred:
        """An operator sets a player's password (`tae-server set-password`): a password (checked
        against the policy) or a hash made by `server.accounts.hash_password`. Fires with the
        player id; Refused(NO_SUCH_PLAYER) or the policy's Refused."""
        if password_hash is None:
            problem = self.hasher.policy.problem(password or "")
            if problem is not None:
                return _refuse(problem)
        account = self._account_named(username)
        if account is None:
            return _refuse(NO_SUCH_PLAYER)
        hashed = defer.succeed(password_hash) if password_hash else self.hasher.hash(password or "")
        return hashed.addCallback(
            lambda digest: self._lock.run(self._replace_hash, account.username, digest, None)
        )

    def _replace_hash(self, username: str, digest: str, expected: Account | None) -> defer.Deferred:
        """Store and apply a new password hash (only over `expected`'s, when given: an upgrade
        never undoes a change made meanwhile)."""
        account = self._accounts.get(username)
        if account is None:
            return _refuse(NO_SUCH_PLAYER)
        if expected is not None and account.password_hash != expected.password_hash:
            return defer.succeed(account.player_id)
        store = getattr(self.store, "set_password_hash", None)
        d = defer.maybeDeferred(store, self.id, account.player_id, digest) if store else defer.succeed(None)

        def stored(_: object) -> int:
            self._accounts[username] = replace(account, password_hash=digest)
            return account.player_id

        return d.addCallback(stored)

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
        """Add a player; fires with the new player id, or fails with Refused.

        Operators hand over `password_hash` (made by `server.accounts.hash_password`) instead
        of a password."""
        problem = self._account_problem(username, creation_setting_applies)
        if problem is None and not password_hash:
            problem = self.hasher.policy.problem(password)
        if problem is not None:
            return _refuse(problem)
        hashed = defer.succeed(password_hash) if password_hash else self.hasher.hash(password)
        return hashed.addCallback(
            lambda digest: self._lock.run(
                self._create_account, username, digest, email, comment, creation_setting_applies
            )
        )

    def _create_account(
        self, username: str, password_hash: str, email: str, comment: str, creation_setting_applies: bool
    ) -> defer.Deferred:
        problem = self._account_problem(username, creation_setting_applies)
        if problem is not None:
            return _refuse(problem)
        player_id = len(self._state.players) + 1
        state, messages = ruleset.add_player(self._state, username, join_rng(self.setup.seed, player_id))
        account = Account(username, password_hash, player_id, email, comment)
        d = defer.maybeDeferred(self.store.add_account, self.id, account, messages)

        def stored(_: object) -> int:
            self._state = state
            self._accounts[username] = account
            for message in messages:
                self._post(message)
            self._publish()
            self._start_if_ready()
            return player_id

        return d.addCallback(stored)

    def _account_problem(self, username: str, creation_setting_applies: bool) -> Problem | None:
        if creation_setting_applies and not self.setup.account_creation:
            return CREATION_DISABLED
        if (
            not username
            or len(username) > MAX_NAME
            or "@" in username
            or username.strip() != username
            or not username.isprintable()
        ):
            return BAD_NAME
        key = username.casefold()
        if (
            any(name.casefold() == key for name in self._accounts)
            or self._state.player_by_name(username) is not None
        ):
            return ACCOUNT_EXISTS
        if self._state.phase is Phase.OVER:
            return GAME_ENDED
        if self.setup.max_players and len(self._state.players) >= self.setup.max_players:
            return GAME_FULL
        return None

    def remove_player(self, username: str) -> defer.Deferred:
        """An operator removes a player: they can no longer log in or give orders, and the turn
        no longer waits for them (their fleets stay; orders already accepted are kept).
        Fires with the player id (removing twice is not an error); Refused(NO_SUCH_PLAYER)."""
        return self._lock.run(self._remove_player, username)

    def _remove_player(self, username: str) -> defer.Deferred:
        player_id = self.player_id(username)
        if player_id is None:
            return _refuse(NO_SUCH_PLAYER)
        if player_id in self._removed:
            return defer.succeed(player_id)
        remove = getattr(self.store, "remove_player", None)
        d = defer.maybeDeferred(remove, self.id, player_id) if remove else defer.succeed(None)

        def stored(_: object) -> int:
            self._removed.add(player_id)
            self._finished.discard(player_id)
            self._publish(touched=())  # nothing a TP client caches shows who was removed
            log.info(
                "game {game}: player {player} ({user}) removed",
                game=self.setup.name,
                player=player_id,
                user=username,
            )
            if self._started and self._finished and not self.busy:
                self._check_turn_end()  # the others may all have finished already
            return player_id

        return d.addCallback(stored)

    # -- seats: absent players, vacations, resigning (server.attendance) -------------------

    def attendance(self, player: int) -> Attendance:
        return attendance_of(self._attendance, player)

    def take_seat_back(self, player: int) -> defer.Deferred:
        """The player logged in: an absent player plays their own seat again and everyone is
        told. A vacation goes on (only its end or the player ends it); a resignation is for
        good. Never fails: when the store cannot keep it, the seat stays with the stand-in
        (logged) until the player's next login or order. Fires with None."""
        if attendance_of(self._attendance, player).presence is not Presence.ABSENT:
            return defer.succeed(None)  # every other login: no need to wait for the lock
        return self._lock.run(self._back_quietly, player)

    def _take_seat_back(self, player: int) -> defer.Deferred:
        before = attendance_of(self._attendance, player)
        if before.presence is not Presence.ABSENT or not self._state.has_player(player):
            return defer.succeed(before)
        return self._change_seat(back(before), notices.logged_in_again(self._state, player))

    def _back_quietly(self, player: int) -> defer.Deferred:
        """`_take_seat_back` under the lock already held; a store failure only leaves the seat
        with the stand-in (the request that brought the player back has succeeded)."""

        def not_stored(failure) -> None:
            log.warn(
                "game {game}: storing that player {player} is back failed: {error}",
                game=self.setup.name,
                player=player,
                error=failure.getErrorMessage(),
            )

        return self._take_seat_back(player).addCallbacks(lambda _: None, not_stored)

    def start_vacation(self, player: int, days: int) -> defer.Deferred:
        """The player goes on vacation for `days` days from now (1 to the game's
        vacation_days_max; again while on vacation: a new end date). The stand-in plays the seat
        until then. Fires with the Attendance; Refused when the game has no vacations, for
        other lengths, a resigned or removed player, or a game that is over."""
        return self._lock.run(self._start_vacation, player, days)

    def _start_vacation(self, player: int, days: int) -> defer.Deferred:
        problem = self._seat_problem(player)
        maximum = self.setup.vacation_days_max
        if problem is None and not maximum:
            problem = NO_VACATIONS
        if problem is None and (
            isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= maximum
        ):
            problem = vacation_days(maximum)
        if problem is not None:
            return _refuse(problem)
        before = attendance_of(self._attendance, player)
        after = Attendance(player, Presence.VACATION, 0, self.clock.seconds() + days * DAY_S)
        told = () if before.presence is Presence.VACATION else notices.vacation_started(self._state, player)
        return self._change_seat(after, told)

    def end_vacation(self, player: int) -> defer.Deferred:
        """The player cancels their vacation and plays their own seat again; fires with the
        Attendance, Refused(NOT_ON_VACATION) when they are not on one."""
        return self._lock.run(self._end_vacation, player, False)

    def _end_vacation(self, player: int, only_when_due: bool) -> defer.Deferred:
        before = attendance_of(self._attendance, player)
        if before.presence is not Presence.VACATION:
            return defer.succeed(before) if only_when_due else _refuse(NOT_ON_VACATION)
        if only_when_due and before.until is not None and before.until > self.clock.seconds():
            self._schedule_vacation_end(before)  # the clock fired early
            return defer.succeed(before)
        return self._change_seat(back(before), notices.vacation_ended(self._state, player))

    def resign(self, player: int) -> defer.Deferred:
        """The player leaves the game for good: the stand-in plays their seat to the end, and
        they cannot log in again. Fires with the Attendance (resigning twice is not an error)."""
        return self._lock.run(self._resign, player)

    def _resign(self, player: int) -> defer.Deferred:
        before = attendance_of(self._attendance, player)
        if before.presence is Presence.RESIGNED:
            return defer.succeed(before)
        problem = self._seat_problem(player)
        if problem is not None:
            return _refuse(problem)
        return self._change_seat(Attendance(player, Presence.RESIGNED), notices.resigned(self._state, player))

    def _seat_problem(self, player: int) -> Problem | None:
        if not self._state.has_player(player):
            return NO_SUCH_PLAYER
        if player in self._removed:
            return REMOVED
        if attendance_of(self._attendance, player).presence is Presence.RESIGNED:
            return RESIGNED
        if self._state.phase is Phase.OVER:
            return GAME_ENDED
        return None

    def _change_seat(self, after: Attendance, told: tuple[Message, ...]) -> defer.Deferred:
        """Store a seat's new attendance and the notices about it, then apply them (under the lock)."""
        record = getattr(self.store, "record_attendance", None)
        d = defer.maybeDeferred(record, self.id, (after,), told) if record else defer.succeed(None)

        def stored(_: object) -> Attendance:
            before = attendance_of(self._attendance, after.player)
            self._attendance[after.player] = after
            for message in told:
                self._post(message)
            self._schedule_vacation_end(after)
            self._publish()
            log.info(
                "game {game}: player {player}'s seat: {before} -> {after}",
                game=self.setup.name,
                player=after.player,
                before=before.presence.value,
                after=after.presence.value,
            )
            if after.stand_in and self._started and not self.busy:
                if self._finished:
                    self._check_turn_end()  # the others may all have finished already
                self._end_if_only_stand_ins_act()
            return after

        return d.addCallback(stored)

    def _schedule_vacation_end(self, attendance: Attendance) -> None:
        """Run the end of a vacation at its end date (at once for one that ended meanwhile)."""
        call = self._vacation_ends.pop(attendance.player, None)
        if call is not None and call.active():
            call.cancel()
        if attendance.presence is not Presence.VACATION or attendance.until is None or self._closed:
            return
        delay = max(0.0, attendance.until - self.clock.seconds())
        self._vacation_ends[attendance.player] = self.clock.callLater(
            delay, self._vacation_due, attendance.player
        )

    def _vacation_due(self, player: int) -> None:
        self._vacation_ends.pop(player, None)
        d = self._lock.run(self._end_vacation, player, True)

        def not_stored(failure) -> None:
            log.warn(
                "game {game}: ending the vacation of player {player} failed ({error}); "
                "trying again in {delay} s",
                game=self.setup.name,
                player=player,
                error=failure.getErrorMessage(),
                delay=COMMIT_RETRY_S,
            )
            if not self._closed:
                self._vacation_ends[player] = self.clock.callLater(COMMIT_RETRY_S, self._vacation_due, player)

        d.addErrback(not_stored)

    # -- orders --------------------------------------------------------------------------

    def check_order(self, player: int, object_id: int, order_type: int, target: int) -> Problem | None:
        """What Probe Order answers: the ruleset's verdict on the order, nothing stored."""
        snapshot = self.snapshot
        return check_order(
            snapshot.state, Order(player, object_id, order_type, target), snapshot.orders_of(player)
        )

    def insert_order(
        self, player: int, object_id: int, slot: int, order_type: int, target: int
    ) -> defer.Deferred:
        """Check, store, then queue a player's order; fires with its slot (slot -1 appends).
        An absent player who gives an order plays their own seat again."""
        return self._lock.run(self._player_inserts, player, object_id, slot, order_type, target)

    def _player_inserts(
        self, player: int, object_id: int, slot: int, order_type: int, target: int
    ) -> defer.Deferred:
        presence = attendance_of(self._attendance, player).presence
        if presence is Presence.RESIGNED:
            return _refuse(RESIGNED)
        d = self._insert_order(player, object_id, slot, order_type, target)
        if presence is Presence.ABSENT:
            d.addCallback(lambda position: self._back_quietly(player).addCallback(lambda _: position))
        return d

    def _insert_order(
        self, player: int, object_id: int, slot: int, order_type: int, target: int
    ) -> defer.Deferred:
        if player in self._removed:
            return _refuse(REMOVED)
        order = Order(player, object_id, order_type, target)
        problem = check_order(self._state, order, self.snapshot.orders_of(player))
        queue = self._queues.get(object_id, ())
        if problem is None and not (slot == -1 or 0 <= slot <= len(queue)):
            problem = BAD_SLOT
        if problem is not None:
            return _refuse(problem)
        self.order_serial += 1
        position = len(queue) if slot == -1 else slot
        entry = OrderEntry(
            self.order_serial, self._state.turn + 1, player, object_id, position, order_type, target
        )
        d = defer.maybeDeferred(self.store.record_order, self.id, entry)

        def stored(_: object) -> int:
            current = self._queues.get(object_id, ())
            self._queues[object_id] = current[:position] + (QueuedOrder(entry, order),) + current[position:]
            self._publish(touched=(object_id,))
            return position

        return d.addCallback(stored)

    def remove_order(self, player: int, object_id: int, slot: int) -> defer.Deferred:
        """Take back one order of the coming turn; fails with Refused when there is none."""
        return self._lock.run(self._remove_order, player, object_id, slot)

    def _remove_order(self, player: int, object_id: int, slot: int) -> defer.Deferred:
        if self._state.phase is Phase.OVER or not owns_queue(self._state, player, object_id):
            return _refuse(NO_SUCH_QUEUE)
        queue = self._queues.get(object_id, ())
        if not 0 <= slot < len(queue):
            return _refuse(BAD_SLOT)
        queued = queue[slot]
        d = defer.maybeDeferred(self.store.remove_order, self.id, queued.entry.seq)

        def stored(_: object) -> None:
            remaining = tuple(q for q in self._queues.get(object_id, ()) if q is not queued)
            if remaining:
                self._queues[object_id] = remaining
            else:
                self._queues.pop(object_id, None)
            self._publish(touched=(object_id,))

        return d.addCallback(stored)

    # -- boards --------------------------------------------------------------------------

    def _post(self, message: Message) -> None:
        index = self._posted.get(message.player, 0)
        self._posted[message.player] = index + 1
        self._boards[message.player] = (*self._boards.get(message.player, ()), BoardMessage(index, message))

    def remove_message(self, player: int, slot: int) -> defer.Deferred:
        """Remove one message from a player's board; fails with Refused(NO_SUCH_MESSAGE)."""
        return self._lock.run(self._remove_message, player, slot)

    def _remove_message(self, player: int, slot: int) -> defer.Deferred:
        board = self._boards.get(player, ())
        if not 0 <= slot < len(board):
            return _refuse(NO_SUCH_MESSAGE)
        item = board[slot]
        d = defer.maybeDeferred(self.store.remove_message, self.id, player, item.index)

        def stored(_: object) -> None:
            self._boards[player] = tuple(m for m in self._boards.get(player, ()) if m is not item)
            self._publish()

        return d.addCallback(stored)

    # -- turns ---------------------------------------------------------------------------

    def finish_turn(self, player: int) -> defer.Deferred:
        """The player has finished the turn: stored, then applied (and when that ends the turn,
        answered once the new turn is ready), so the player's Okay is never ahead of the store.
        A flag the store cannot keep is not applied: the request fails with the store's error."""
        presence = attendance_of(self._attendance, player).presence
        if self._state.phase is Phase.OVER or self.busy or player in self._removed:
            return self.ready()
        if presence is Presence.RESIGNED:
            return _refuse(RESIGNED)
        if presence is Presence.ABSENT:  # finishing a turn is playing: the seat is theirs again
            back = self._lock.run(self._take_seat_back, player)
            return back.addCallback(lambda _: self.finish_turn(player))
        if player in self._finished:
            self._check_turn_end()
            return self.ready_or_refused().addErrback(lambda _: None)
        turn = self._state.turn + 1

        def stored(_: object) -> defer.Deferred:
            if (
                self._state.turn + 1 == turn
                and not self.busy
                and player not in self._removed | self._finished
            ):
                self._finished.add(player)
                self._publish(touched=())  # finished flags are in no TP cache item
                self._check_turn_end()
            # The flag is stored, so the finish is durable (a restart ends the turn again): the
            # answer need not wait for a turn whose storing fails.
            return self.ready_or_refused().addErrback(lambda _: None)

        return self._store_finished(player, turn).addCallback(stored)

    def _check_turn_end(self) -> None:
        acting = self.snapshot.acting_players()
        if not acting:
            self._end_if_only_stand_ins_act()
            return
        done = sum(1 for pid in acting if pid in self._finished)
        self.timer.player_finished(done, len(acting), len(self._state.players))

    def _end_if_only_stand_ins_act(self) -> None:
        """A turn in which only seats the stand-in plays act (a combat between two absent
        players, say) ends at once while anyone else is still playing the game: they have
        nothing to do in it. A game nobody plays any more goes on at its deadline only."""
        if self._only_stand_ins_act():
            self.clock.callLater(0, self._end_stand_ins_turn)

    def _only_stand_ins_act(self) -> bool:
        snapshot = self.snapshot
        if not self._started or snapshot.over or self.busy or self._closed or snapshot.acting_players():
            return False
        everyone = ruleset.acting_players(self._state, self._removed)
        present = [p.id for p in self._state.players if p.id not in self._removed | snapshot.stand_ins()]
        return bool(everyone and present)

    def _end_stand_ins_turn(self) -> None:
        if self._only_stand_ins_act():  # still so (nobody came back meanwhile)
            self.timer.force_end()

    def _store_finished(self, player: int, turn: int) -> defer.Deferred:
        """Remember durably that the player finished, so that a turn whose end a crash cut short
        ends again at restart (a store without finished flags keeps nothing)."""
        record = getattr(self.store, "record_finished", None)
        if record is None:
            return defer.succeed(None)
        d = defer.maybeDeferred(record, self.id, turn, player)

        def not_stored(failure):
            log.warn(
                "game {game}: storing that player {player} finished failed: {error}",
                game=self.setup.name,
                player=player,
                error=failure.getErrorMessage(),
            )
            return failure

        return d.addErrback(not_stored)

    def resume(self, deadline: tuple[int, float] | None = None) -> None:
        """Start a restored game: its timer, the stored deadline of the current turn (a restart
        does not make a turn longer; a deadline already passed ends the turn now), and the
        players who had finished it (when that was everyone, the turn is resolved now)."""
        self.start()
        if not self._started or self._state.phase is Phase.OVER:
            return
        if deadline is not None and deadline[0] == self._state.turn + 1:
            self.timer.resume_deadline(deadline[1])
        for attendance in self._attendance.values():
            self._schedule_vacation_end(attendance)
        if self._finished and not self.busy:
            self._check_turn_end()
        self._end_if_only_stand_ins_act()

    def start(self) -> None:
        """Start the first turn's timer once the game has enough players."""
        self._start_if_ready()

    def _start_if_ready(self) -> None:
        if self._started or self._state.phase is Phase.OVER:
            return
        if len(self._state.players) >= max(1, self.setup.timer.turn_players_min):
            self._started = True
            self.timer.start_turn(len(self._state.players))

    def end_turn(self) -> defer.Deferred:
        """Run the end of turn now (operators, tests); the timer calls the same path."""
        if self._state.phase is not Phase.OVER and not self.busy:
            self.timer.force_end()
        return self.ready()

    def _timer_ended_turn(self, reason: int) -> None:
        self._resolve()

    def _resolve(self) -> None:
        if self._state.phase is Phase.OVER or self._ready is not None:
            return
        self._ready = defer.Deferred()  # sessions of this game wait from now on
        self._lock.acquire().addCallback(self._resolve_locked)

    def _resolve_locked(self, _lock: object) -> None:
        d = self._play_stand_ins()
        d.addErrback(
            lambda failure: log.failure("game {game}: the stand-in failed", failure, game=self.setup.name)
        )
        d.addCallback(lambda _: self._resolve_orders())

    def _play_stand_ins(self) -> defer.Deferred:
        """Give the orders of every seat the stand-in plays in this turn, one seat after the
        other in id order, each checked, stored and queued like any player's."""
        stand_ins = self.snapshot.stand_ins()
        d: defer.Deferred = defer.succeed(None)
        for player in ruleset.acting_players(self._state, self._removed):
            if player in stand_ins:
                d.addCallback(self._stand_in_turn, player)
        return d

    def _stand_in_order(self, _previous: object, order: ruleset.Order) -> defer.Deferred:
        return self._insert_order(order.player, order.fleet, -1, order.type, order.target)

    def _stand_in_turn(self, _previous: object, player: int) -> defer.Deferred:
        # The stand-in sees what the player sees, and the orders the player gave this turn.
        seat = seat_view(self._state, player, self.snapshot.orders_of(player))
        orders = stand_in_orders(seat, stand_in_rng(self.setup.seed, self._state.turn + 1, player))
        d: defer.Deferred = defer.succeed(None)
        for order in orders:
            d.addCallback(self._stand_in_order, order)
            d.addErrback(self._stand_in_order_failed, order)
        if orders:
            log.info(
                "game {game}: the stand-in gives {count} orders for player {player}",
                game=self.setup.name,
                count=len(orders),
                player=player,
            )
        return d

    def _stand_in_order_failed(self, failure, order: Order) -> None:
        log.warn(
            "game {game}: the stand-in's order {order} was not taken: {error}",
            game=self.setup.name,
            order=order,
            error=failure.getErrorMessage(),
        )

    def _resolve_orders(self) -> None:
        orders = self.snapshot.all_orders()
        try:
            outcome = resolve_turn(self._state, orders, game_rng(self.setup.seed, self._state.turn + 1))
        except Exception:
            # A bug in the rules must not freeze every player of the game: keep the turn open.
            log.failure(
                "game {game}: resolving turn {turn} failed", game=self.setup.name, turn=self._state.turn + 1
            )
            self._lock.release()
            self._release()
            return
        attendance: tuple[Attendance, ...] = ()
        told: tuple[Message, ...] = ()
        if outcome.state.phase is not Phase.OVER:
            # Who missed this turn: the players it waited for who gave no order and did not finish.
            acted = {order.player for order in orders} | self._finished
            tally = after_turn(
                self._attendance,
                self.snapshot.acting_players(),
                acted,
                self.setup.absent_after_missed_turns,
            )
            attendance = tally.changed
            missed = {row.player: row.missed for row in tally.changed}
            for player in tally.became_absent:
                told += notices.became_absent(outcome.state, player, missed[player])
        record = TurnRecord(
            outcome.state.turn,
            outcome.state,
            outcome.messages,
            outcome.events,
            self._modtimes.serial + 1,
            attendance,
            told,
        )
        self._commit(record, outcome)

    def _commit(self, record: TurnRecord, outcome: ruleset.TurnOutcome) -> None:
        self._retry = None
        if self._closed:
            return
        d = defer.maybeDeferred(self.store.commit_turn, self.id, record)
        d.addCallback(lambda _: self._apply(outcome, record))
        d.addErrback(self._commit_failed, record, outcome)

    def _apply(self, outcome: ruleset.TurnOutcome, record: TurnRecord) -> None:
        self._state = outcome.state
        self._queues.clear()
        self._finished.clear()
        for message in outcome.messages:
            self._post(message)
        for row in record.attendance:
            self._attendance[row.player] = row
        for message in record.notices:
            self._post(message)
        for row in record.attendance:
            if row.presence is Presence.ABSENT:
                log.info(
                    "game {game}: player {player} missed {missed} turns: the stand-in plays the seat",
                    game=self.setup.name,
                    player=row.player,
                    missed=row.missed,
                )
        self._last_turn = (tuple(outcome.messages), tuple(outcome.events))
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
        if self._store_trouble is not None:
            log.info("game {game}: the store keeps turns again", game=self.setup.name)
            self._store_trouble = None
        self._lock.release()
        self._ready = None
        if self._state.phase is Phase.OVER:
            self.timer.stop()
            self._publish()
            self._release()
            self._announce(-1, 1)
        else:
            self._publish()
            self._release()
            self.timer.start_turn(len(self._state.players))
            self._end_if_only_stand_ins_act()

    def _commit_failed(self, failure, record: TurnRecord, outcome: ruleset.TurnOutcome) -> None:
        """The store could not keep the turn. Nothing was told yet: keep the sessions waiting
        and store the very same turn again (if the first attempt did commit and only its answer
        was lost, storing the identical turn again succeeds)."""
        if failure.check(StoreUnavailable):
            if self._store_trouble is None:  # one line per outage, not a traceback every 5 s
                log.warn(
                    "game {game}: storing turn {turn} failed ({error}); retrying every {delay} s",
                    game=self.setup.name,
                    turn=record.turn,
                    error=failure.getErrorMessage(),
                    delay=COMMIT_RETRY_S,
                )
        else:
            log.failure(
                "game {game}: storing turn {turn} failed; retrying in {delay} s",
                failure,
                game=self.setup.name,
                turn=record.turn,
                delay=COMMIT_RETRY_S,
            )
        self._store_trouble = failure.value
        waiting, self._refusable = self._refusable, []
        for waiter in waiting:
            waiter.errback(Refused(TURN_NOT_STORED))
        if not self._closed:
            self._retry = self.clock.callLater(COMMIT_RETRY_S, self._commit, record, outcome)

    @property
    def closed(self) -> bool:
        """This process no longer runs the game (`close`)."""
        return self._closed

    def close(self) -> None:
        """This process stops running the game (it moved to another node, or the server
        stops): no timer, no more retries of a turn that could not be stored. A turn left
        unstored is resolved again by whoever runs the game next (it is deterministic)."""
        self._closed = True
        self.timer.stop()
        for call in self._vacation_ends.values():
            if call.active():
                call.cancel()
        self._vacation_ends.clear()
        if self._retry is not None and self._retry.active():
            self._retry.cancel()
        self._retry = None

    def _release(self) -> None:
        self._ready = None
        waiters, self._waiters = self._waiters + self._refusable, []
        self._refusable = []
        for waiter in waiters:
            waiter.callback(None)

    def _announce(self, seconds: int, reason: int) -> None:
        """The timer's news (TP TimeRemaining): a snapshot that carries it."""
        self._publish(touched=(), announcement=Announcement(seconds, reason))

    def modtime(self, key: Hashable) -> int:
        """The current modtime of a TP cache item (tests and benchmarks)."""
        return self.snapshot.modtime(key)
