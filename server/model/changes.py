"""What one write of a game changed: a typed change record per write of `Game`.

Every write of the write side (`server.game.game.Game` and its parts) hands the store one
`server.model.writes.GameWrite`: the rows to change and one of the change values below. The
store keeps the change in the `changes` table (`server.database.changes`), in the same
transaction as the rows, numbered per game (`ChangeRecord.sequence`: 1, 2, 3 …). Readers follow
the records, not differences between snapshots: the notifications map each record to what a
player is told (`server.notifications.rules`), the deadline is read from `DeadlineChanged` and
`TurnEnded`, the cluster announces each record's sequence so that other nodes catch up by
reading the records (`server.cluster.announcer`). Snapshots are still published, for rendering.

A change holds plain values only (ints, strings, floats, tuples of them): `payload_of` and
`change_from` turn it into the JSON object stored with the record and back.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

# Seat changes (`SeatChanged.action`).
JOINED, REMOVED, REINSTATED = "joined", "removed", "reinstated"
ABSENT, BACK, VACATION, VACATION_ENDED, RESIGNED = "absent", "back", "vacation", "vacation_ended", "resigned"
SEAT_ACTIONS = (JOINED, REMOVED, REINSTATED, ABSENT, BACK, VACATION, VACATION_ENDED, RESIGNED)

# Operator controls of the clock and the settings (`ClockControlled.action`).
PAUSED, RESUMED, EXTENDED, SETTINGS_CHANGED = "paused", "resumed", "extended", "settings_changed"
TURN_ENDING = "turn_ending"  # an operator ends the open turn now: the players are told first
CLOCK_ACTIONS = (PAUSED, RESUMED, EXTENDED, SETTINGS_CHANGED, TURN_ENDING)


@dataclass(frozen=True, slots=True)
class OrderGiven:
    """A player (or the stand-in for them) gave an order for `turn` (the coming turn)."""

    turn: int
    player: int
    object_id: int
    slot: int
    order_type: int
    target: int
    order_seq: int


@dataclass(frozen=True, slots=True)
class OrderRemoved:
    """A player took an order of the coming turn back."""

    turn: int
    player: int
    object_id: int
    order_seq: int


@dataclass(frozen=True, slots=True)
class MessageRemoved:
    """A player removed the `index`-th message ever posted to their board."""

    player: int
    index: int


@dataclass(frozen=True, slots=True)
class TurnFinished:
    """A player finished `turn` (the coming turn)."""

    turn: int
    player: int


@dataclass(frozen=True, slots=True)
class TurnEnded:
    """A turn was resolved: `turn` is the number of the turn now being played (the TP turn
    counter), `phase` its phase ("over": the game ended). `deadline` is the new turn's deadline
    (None: none, or the clock is paused), `events` what happened (the ruleset's events as
    (kind, player, fleet, cell, detail)), `absent` the players the stand-in plays from now on."""

    turn: int
    phase: str
    deadline: float | None
    events: tuple[tuple[str, int | None, int | None, int | None, str], ...] = ()
    absent: tuple[int, ...] = ()

    @property
    def over(self) -> bool:
        return self.phase == "over"


@dataclass(frozen=True, slots=True)
class ClockControlled:
    """An operator paused, resumed or extended the clock, changed a setting (`what` says
    which, as the players are told; `seconds` the extension), or is ending the open turn now
    (`TURN_ENDING`, stored before the end of turn). `turn`: the turn being played."""

    action: str
    turn: int
    seconds: float = 0.0
    what: str = ""


@dataclass(frozen=True, slots=True)
class SeatChanged:
    """Who plays a seat changed: a player joined, was removed or reinstated by an operator,
    became absent or came back, went on or came back from vacation, or resigned.
    `starts_game`: this join gave the game enough players; its first turn begins."""

    action: str
    player: int
    turn: int
    starts_game: bool = False


@dataclass(frozen=True, slots=True)
class DeadlineChanged:
    """The open turn's deadline moved (set, extended, cleared): `turn` the turn being played,
    `deadline` when it ends by the clock (Unix time; None: no deadline). `turn_started`: the
    turn's clock started just now (the game's first turn, or a game started later)."""

    turn: int
    deadline: float | None
    turn_started: bool = False


@dataclass(frozen=True, slots=True)
class PasswordChanged:
    """A player's password hash was replaced (a change, an operator's, a stronger hash)."""

    player: int


Change = (
    OrderGiven
    | OrderRemoved
    | MessageRemoved
    | TurnFinished
    | TurnEnded
    | ClockControlled
    | SeatChanged
    | DeadlineChanged
    | PasswordChanged
)

#: The stored kind of each change (the `kind` column).
KINDS: dict[type, str] = {
    OrderGiven: "order_given",
    OrderRemoved: "order_removed",
    MessageRemoved: "message_removed",
    TurnFinished: "turn_finished",
    TurnEnded: "turn_ended",
    ClockControlled: "clock_controlled",
    SeatChanged: "seat_changed",
    DeadlineChanged: "deadline_changed",
    PasswordChanged: "password_changed",
}
_BY_KIND = {kind: cls for cls, kind in KINDS.items()}


@dataclass(frozen=True, slots=True)
class ChangeRecord:
    """One stored change: the game, its number in the game (from 1), when, and what."""

    game_id: int
    sequence: int
    time: float
    change: Change

    @property
    def kind(self) -> str:
        return kind_of(self.change)


def kind_of(change: Change) -> str:
    return KINDS[type(change)]


def payload_of(change: Change) -> dict[str, Any]:
    """The change as a JSON object (tuples become lists)."""
    return asdict(change)


def change_from(kind: str, payload: dict[str, Any]) -> Change:
    """The change a stored record holds; ValueError for a kind or payload this version does not know."""
    cls = _BY_KIND.get(kind)
    if cls is None:
        raise ValueError(f"unknown change kind {kind!r}")
    names = {f.name for f in fields(cls)}
    values = {name: value for name, value in payload.items() if name in names}
    if cls is TurnEnded:
        values["events"] = tuple(tuple(event) for event in values.get("events", ()))
        values["absent"] = tuple(values.get("absent", ()))
    try:
        return cls(**values)
    except TypeError as error:
        raise ValueError(f"a {kind} record without its fields: {error}") from None
