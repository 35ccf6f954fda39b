"""The write side of one game of TaE: accounts, order queues, boards and the turn lifecycle.

`Game` is the only place that changes a game. Every change runs under one lock, is checked by
the ruleset (`check_order` at submission, `resolve_turn` at the end of a turn), handed to the
store, and applied here only once the store has it, so nothing a player was told is lost. After
every applied change the game publishes one immutable `GameSnapshot` (`game.snapshot`, and to
every `subscribe`r): readers render from snapshots and never look inside the game.

`Game` is made of parts, a module each (`server.game.write_side` says how): this module holds the
snapshots, readiness and the turn lifecycle; `server.game.queues` the order queues and the
boards, `server.game.turn_end` the end of a turn, `server.game.accounts` the
players and accounts, `server.game.seats` who plays each seat (absence, vacations, the
stand-in), `server.game.clock` the operators' controls of the clock and the settings.

Writes return Deferreds; a refused write fails with `server.model.refusals.Refused`. While a turn is
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
from ruleset import GameState, Message, Order, Phase, join_rng
from server.game.accounts import PlayerAccounts
from server.game.clock import TurnClockControls
from server.game.passwords import InlineHasher, PasswordHasher, credential_mark
from server.game.queues import OrdersAndBoards
from server.game.records import ChangeRecords
from server.game.seats import Seats
from server.game.server_accounts import ServerAccounts
from server.game.stand_in import StandInPlayer
from server.game.timer import TurnTimer
from server.game.turn_end import TurnEnd
from server.model.attendance import Attendance, Presence, attendance_of
from server.model.changes import TurnFinished
from server.model.names import lookup_key
from server.model.refusals import (
    RESIGNED,
    TURN_NOT_STORED,
    refuse,
)
from server.model.snapshot import Announcement, BoardMessage, GameSnapshot, QueuedOrder
from server.model.store import (
    Account,
    GameSetup,
    GameStore,
    StoredGame,
)
from server.model.timer_settings import ALL_FINISHED, END_OF_TURN_STARTED
from server.model.writes import (
    StoreFinished,
)
from server.views.tp.modtimes import ModTimes, all_fingerprints, object_fingerprint, queue_fingerprint

log = Logger()

#: The timer's announcements that the turn ends now.
TURN_ENDS = (ALL_FINISHED, END_OF_TURN_STARTED)


class Game(PlayerAccounts, Seats, OrdersAndBoards, TurnClockControls, TurnEnd, ChangeRecords):
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
        # The computer player of the seats the stand-in plays; the directory gives every game
        # the server's (`server.game.directory.GameDirectory.add`).
        self.stand_in = StandInPlayer()
        # The server's accounts (one per server, each with seats in several games); the
        # directory gives every game the server's. Alone, a game sees its own seats only.
        self.server_accounts = ServerAccounts(lambda: (self,))
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
        self._stored_pause: tuple[bool, float | None] = (False, None)
        self._init_records(None)
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
        # A notice follows the join messages stored before it, and comes before the next one.
        posts = [(turn, kind, i, 1, 0, m) for turn, kind, i, m in ordered]
        posts.extend((m.turn, 1, joins, 0, j, m) for j, (joins, m) in enumerate(stored.notices))
        for *_, message in sorted(posts, key=lambda item: item[:5]):
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
        game._stored_pause = stored.paused
        game._stored_deadline = stored.deadline
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
            # a seat's change (server.model.attendance) posts a notice to every player's board
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
            owners=MappingProxyType({a.player_id: a.account_name for a in self._accounts.values()}),
            credential_marks=MappingProxyType(
                {a.player_id: credential_mark(a.password_hash) for a in self._accounts.values()}
            ),
            boards=MappingProxyType(dict(self._boards)),
            posted=MappingProxyType(dict(self._posted)),
            modtimes=self._modtimes.table(),
            modtime_serial=self._modtimes.serial,
            deadline=self.timer.deadline,
            paused=self.timer.paused,
            paused_left=self.timer.paused_left,
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
        """The account of that name; names are compared as RFC 8265 compares them
        (`server.model.names.username_key`: case, width and composition do not matter; an exact
        match first: a database from before that rule may hold names that differ only in case)."""
        account = self._accounts.get(username)
        if account is None:
            key = lookup_key(username)
            if key is None:
                return None
            matches = [a for name, a in self._accounts.items() if lookup_key(name) == key]
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
            return refuse(TURN_NOT_STORED)
        waiter: defer.Deferred = defer.Deferred()
        self._refusable.append(waiter)
        return waiter

    # -- turns ---------------------------------------------------------------------------

    def finish_turn(self, player: int) -> defer.Deferred:
        """The player has finished the turn: stored, then applied (and when that ends the turn,
        answered once the new turn is ready), so the player's Okay is never ahead of the store.
        A flag the store cannot keep is not applied: the request fails with the store's error."""
        presence = attendance_of(self._attendance, player).presence
        if self._state.phase is Phase.OVER or self.busy or player in self._removed:
            return self.ready()
        if presence is Presence.RESIGNED:
            return refuse(RESIGNED)
        if presence is Presence.ABSENT:  # finishing a turn is playing: the seat is theirs again
            back = self._lock.run(self._take_seat_back, player)
            return back.addCallback(lambda _: self.finish_turn(player))
        if player in self._finished:
            self._check_turn_end()
            return self.ready_or_refused().addErrback(lambda _: None)
        turn = self._state.turn + 1

        def stored(_: object) -> defer.Deferred:
            # The flag is stored, so the finish is durable (a restart ends the turn again): the
            # answer need not wait for a turn whose storing fails.
            self._check_turn_end()
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
        """Remember durably that the player finished (under the lock), so that a turn whose end
        a crash cut short ends again at restart; then the flag is applied."""
        return self._lock.run(self._record_finished, player, turn)

    def _record_finished(self, player: int, turn: int) -> defer.Deferred:
        if self._state.turn + 1 != turn or self.busy or player in self._removed | self._finished:
            return defer.succeed(None)  # the turn ended meanwhile, or the flag is there

        def stored() -> None:
            self._finished.add(player)
            self._publish(touched=())  # finished flags are in no TP cache item

        after = self._preview(finished=frozenset(self._finished | {player}))
        d = self._write(TurnFinished(turn, player), (StoreFinished(turn, player),), stored, after)

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
        players who had finished it (when that was everyone, the turn is resolved now). The
        deadline the clock then has is stored once, if it is not the stored one."""
        self._deadline_held = True  # the clock is being put back: not each step is stored
        try:
            self.start()
            if not self._started or self._state.phase is Phase.OVER:
                self.restore_clock(None)
                return
            self.restore_clock(deadline)
        finally:
            self._deadline_held = False
            self._follow_deadline()
        for attendance in self._attendance.values():
            self._schedule_vacation_end(attendance)
        self._open_stand_in_turn()
        if self._finished and not self.busy:
            self._check_turn_end()
        self._end_if_only_stand_ins_act()

    def restore_clock(self, deadline: tuple[int, float] | None) -> None:
        """Put the timer back as stored (the open turn's deadline, a pause) without running
        anything: `resume` starts from here, and an operator's change made without a server
        reads and changes the clock this gives."""
        if deadline is not None and deadline[0] == self._state.turn + 1:
            self.timer.resume_deadline(deadline[1])
        paused, left = self._stored_pause
        if paused:
            self.timer.restore_pause(left)
            self._publish(touched=())

    def start(self) -> None:
        """Start the turn timer of a game restored or created (when it has enough players)."""
        self._start_if_ready(restoring=True)

    def _start_if_ready(self, restoring: bool = False) -> None:
        """Start the first turn's clock once the game has enough players; its deadline is then
        stored with a `DeadlineChanged` record that says the turn began (not again for a game
        restored: that was stored before)."""
        if self._started or self._state.phase is Phase.OVER:
            return
        if len(self._state.players) >= max(1, self.setup.timer.turn_players_min):
            self._started = True
            self._clock_started = not restoring
            self.timer.start_turn(len(self._state.players))

    @property
    def closed(self) -> bool:
        """This process no longer runs the game (`close`)."""
        return self._closed

    def close(self) -> None:
        """This process stops running the game (it moved to another node, or the server
        stops): no timer, no more retries of a turn that could not be stored. A turn left
        unstored is resolved again by whoever runs the game next (it is deterministic); what
        waited for it here (`ready()`, the game's lock) is let go (`_abandon_turn_end`)."""
        self._closed = True
        self.timer.stop()
        for call in self._vacation_ends.values():
            if call.active():
                call.cancel()
        self._vacation_ends.clear()
        retrying = self._retry is not None and self._retry.active()
        if retrying:
            assert self._retry is not None
            self._retry.cancel()
        self._retry = None
        if retrying:
            self._abandon_turn_end()

    def _release(self) -> None:
        self._ready = None
        waiters, self._waiters = self._waiters + self._refusable, []
        self._refusable = []
        for waiter in waiters:
            waiter.callback(None)

    def _announce(self, seconds: int, reason: int) -> None:
        """The timer's news (TP TimeRemaining): a snapshot that carries it; a deadline it moved
        is stored (`server.game.records`)."""
        self._publish(touched=(), announcement=Announcement(seconds, reason))
        if reason not in TURN_ENDS:  # the end of the turn stores the next turn's deadline
            self._follow_deadline()

    def modtime(self, key: Hashable) -> int:
        """The current modtime of a TP cache item (tests and benchmarks)."""
        return self.snapshot.modtime(key)
