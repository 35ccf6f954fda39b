"""Where games are kept: one interface for the game service, so storage can change underneath.

The game service calls these methods and waits for each result (a plain value or a Deferred)
before it answers the player: an accepted order is stored before the reply is written, a turn is
stored as one unit. `MemoryStore` keeps everything in this process; the database store of
`server.database` keeps it durably.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import ruleset
from ruleset import Event, GameState, Message
from server.model.attendance import DEFAULT_ABSENT_AFTER, DEFAULT_VACATION_DAYS_MAX, Attendance
from server.model.timer_settings import TimerSettings


class StoreError(Exception):
    """A store operation that cannot be done; nothing of it was stored."""


class ConflictError(StoreError):
    """The operation contradicts what is stored: a taken name, an existing turn, a used seq."""


class NotFoundError(StoreError, LookupError):
    """The game or record the operation names is not stored."""


class StoreUnavailable(StoreError):
    """The store cannot be reached (the database is down, the disk is full); nothing of the
    operation was stored (but see `OutcomeUnknown`), and trying again later may succeed."""


class OutcomeUnknown(StoreUnavailable):
    """The connection broke while the transaction was being committed: the database may or may
    not have kept it. `session` names the database session it was sent on (the store cuts it
    off before it looks whether the write is there: `GameStore.find_write`). Never answer it
    as a refusal."""

    def __init__(self, message: str, session: Any = None):
        super().__init__(message)
        self.session = session


@dataclass(frozen=True, slots=True)
class GameSetup:
    """How a game was created; with its order log this is enough to replay it."""

    name: str
    map_text: str | None = None
    seed: int = 0
    timer: TimerSettings = TimerSettings()
    max_players: int = 0
    auto_add: bool = False
    account_creation: bool = True
    description: str = ""
    ctime: int = 0
    # Absent players (server.model.attendance): turns missed in a row before the stand-in takes the
    # seat (0: never), and the longest vacation a player may declare (0: no vacations).
    absent_after_missed_turns: int = DEFAULT_ABSENT_AFTER
    vacation_days_max: int = DEFAULT_VACATION_DAYS_MAX

    def board(self) -> ruleset.Board:
        """The game's board: its own map, or the default one."""
        return ruleset.parse_map(self.map_text) if self.map_text else ruleset.DEFAULT_BOARD

    def initial_state(self) -> GameState:
        """The state before anyone joined (players join with `ruleset.join_rng`)."""
        return ruleset.new_game(self.board(), self.seed)


@dataclass(frozen=True, slots=True)
class Account:
    """A seat of one game (`username`, `player_id`) and the server's account that holds it.

    `password_hash` is the server account's (one account per server: the same name and password
    work in every game it joined); `owner` is that account's name when it differs from the
    seat's: an account that two games held under the same name before accounts were per server
    stays apart as `NAME~GAME` until its owner proves both passwords (docs/web.md, "Accounts")."""

    username: str
    password_hash: str
    player_id: int
    email: str = ""
    comment: str = ""
    owner: str = ""

    @property
    def account_name(self) -> str:
        """The name of the server's account holding this seat."""
        return self.owner or self.username


@dataclass(frozen=True, slots=True)
class OrderEntry:
    """One accepted order, in the turn it was given for; `seq` orders a turn's orders."""

    seq: int
    turn: int
    player: int
    object_id: int
    slot: int
    type: int
    target: int


@dataclass(frozen=True, slots=True)
class TurnRecord:
    """A resolved turn: its number, the state after it, what it posted and what happened.

    `attendance` and `notices` are what the end of the turn changed about who plays the seats
    (`server.model.attendance`) and told everyone about it; they are stored with the turn, in its
    transaction, and are not part of what a replay of the turn reproduces."""

    turn: int
    state: GameState
    messages: tuple[Message, ...]
    events: tuple[Event, ...]
    modtime_serial: int
    attendance: tuple[Attendance, ...] = ()
    notices: tuple[Message, ...] = ()


@dataclass
class StoredGame:
    """Everything a store gives back for one game at start-up."""

    game_id: int
    setup: GameSetup
    accounts: list[Account] = field(default_factory=list)
    join_messages: list[Message] = field(default_factory=list)
    turns: list[TurnRecord] = field(default_factory=list)
    orders: list[OrderEntry] = field(default_factory=list)
    removed_orders: set[int] = field(default_factory=set)
    removed_messages: set[tuple[int, int]] = field(default_factory=set)
    # player id -> the last played turn when they joined (a replay adds them after that turn)
    join_turns: dict[int, int] = field(default_factory=dict)
    removed_players: set[int] = field(default_factory=set)
    finished: set[tuple[int, int]] = field(default_factory=set)  # (turn, player)
    deadline: tuple[int, float] | None = None  # (turn, Unix time)
    attendance: dict[int, Attendance] = field(default_factory=dict)  # only seats not plainly played
    paused: tuple[bool, float | None] = (False, None)  # paused, and the seconds left then
    # board messages operators' changes posted: (join messages stored before it, message)
    notices: list[tuple[int, Message]] = field(default_factory=list)


class GameStore(Protocol):
    def create_game(self, setup: GameSetup) -> Any: ...
    def add_account(self, game_id: int, account: Account, messages: tuple[Message, ...]) -> Any: ...
    def account_hash(self, name: str) -> Any: ...
    def record_order(self, game_id: int, entry: OrderEntry) -> Any: ...
    def remove_order(self, game_id: int, seq: int) -> Any: ...
    def remove_message(self, game_id: int, player: int, index: int) -> Any: ...
    def commit_turn(self, game_id: int, record: TurnRecord) -> Any: ...
    def load_games(self, game_ids=None, all_states: bool = True) -> Any: ...

    def turn_record(self, game_id: int, turn: int) -> Any: ...
    def turn_events(self, game_id: int, after: int = 0) -> Any: ...

    def write(self, game_id: int, write: Any) -> Any:
        """Store one write of a game (`server.model.writes.GameWrite`: its rows, its change
        record and its notifications) in one transaction; the record's sequence number."""
        ...

    def find_write(self, game_id: int, write: Any, doubt: OutcomeUnknown) -> Any:
        """Whether a write whose commit ended in `doubt` is stored: its record's sequence, or
        None when it is not; fails with OutcomeUnknown while that cannot be told."""
        ...

    def changes_after(self, game_id: int, after: int = 0) -> Any:
        """The change records of the game numbered above `after`, oldest first
        (`server.model.changes.ChangeRecord`)."""
        ...

    def close(self) -> Any:
        """Let go of what the store holds (connections, its thread); a value or a Deferred."""
        ...


class TurnArchive(Protocol):
    """Where resolved turns are read back (a `GameStore`, for readers): a `TurnRecord` (state after the turn,
    its messages and events) or None for a turn never played; a plain value or a Deferred."""

    #: The browser sessions that ended (`server.database.components.WebSessionRevocations`);
    #: None for a store kept in memory (a logout is then known to this process only).
    web_sessions: Any

    def turn_record(self, game_id: int, turn: int) -> Any: ...
