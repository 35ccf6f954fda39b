"""What the admin commands ask of a server: the `OperatorBackend` interface, and the values it
answers with.

The admin session knows only this interface: reading (`list_games`, `game_status`), making a
game (`create_game`) and `change`, which carries out any command of the operator command table
(`server.operating.commands`) on a game. Each is a coroutine that returns what happened (a
`GameListing` list, a `GameStatus`, or one line of text for a change) or raises `CommandFailed`
with the one line the operator should read. `server.admin.live.LiveBackend` is the
implementation over a running server's games, `server.admin.cluster.ClusterBackend` over a
cluster's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from server.operating.command_declaration import OperatorCommand
from server.views.operator_status import GameStatus


class CommandFailed(Exception):
    """An operator command that was not carried out; the message is one line for the operator."""


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


class OperatorBackend(Protocol):
    """The operator commands of a server. Game names are as the operator typed them ('-': the
    default game); every method raises `CommandFailed` for anything the operator must fix or be
    told."""

    async def list_games(self) -> list[GameListing]: ...

    async def game_status(self, game: str) -> GameStatus: ...

    async def create_game(self, name: str) -> str: ...

    async def change(self, command: OperatorCommand, values: Mapping[str, Any]) -> str:
        """Carry out `command` (one with an action on a game) with its `values` as
        `OperatorCommand.read` gives them (the game's name under "game")."""
        ...
