"""One write of a game, as the write side hands it to the store: `GameWrite`.

A `GameWrite` is the rows to change (`steps`, each a value of a type below), the change record
that says what changed (`server.model.changes`) and the notifications it causes (`outbox`).
`GameStore.write` stores all of it in one transaction and gives back the record's sequence:
either everything is stored or nothing is. Each store maps each step type to its own query
(`server.database.changes.STEP_QUERIES`, `server.model.memory_store.MemoryStore`); a step type a store
does not know is an error, never skipped.
"""

from __future__ import annotations

from dataclasses import dataclass

from ruleset import Message
from server.model.attendance import Attendance
from server.model.changes import Change
from server.model.outbox_entry import OutboxEntry
from server.model.ratings import Place
from server.model.store import Account, GameSetup, OrderEntry, TurnRecord


@dataclass(frozen=True, slots=True)
class StoreAccount:
    """A new seat and the messages its joining posted. Its server account is made when there
    is none of that name; an existing one is joined when its hash is the seat's (the game found
    the account and its password was proved, or its owner logged in)."""

    account: Account
    messages: tuple[Message, ...]


@dataclass(frozen=True, slots=True)
class StoreOrder:
    entry: OrderEntry


@dataclass(frozen=True, slots=True)
class TakeBackOrder:
    seq: int


@dataclass(frozen=True, slots=True)
class TakeDownMessage:
    player: int
    index: int


@dataclass(frozen=True, slots=True)
class StoreTurn:
    record: TurnRecord


@dataclass(frozen=True, slots=True)
class StoreFinished:
    turn: int
    player: int


@dataclass(frozen=True, slots=True)
class StoreAttendance:
    rows: tuple[Attendance, ...]
    notices: tuple[Message, ...]


@dataclass(frozen=True, slots=True)
class MarkRemoved:
    player: int


@dataclass(frozen=True, slots=True)
class MarkReinstated:
    player: int


@dataclass(frozen=True, slots=True)
class StoreNotices:
    """Board messages an operator's change posted to every player."""

    messages: tuple[Message, ...]


@dataclass(frozen=True, slots=True)
class StorePause:
    paused: bool
    left: float | None


@dataclass(frozen=True, slots=True)
class StoreDeadline:
    turn: int
    deadline: float | None


@dataclass(frozen=True, slots=True)
class StoreSetup:
    setup: GameSetup


@dataclass(frozen=True, slots=True)
class StorePasswordHash:
    """The new password hash of the server account holding `player`'s seat (every game it joined)."""

    player: int
    password_hash: str


@dataclass(frozen=True, slots=True)
class StoreOwner:
    """`player`'s seat moves to the server account `owner` (whose hash is `password_hash`): two
    accounts of one person are joined; an account left with no seat goes."""

    player: int
    owner: str
    password_hash: str


@dataclass(frozen=True, slots=True)
class RateGame:
    """The game is over: keep its places and rate its accounts (`server.model.ratings`), once,
    with the write that stores its last turn. `against_computer`: it had a computer player, so
    it is not rated; `ended_at`: when it ended (Unix seconds)."""

    places: tuple[Place, ...]
    against_computer: bool
    ended_at: float


Step = (
    StoreAccount
    | StoreOrder
    | TakeBackOrder
    | TakeDownMessage
    | StoreTurn
    | StoreFinished
    | StoreAttendance
    | MarkRemoved
    | MarkReinstated
    | StoreNotices
    | StorePause
    | StoreDeadline
    | StoreSetup
    | StorePasswordHash
    | StoreOwner
    | RateGame
)


@dataclass(frozen=True, slots=True)
class GameWrite:
    """The rows, the change record and the notifications of one write, stored together at
    `time` (the game clock's seconds)."""

    change: Change
    steps: tuple[Step, ...]
    time: float
    outbox: tuple[OutboxEntry, ...] = ()
