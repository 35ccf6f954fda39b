"""`LiveBackend`: the operator commands carried out on a running server's own games.

Reads (`list-games`, `status`) render from each game's latest `GameSnapshot`, as every reader
does. Changes go through the operator command table (`server.operating.commands`), like
`tae-server` and the running server's desk, so a player added from an admin client gets the
same Welcome messages as one added with `tae-server add-player`, and every value is accepted or
refused in the same words; a game made with `create-game` is stored, then brought to life like
the games loaded at start (`server.operating.desk.restore_game`).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from twisted.internet import defer

from server.admin.backend import CommandFailed, GameListing
from server.config.errors import ConfigError
from server.config.file import GameConfig
from server.database import ConflictError
from server.game.directory import GameDirectory
from server.game.game import Game
from server.model.snapshot import GameSnapshot
from server.model.store import GameSetup
from server.operating.arguments import DEFAULT_GAME
from server.operating.command_declaration import OperatorCommand
from server.operating.commands import no_such_game
from server.operating.desk import restore_game
from server.operating.game_actions import OperationError
from server.views.operator_status import GameStatus, status_of


def listing_of(snapshot: GameSnapshot) -> GameListing:
    setup = snapshot.setup
    return GameListing(
        id=snapshot.game_id,
        name=snapshot.name,
        turn=snapshot.turn,
        phase=snapshot.phase.value,
        players=len(snapshot.state.players) - len(snapshot.removed_players),
        removed=len(snapshot.removed_players),
        max_players=setup.max_players,
        timer=setup.timer.kind,
        turn_length=setup.timer.turn_length,
    )


def new_game_setup(defaults: GameConfig, name: str, seed: int, ctime: int) -> GameSetup:
    """The setup of a game made with the admin `create-game`: the configuration's `[game]`
    settings, the name and a seed; CommandFailed when the settings cannot make one."""
    config = replace(defaults, name=name, seed=seed, description=f"TaE game {name}")
    try:
        return config.setup(ctime=ctime)
    except ConfigError as error:
        raise CommandFailed(str(error)) from None


class LiveBackend:
    """The `OperatorBackend` of a running server.

    `directory`, `store` and `clock` are the server's; `game_defaults` is the configuration's
    `[game]` section, used for the map, timer and limits of a game made with `create-game`
    (which gets a random seed); `desk` (an `OperatorDesk`, with a database store) records the
    turn deadlines of the games it loads, and `hasher` (the server's `PasswordHasher`, whose
    policy new passwords must meet) is handed to them.
    """

    #: How `status` names the server that answers.
    where = "this server"

    def __init__(
        self,
        directory: GameDirectory,
        store,
        clock,
        game_defaults: GameConfig | None = None,
        *,
        desk=None,
        hasher=None,
        new_seed: Callable[[], int] = lambda: secrets.randbelow(2**31),
    ):
        self.directory = directory
        self.store = store
        self.clock = clock
        self.game_defaults = game_defaults or GameConfig()
        self.desk = desk
        self.hasher = hasher
        self.new_seed = new_seed

    # -- finding games ----------------------------------------------------------------------

    def _game(self, name: str) -> Game:
        game = self.directory.find(None if name == DEFAULT_GAME else name)
        if game is None:
            raise CommandFailed(str(no_such_game(name, list(self.directory.games), self.where)))
        return game

    # -- reading ------------------------------------------------------------------------------

    async def list_games(self) -> list[GameListing]:
        games = sorted(self.directory.games.values(), key=lambda g: g.id)
        return [listing_of(game.snapshot) for game in games]

    async def game_status(self, game: str) -> GameStatus:
        return status_of(self._game(game).snapshot, self.clock.seconds(), server=self.where)

    # -- changing -----------------------------------------------------------------------------

    async def create_game(self, name: str) -> str:
        if name in self.directory.games:
            raise CommandFailed(f"a game named {name!r} exists")
        seed = self.new_seed()
        setup = new_game_setup(self.game_defaults, name, seed, int(self.clock.seconds()))
        game = await self.start_game(setup)
        return f"game {name!r} created (id {game.id}, seed {seed}); players join it as <name>@{name}"

    async def start_game(self, setup: GameSetup) -> Game:
        """Store a new game made with `setup` and bring it to life on this server (as the games
        loaded at start); CommandFailed when its name is taken."""
        try:
            game_id = await defer.maybeDeferred(self.store.create_game, setup)
        except ConflictError:
            raise CommandFailed(f"a game named {setup.name!r} exists") from None
        stored = await defer.maybeDeferred(self.store.load_games, [game_id], all_states=False)
        return restore_game(stored[0], self.store, self.clock, self.directory, self.desk, hasher=self.hasher)

    async def change(self, command: OperatorCommand, values: Mapping[str, Any]) -> str:
        live = self._game(values["game"])
        try:
            payload = await command.payload(values, self.hasher or live.hasher)
            return await command.carry_out(live, payload)
        except OperationError as error:
            raise CommandFailed(str(error)) from None
