"""How an operator command is declared: what it changes (`Changes`), who is told (`Told`),
what the command line does without a server (`WithoutServer`), its arguments and options, and
`OperatorCommand`, which reads, completes, checks, turns into a request's payload and carries
out a command's values. The table of commands is `server.operating.commands`."""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from server.game.game import Game
from server.game.passwords import PasswordHasher
from server.operating.arguments import (
    ArgumentRefused,
    ArgumentType,
    Text,
)
from server.operating.game_actions import (
    OperationError,
)


class Changes(enum.Enum):
    """What a command changes."""

    NOTHING = "nothing: it reads"
    NEW_GAME = "the games: it makes one"
    THE_GAME = "the game"
    WHERE_IT_RUNS = "which cluster node runs the game"


class Told(enum.Enum):
    """Who learns of a command's change, and how."""

    NOBODY = "nobody"
    THE_NEW_PLAYER = "the new player, by the Welcome messages on their board"
    EVERY_PLAYER = "every player, by a message on their board"
    EVERY_PLAYER_AND_CLIENT = (
        "every player, by a message on their board; connected clients get a TimeRemaining frame"
    )
    OPERATOR_AND_TURN = (
        "every player, by a message on their board and the turn's messages; connected clients get "
        "a TimeRemaining frame"
    )
    NEW_PLAYERS = "nobody: players find the new game in the lobby and GetGames"


class WithoutServer(enum.Enum):
    """What the command line does when no server runs on the database."""

    READS_THE_DATABASE = "reads the database"
    CHANGES_THE_DATABASE = "changes the database (a running server is asked instead)"
    WAITS_FOR_THE_SERVER = "leaves the request in the database for the server to carry out when it starts"
    NEEDS_A_CLUSTER = "refused: it needs running cluster nodes"


@dataclass(frozen=True, slots=True)
class Argument:
    """One argument: `name` is one lower-case word (the admin parameter's name; the command
    line shows it upper case), `type` reads and bounds it. `key` is its name in an operator
    request's payload (default: `name`). A `secret` one (a password) is asked for at a hidden
    prompt on the command line (`--NAME`, twice when `confirm`), hashed before it goes anywhere
    (its key holds the hash) and never logged."""

    name: str
    type: ArgumentType
    help: str
    key: str = ""
    secret: bool = False
    confirm: bool = False

    @property
    def payload_key(self) -> str:
        return self.key or self.name


@dataclass(frozen=True, slots=True)
class Option:
    """A command-line option with a default: the admin protocol has no optional parameters,
    so there the command takes the default (`None`: unset)."""

    name: str  # the flag without its dashes
    type: ArgumentType
    help: str
    key: str
    default: Any = None


Action = Callable[[Game, Mapping[str, Any]], Awaitable[str]]
Refine = Callable[[Mapping[str, Any]], None]


@dataclass(frozen=True, slots=True)
class OperatorCommand:
    """One operator command (see the module docstring). `refine` checks what one argument
    cannot check alone (`set`: the value by its key's type)."""

    name: str
    summary: str
    arguments: tuple[Argument, ...]
    changes: Changes
    told: Told
    without_server: WithoutServer
    admin_id: int | None = None
    request: str | None = None  # the kind of its operator request (server.database.operator_requests)
    action: Action | None = None
    options: tuple[Option, ...] = ()
    refine: Refine | None = None
    pins_the_turn: bool = False  # its request names the open turn, so doing it twice ends one turn

    @property
    def on_a_game(self) -> bool:
        return bool(self.arguments) and self.arguments[0].name == "game"

    def read(self, words: Sequence[str], options: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The values of the words given for the arguments (by name), completed
        (`completed`); ArgumentRefused for the first value an argument refuses."""
        if len(words) != len(self.arguments):
            wanted = " ".join(argument.name.upper() for argument in self.arguments) or "no arguments"
            raise ArgumentRefused(f"{self.name} takes {wanted}, not {len(words)} words")
        values = {argument.name: argument.type.parse(word) for argument, word in zip(self.arguments, words)}
        return self.completed(values, options)

    def completed(
        self, values: Mapping[str, Any], options: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """The arguments' values (read), with the options given (read, by key; the others take
        their defaults), checked together (`refine`)."""
        completed = dict(values)
        for option in self.options:
            given = (options or {}).get(option.key)
            completed[option.key] = option.default if given is None else given
        if self.refine is not None:
            self.refine(completed)
        return completed

    async def payload(self, values: Mapping[str, Any], hasher: PasswordHasher) -> dict[str, Any]:
        """The operator request's payload of these values (the game left out): by key, each
        secret checked against `hasher`'s password policy and hashed by it."""
        payload: dict[str, Any] = {}
        for argument in self.arguments[1 if self.on_a_game else 0 :]:
            value = values[argument.name]
            if argument.secret:
                problem = hasher.policy.problem(value)
                if problem is not None:
                    raise ArgumentRefused(problem.message)
                value = await hasher.hash(value)
            payload[argument.payload_key] = value
        for option in self.options:
            payload[option.key] = values.get(option.key, option.default)
        return payload

    def checked(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """A payload read back from an operator request, each value checked again by its type
        (a secret holds a hash: it is checked to be text)."""
        checked = dict(payload)
        for argument in self.arguments[1 if self.on_a_game else 0 :]:
            key = argument.payload_key
            if key not in payload:
                raise ArgumentRefused(f"the {self.name} request has no {argument.name}")
            kind = _HASH if argument.secret else argument.type
            checked[key] = kind.check(payload[key])
        for option in self.options:
            if payload.get(option.key) is not None:
                checked[option.key] = option.type.check(payload[option.key])
        if self.refine is not None:
            self.refine(checked)
        return checked

    async def carry_out(self, game: Game, payload: Mapping[str, Any]) -> str:
        """Do this command to a live game; the result in one line (OperationError if refused)."""
        if self.action is None:
            raise OperationError(f"{self.name} is not an action on one game")
        return await self.action(game, self.checked(payload))


_HASH = Text("the password hash")
