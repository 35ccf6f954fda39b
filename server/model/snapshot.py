"""What a game looks like between two changes: one immutable `GameSnapshot` per commit.

The write side (`server.game.game.Game`) publishes a new snapshot after every change it has stored
(an account, an order, a removal, a finished flag, a turn) and after every change of its turn
deadline. Every reader (the TP views, the web pages, the JSON API, the notifications, the admin
interface) renders from snapshots only, so a reader never sees half a change and never needs
the game's lock. A snapshot holds everything, private parts included: a reader filters through
`ruleset.visible_to` (or the helpers below) before it shows anything to anyone.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TypeVar

from ruleset import GameState, Message, Order, Phase, acting_players
from server.model.attendance import Attendance, Presence, stand_ins
from server.model.store import GameSetup, OrderEntry

T = TypeVar("T")


def _empty() -> Mapping:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class QueuedOrder:
    """An accepted order of the coming turn: as stored (`entry`) and as the ruleset runs it."""

    entry: OrderEntry
    order: Order


@dataclass(frozen=True, slots=True)
class BoardMessage:
    """A message on a player's board; `index` counts every message ever posted to that board,
    so it stays the same when earlier messages are removed."""

    index: int
    message: Message


@dataclass(frozen=True, slots=True)
class Announcement:
    """What the turn timer announced: `seconds` left (-1: no deadline) and a TP04 reason code
    (`server.game.timer`: timer started, warning, all finished, end of turn started...)."""

    seconds: int
    reason: int


@dataclass(frozen=True, slots=True)
class GameSnapshot:
    """One game as it was after one commit.

    * `serial` rises by one with every snapshot of this game (readers compare it to see change).
    * `queues`: object id → the orders in its queue, slot order; objects without orders absent.
    * `boards`: player id → their board, oldest first; `posted` counts every message ever posted.
    * `modtimes`: the TP cache key (`("object", id)`, `("queue", id)`, `("board", player)`,
      `("player", id)`, `("design", fleet)`) → its modtime (spec/protocol.md §5.5);
      `modtime_serial` is the highest modtime issued.
    * `deadline`: when the coming turn ends by the timer, in the game clock's seconds (the Unix
      time on a real reactor); None without a deadline.
    * `paused`: an operator paused the clock; `paused_left` the seconds the deadline gets back
      at resume (None: the turn has no deadline). `deadline` is None while paused.
    * `started`: the first turn's timer runs (the game had enough players);
      `resolving`: the coming turn is being resolved and stored right now.
    * `last_turn_messages` / `last_turn_events`: what the last resolved turn posted and did.
    * `attendance`: player id → who plays their seat (`server.model.attendance`), for players whose
      seat is played by the stand-in or who missed turns; private parts (missed turns, the end
      of a vacation) are the player's own: public views use `seat_label`.
    * `owners`: player id → the name of the server account holding the seat
      (`server.model.store.Account.account_name`; one account has seats in several games).
    * `credential_marks`: player id → `server.game.passwords.credential_mark` of their password hash
      (never the hash): an API token carries the mark it was issued under, so a password change
      revokes the tokens issued before it.
    * `announcement`: set on the snapshot published because the turn timer announced something
      (the TP TimeRemaining push); None on every other snapshot.
    * `state_cache`: values computed from `state` alone, shared by every snapshot of that same
      state (the publisher hands the dict on while the state object stays); see `of_state`.
    """

    game_id: int
    setup: GameSetup
    serial: int
    state: GameState
    queues: Mapping[int, tuple[QueuedOrder, ...]] = field(default_factory=_empty)
    finished: frozenset[int] = frozenset()
    removed_players: frozenset[int] = frozenset()
    attendance: Mapping[int, Attendance] = field(default_factory=_empty)
    usernames: Mapping[int, str] = field(default_factory=_empty)
    owners: Mapping[int, str] = field(default_factory=_empty)
    credential_marks: Mapping[int, str] = field(default_factory=_empty)
    boards: Mapping[int, tuple[BoardMessage, ...]] = field(default_factory=_empty)
    posted: Mapping[int, int] = field(default_factory=_empty)
    modtimes: Mapping[Hashable, int] = field(default_factory=_empty)
    modtime_serial: int = 1
    deadline: float | None = None
    paused: bool = False
    paused_left: float | None = None
    started: bool = False
    resolving: bool = False
    last_turn_messages: tuple[Message, ...] = ()
    last_turn_events: tuple = ()
    announcement: Announcement | None = None
    state_cache: dict = field(default_factory=dict, compare=False, repr=False)
    _derived: dict = field(default_factory=dict, compare=False, repr=False)

    # -- who plays ------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.setup.name

    @property
    def turn(self) -> int:
        """Turns played so far, which is the open turn's number as every tool shows it (the TP
        Universe's turn counter: a game starts at turn 0)."""
        return self.state.turn

    @property
    def phase(self) -> Phase:
        return self.state.phase

    @property
    def over(self) -> bool:
        return self.state.phase is Phase.OVER

    def acting_players(self) -> tuple[int, ...]:
        """Who must act in the coming turn (`ruleset.acting_players`): the turn waits for them.
        Seats the stand-in plays are not waited for (it gives their orders at the turn's end)."""
        return acting_players(self.state, self.removed_players | self.stand_ins())

    def stand_ins(self) -> frozenset[int]:
        """The players whose seat the stand-in plays (absent, on vacation or resigned)."""
        if not self.attendance:
            return frozenset()
        return stand_ins(self.attendance, self.removed_players)

    def presence(self, player: int) -> Presence:
        found = self.attendance.get(player)
        return Presence.PLAYING if found is None else found.presence

    def seat_label(self, player: int) -> str:
        """What anyone may read about who plays a seat: "removed", "absent", "on vacation",
        "resigned", "computer (LEVEL)" (a computer player's) or "playing"."""
        if player in self.removed_players:
            return "removed"
        found = self.attendance.get(player)
        return Presence.PLAYING.label if found is None else found.label

    def waiting_for(self) -> tuple[int, ...]:
        """Players who can act in the coming turn and have not finished it."""
        return tuple(pid for pid in self.acting_players() if pid not in self.finished)

    def seconds_left(self, now: float) -> int:
        """Whole seconds until the deadline at clock time `now`; -1 when there is none."""
        if self.deadline is None:
            return -1
        return max(0, int(round(self.deadline - now)))

    # -- orders and boards ----------------------------------------------------------------

    def queue(self, object_id: int) -> tuple[QueuedOrder, ...]:
        return self.queues.get(object_id, ())

    def orders_of(self, player: int) -> list[Order]:
        """The player's accepted orders of the coming turn, in submission order."""
        queued = [q for queue in self.queues.values() for q in queue if q.order.player == player]
        queued.sort(key=lambda q: q.entry.seq)
        return [q.order for q in queued]

    def all_orders(self) -> list[Order]:
        """Every accepted order of the coming turn, in submission order (what the turn runs)."""
        queued = sorted((q for queue in self.queues.values() for q in queue), key=lambda q: q.entry.seq)
        return [q.order for q in queued]

    def board(self, player: int) -> tuple[BoardMessage, ...]:
        return self.boards.get(player, ())

    def modtime(self, key: Hashable) -> int:
        """The modtime of a TP cache item; 1 for an item never stamped."""
        return self.modtimes.get(key) or 1

    def derived(self, key: Hashable, build: Callable[[], T]) -> T:
        """A value computed once from this snapshot and kept with it (a reader's cache that
        goes away with the snapshot): `build()` runs the first time `key` is asked for."""
        try:
            return self._derived[key]
        except KeyError:
            value = self._derived[key] = build()
            return value

    def of_state(self, key: Hashable, build: Callable[[], T]) -> T:
        """Like `derived`, for a value that depends on `state` alone: it is computed once for
        all the snapshots of one state (orders come and go; the universe stays)."""
        try:
            return self.state_cache[key]
        except KeyError:
            value = self.state_cache[key] = build()
            return value
