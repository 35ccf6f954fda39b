"""What the admin commands ask of a server: the `OperatorBackend` interface, and the values it
answers with.

The admin session knows only this interface: one method per operator command, each a
coroutine that returns what happened (a `GameListing` list, a `GameReport`, or one line of
text for a change) or raises `CommandFailed` with the one line the operator should read.
`server.admin.live.LiveBackend` is the implementation over a running server's games; a server
that cannot do something yet raises `CommandFailed(NOT_AVAILABLE)` from that method, so
the admin client gets a clear failure and wiring the feature later is a change to one method.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Protocol

NOT_AVAILABLE = "not available on this server yet"


class CommandFailed(Exception):
    """An operator command that was not carried out; the message is one line for the operator."""


def _empty() -> Mapping[str, int]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class GameListing:
    """One line of `list-games`."""

    id: int
    name: str
    turn: int  # turns played
    phase: str  # ruleset.Phase value: normal, combat, over
    players: int
    removed: int
    max_players: int  # 0: no limit
    timer: str
    turn_length: int


@dataclass(frozen=True, slots=True)
class PlayerLine:
    """A player of a game and where they are in the coming turn: "finished", "waiting",
    "removed" or "not playing this turn"."""

    id: int
    name: str
    turn: str


@dataclass(frozen=True, slots=True)
class GameReport:
    """What `status GAME` shows. `seconds_left` is -1 without a deadline; `final_scores`
    (player name → final score) and `winners` are filled once the game is over."""

    id: int
    name: str
    description: str
    turn: int
    phase: str
    timer: str
    turn_length: int
    max_players: int
    account_creation: bool
    started: bool
    players: tuple[PlayerLine, ...]
    waiting_for: tuple[str, ...]
    seconds_left: int
    winners: tuple[str, ...] = ()
    final_scores: Mapping[str, int] = field(default_factory=_empty)
    timer_text: str = ""  # the timer in one line (a calendar's schedule); "" = from timer/turn_length
    paused: bool = False  # an operator stopped the turn clock
    paused_left: int = -1  # while paused: the seconds the turn gets back at resume (-1: none)


class OperatorBackend(Protocol):
    """The operator commands, one method each. Game names are as the operator typed them;
    every method raises `CommandFailed` for anything the operator must fix or be told."""

    async def list_games(self) -> list[GameListing]: ...

    async def game_status(self, game: str) -> GameReport: ...

    async def create_game(self, name: str) -> str: ...

    async def add_player(self, game: str, name: str, password: str) -> str: ...

    async def remove_player(self, game: str, name: str) -> str: ...

    async def reinstate_player(self, game: str, name: str) -> str: ...

    async def end_turn(self, game: str) -> str: ...

    async def pause(self, game: str) -> str: ...

    async def resume(self, game: str) -> str: ...

    async def extend(self, game: str, seconds: int) -> str: ...

    async def set_setting(self, game: str, setting: str, value: str) -> str: ...
