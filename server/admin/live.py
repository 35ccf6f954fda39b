"""`LiveBackend`: the operator commands carried out on a running server's own games.

It works on the objects the server runs (the `GameDirectory`, each `Game`, the store) in the
server's process, through the same functions the operator request queue uses
(`server.operations.add_player_to`, `remove_player_from`, `restore_game`), so a player added
from an admin client gets the same Welcome messages as one added with `tae-server add-player`.
Pausing, resuming and extending a turn, changing a setting and reinstating a removed player are
not in the game service yet: those methods answer `NOT_AVAILABLE`.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import replace

from twisted.internet import defer

from ruleset import Phase

from ..accounts import hash_password
from ..config import ConfigError, GameConfig
from ..database import ConflictError
from ..directory import GameDirectory
from ..game import Game
from ..operations import OperationError, add_player_to, remove_player_from, restore_game
from .backend import NOT_AVAILABLE, CommandFailed, GameListing, GameReport, PlayerLine

#: Typing this instead of a game name means the server's default game.
DEFAULT_GAME = "-"
MAX_GAME_NAME = 200


class LiveBackend:
    """The `OperatorBackend` of a running server.

    `directory`, `store` and `clock` are the server's; `game_defaults` is the configuration's
    `[game]` section, used for the map, timer and limits of a game made with `create-game`
    (which gets a random seed); `desk` (an `OperatorDesk`, with a database store) records the
    turn deadlines of the games it loads.
    """

    def __init__(
        self,
        directory: GameDirectory,
        store,
        clock,
        game_defaults: GameConfig | None = None,
        *,
        desk=None,
        wallclock: Callable[[], float] = time.time,
        new_seed: Callable[[], int] = lambda: secrets.randbelow(2**31),
    ):
        self.directory = directory
        self.store = store
        self.clock = clock
        self.game_defaults = game_defaults or GameConfig()
        self.desk = desk
        self.wallclock = wallclock
        self.new_seed = new_seed

    # -- finding games ----------------------------------------------------------------------

    def _game(self, name: str) -> Game:
        game = self.directory.find(None if name == DEFAULT_GAME else name)
        if game is None:
            if name == DEFAULT_GAME:
                raise CommandFailed("this server has no default game")
            known = ", ".join(sorted(self.directory.games)) or "there are none"
            raise CommandFailed(f"no game named {name!r} (games: {known})")
        return game

    # -- reading ------------------------------------------------------------------------------

    async def list_games(self) -> list[GameListing]:
        games = sorted(self.directory.games.values(), key=lambda g: g.id)
        return [
            GameListing(
                id=game.id,
                name=game.setup.name,
                turn=game.state.turn,
                phase=game.state.phase.value,
                players=len(game.state.players) - len(game.removed_players),
                removed=len(game.removed_players),
                max_players=game.setup.max_players,
                timer=game.setup.timer.kind,
                turn_length=game.setup.timer.turn_length,
            )
            for game in games
        ]

    async def game_status(self, game: str) -> GameReport:
        live = self._game(game)
        state = live.state
        waiting = set(live.waiting_for())
        names = {account.player_id: account.username for account in live.accounts.values()}
        players = []
        for player in state.players:
            pid = player.id
            turn = (
                "removed"
                if pid in live.removed_players
                else "finished"
                if pid in live.finished
                else "waiting"
                if pid in waiting
                else "not playing this turn"
            )
            players.append(PlayerLine(pid, names.get(pid, player.name), turn))
        winners: tuple[str, ...] = ()
        final: dict[str, int] = {}
        if state.result is not None:
            winners = tuple(names.get(pid, str(pid)) for pid in state.result.winners)
            final = {names.get(pid, str(pid)): score for pid, score in state.result.final.items()}
        return GameReport(
            id=live.id,
            name=live.setup.name,
            description=live.setup.description,
            turn=state.turn,
            phase=state.phase.value,
            timer=live.setup.timer.kind,
            turn_length=live.setup.timer.turn_length,
            max_players=live.setup.max_players,
            account_creation=live.setup.account_creation,
            started=state.turn > 0 or len(state.players) >= max(1, live.setup.timer.turn_players_min),
            players=tuple(players),
            waiting_for=tuple(names.get(pid, str(pid)) for pid in sorted(waiting)),
            seconds_left=-1 if state.phase is Phase.OVER else live.timer.seconds_left(),
            winners=winners,
            final_scores=final,
        )

    # -- changing -----------------------------------------------------------------------------

    async def create_game(self, name: str) -> str:
        if (
            not name
            or "@" in name
            or name.strip() != name
            or len(name) > MAX_GAME_NAME
            or name == DEFAULT_GAME
        ):
            raise CommandFailed(
                f"{name!r} is not a usable game name (1 to {MAX_GAME_NAME} characters, no '@')"
            )
        if name in self.directory.games:
            raise CommandFailed(f"a game named {name!r} exists")
        seed = self.new_seed()
        config = replace(self.game_defaults, name=name, seed=seed, description=f"TaE game {name}")
        try:
            setup = config.setup(ctime=int(self.wallclock()))
        except ConfigError as error:
            raise CommandFailed(str(error)) from None
        try:
            game_id = await defer.maybeDeferred(self.store.create_game, setup)
        except ConflictError:
            raise CommandFailed(f"a game named {name!r} exists") from None
        stored = await defer.maybeDeferred(self.store.load_games, [game_id], all_states=False)
        game = restore_game(stored[0], self.store, self.clock, self.directory, self.desk)
        return f"game {name!r} created (id {game.id}, seed {seed}); players join it as <name>@{name}"

    async def add_player(self, game: str, name: str, password: str) -> str:
        live = self._game(game)
        payload = {"username": name, "password_hash": hash_password(password), "email": "", "comment": ""}
        try:
            return await add_player_to(live, payload)
        except OperationError as error:
            raise CommandFailed(str(error)) from None

    async def remove_player(self, game: str, name: str) -> str:
        live = self._game(game)
        try:
            return await remove_player_from(live, name)
        except OperationError as error:
            raise CommandFailed(str(error)) from None

    async def end_turn(self, game: str) -> str:
        live = self._game(game)
        name = live.setup.name
        if live.state.phase is Phase.OVER:
            raise CommandFailed(f"game {name!r} is over")
        if not live.state.players:
            raise CommandFailed(f"game {name!r} has no players yet: there is no turn to end")
        turn = live.state.turn + 1
        await live.end_turn()
        if live.state.turn < turn:
            raise CommandFailed(f"turn {turn} of game {name!r} did not end (see the server log)")
        return f"turn {turn} of game {name!r} ended" + (
            " and the game is over" if live.state.phase is Phase.OVER else ""
        )

    # -- not in the game service yet ------------------------------------------------------------

    async def reinstate_player(self, game: str, name: str) -> str:
        self._game(game)
        raise CommandFailed(NOT_AVAILABLE)

    async def pause(self, game: str) -> str:
        self._game(game)
        raise CommandFailed(NOT_AVAILABLE)

    async def resume(self, game: str) -> str:
        self._game(game)
        raise CommandFailed(NOT_AVAILABLE)

    async def extend(self, game: str, seconds: int) -> str:
        self._game(game)
        raise CommandFailed(NOT_AVAILABLE)

    async def set_setting(self, game: str, setting: str, value: str) -> str:
        self._game(game)
        raise CommandFailed(NOT_AVAILABLE)
