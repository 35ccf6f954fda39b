"""The commands an admin client can run, made from the operator command table.

Every command of `server.operating.commands` with an admin id is offered as one CommandDesc:
its id, its name (the `tae-server` name: lower case with dashes, because tpadmin-cpp
lower-cases what the user types, and none of tpadmin-cpp's own: open, login, close, debug,
quit, exit), its summary and one parameter per argument. Every parameter is a string, one word
on tpadmin-cpp's command line, read by the argument's own type: "2h" works as on the command
line, and a negative number arrives as the "-5" the operator typed (an integer parameter would
reach us as tpadmin-cpp's unsigned wrap of it, 4294967291) and is refused in the same words.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from protocol.admin import CommandDesc, CommandParam, CommandParamType
from server.admin.backend import CommandFailed, GameListing, OperatorBackend
from server.operating.command_declaration import Changes, OperatorCommand
from server.operating.commands import COMMANDS as OPERATOR_COMMANDS
from server.operating.game_actions import OperationError
from server.views.operator_status import status_text


@dataclass(frozen=True, slots=True)
class AdminCommand:
    """One operator command as the admin protocol offers it."""

    command: OperatorCommand

    @property
    def id(self) -> int:
        assert self.command.admin_id is not None
        return self.command.admin_id

    @property
    def name(self) -> str:
        return self.command.name

    @property
    def params(self) -> tuple[CommandParam, ...]:
        return tuple(
            CommandParam(argument.name, CommandParamType.STRING, argument.help)
            for argument in self.command.arguments
        )

    def describe(self, modtime: int) -> CommandDesc:
        return CommandDesc(self.id, self.name, self.command.summary, self.params, modtime)

    async def run(self, backend: OperatorBackend, arguments: tuple[Any, ...]) -> str:
        """Read the parameters by the table's types, then ask the backend; CommandFailed with
        the refusal's words."""
        try:
            values = self.command.read([str(argument) for argument in arguments])
            return await _answer(backend, self.command, values)
        except OperationError as error:
            raise CommandFailed(str(error)) from None


async def _answer(backend: OperatorBackend, command: OperatorCommand, values: Mapping[str, Any]) -> str:
    if command.changes is Changes.NOTHING:
        if command.on_a_game:
            return status_text(await backend.game_status(values["game"]))
        return render_listing(await backend.list_games())
    if command.changes is Changes.NEW_GAME:
        return await backend.create_game(values["name"])
    return await backend.change(command, values)


# -- rendering --------------------------------------------------------------------------------


def _players(count: int, removed: int, limit: int) -> str:
    text = f"{count} player{'s' if count != 1 else ''}"
    if limit:
        text += f" of at most {limit}"
    if removed:
        text += f" (+{removed} removed)"
    return text


def _turn_state(turn: int, phase: str) -> str:
    if phase == "over":
        return f"over at turn {turn}"
    return f"turn {turn} open ({phase})"


def _timer(kind: str, length: int) -> str:
    return f"{kind} timer, " + (f"{length} s turns" if length else "no turn length")


def render_listing(games: list[GameListing]) -> str:
    if not games:
        return "There are no games on this server.\n"
    lines = [f"{len(games)} game{'s' if len(games) != 1 else ''}:"]
    for g in games:
        lines.append(
            f"  {g.id:>3}  {g.name}: {_turn_state(g.turn, g.phase)}, "
            f"{_players(g.players, g.removed, g.max_players)}, {_timer(g.timer, g.turn_length)}"
        )
    return "\n".join(lines) + "\n"


# -- the table --------------------------------------------------------------------------------

COMMANDS: tuple[AdminCommand, ...] = tuple(
    sorted(
        (AdminCommand(command) for command in OPERATOR_COMMANDS if command.admin_id is not None),
        key=lambda admin: admin.id,
    )
)

BY_ID: Mapping[int, AdminCommand] = {command.id: command for command in COMMANDS}


def descriptions(modtime: int) -> dict[int, CommandDesc]:
    """Every command's CommandDesc, by id, stamped with `modtime`."""
    return {command.id: command.describe(modtime) for command in COMMANDS}
