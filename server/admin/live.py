"""`LiveBackend`: the operator commands carried out on a running server's own games.

Reads (`list-games`, `status`) render from each game's latest `GameSnapshot`, as every reader
does. Changes go through the game service with the functions every operator path shares
(`server.operating.game_actions`), so a player added from an admin client gets the same Welcome
messages as one added with `tae-server add-player`; a game made with `create-game` is stored,
then brought to life like the games loaded at start (`server.operating.desk.restore_game`).
Pausing, resuming and extending a turn, changing a setting and reinstating a removed player go
through `server.operating.game_actions.CONTROLS`, like `tae-server pause/resume/extend/set/reinstate`.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable
from dataclasses import replace

from twisted.internet import defer

from server.admin.backend import CommandFailed, GameListing, GameReport, PlayerLine
from server.config.errors import ConfigError
from server.config.file import GameConfig
from server.database import ConflictError
from server.game.directory import GameDirectory
from server.game.game import Game
from server.model.snapshot import GameSnapshot
from server.operating.desk import restore_game
from server.operating.final_standing import standing
from server.operating.game_actions import (
    CONTROLS,
    OperationError,
    add_player_to,
    end_turn_of,
    remove_player_from,
)

#: Typing this instead of a game name means the server's default game.
DEFAULT_GAME = "-"
MAX_GAME_NAME = 200


def no_such_game(name: str, known: Iterable[str], where: str) -> CommandFailed:
    """The refusal of a command naming a game `where` ("this server") does not have."""
    if name == DEFAULT_GAME:
        return CommandFailed(f"{where} has no default game")
    listed = ", ".join(sorted(known)) or "there are none"
    return CommandFailed(f"no game named {name!r} (games: {listed})")


def _listing(snapshot: GameSnapshot) -> GameListing:
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


def _report(snapshot: GameSnapshot, now: float) -> GameReport:
    """What `status` shows of a snapshot: nothing private (no colonist types, no scores) before
    the game is over."""
    state = snapshot.state
    waiting = set(snapshot.waiting_for())
    names = dict(snapshot.usernames)
    players = []
    for player in state.players:
        pid = player.id
        turn = (
            ("removed; " if pid in snapshot.removed_players else "") + standing(state, pid)
            if snapshot.over
            else "removed"
            if pid in snapshot.removed_players
            else f"{snapshot.seat_label(pid)}: the stand-in plays"
            if pid in snapshot.stand_ins()
            else "finished"
            if pid in snapshot.finished
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
    setup = snapshot.setup
    return GameReport(
        id=snapshot.game_id,
        name=snapshot.name,
        description=setup.description,
        turn=snapshot.turn,
        phase=snapshot.phase.value,
        timer=setup.timer.kind,
        turn_length=setup.timer.turn_length,
        max_players=setup.max_players,
        account_creation=setup.account_creation,
        started=snapshot.started,
        players=tuple(players),
        waiting_for=tuple(names.get(pid, str(pid)) for pid in sorted(waiting)),
        seconds_left=-1 if snapshot.over else snapshot.seconds_left(now),
        winners=winners,
        final_scores=final,
        timer_text=setup.timer.describe(),
        paused=snapshot.paused,
        paused_left=-1 if snapshot.paused_left is None else round(snapshot.paused_left),
    )


class LiveBackend:
    """The `OperatorBackend` of a running server.

    `directory`, `store` and `clock` are the server's; `game_defaults` is the configuration's
    `[game]` section, used for the map, timer and limits of a game made with `create-game`
    (which gets a random seed); `desk` (an `OperatorDesk`, with a database store) records the
    turn deadlines of the games it loads, and `hasher` (the server's `PasswordHasher`) is
    handed to them.
    """

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
            raise no_such_game(name, self.directory.games, "this server")
        return game

    # -- reading ------------------------------------------------------------------------------

    async def list_games(self) -> list[GameListing]:
        games = sorted(self.directory.games.values(), key=lambda g: g.id)
        return [_listing(game.snapshot) for game in games]

    async def game_status(self, game: str) -> GameReport:
        return _report(self._game(game).snapshot, self.clock.seconds())

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
            setup = config.setup(ctime=int(self.clock.seconds()))
        except ConfigError as error:
            raise CommandFailed(str(error)) from None
        try:
            game_id = await defer.maybeDeferred(self.store.create_game, setup)
        except ConflictError:
            raise CommandFailed(f"a game named {name!r} exists") from None
        stored = await defer.maybeDeferred(self.store.load_games, [game_id], all_states=False)
        game = restore_game(stored[0], self.store, self.clock, self.directory, self.desk, hasher=self.hasher)
        return f"game {name!r} created (id {game.id}, seed {seed}); players join it as <name>@{name}"

    async def add_player(self, game: str, name: str, password: str) -> str:
        live = self._game(game)
        digest = await live.hasher.hash(password)
        payload = {"username": name, "password_hash": digest, "email": "", "comment": ""}
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
        if not live.state.players and not live.snapshot.over:
            raise CommandFailed(f"game {live.setup.name!r} has no players yet: there is no turn to end")
        try:
            return await end_turn_of(live)
        except OperationError as error:
            raise CommandFailed(str(error)) from None

    # -- the clock and the settings (server.operating.game_actions, as `tae-server` does it) ---------

    async def _control(self, game: str, kind: str, payload: dict) -> str:
        live = self._game(game)
        try:
            return await CONTROLS[kind](live, payload)
        except OperationError as error:
            raise CommandFailed(str(error)) from None

    async def reinstate_player(self, game: str, name: str) -> str:
        return await self._control(game, "reinstate", {"username": name})

    async def pause(self, game: str) -> str:
        return await self._control(game, "pause", {})

    async def resume(self, game: str) -> str:
        return await self._control(game, "resume", {})

    async def extend(self, game: str, seconds: int) -> str:
        return await self._control(game, "extend", {"seconds": seconds})

    async def set_setting(self, game: str, setting: str, value: str) -> str:
        return await self._control(game, "set", {"key": setting, "value": value})
