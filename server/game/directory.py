"""The games a server hosts, found by name (`user@game` logins pick one; no name = the default)."""

from __future__ import annotations

from server.game.game import Game
from server.game.server_accounts import ServerAccounts
from server.game.stand_in import StandInPlayer


class GameDirectory:
    def __init__(self, default: str | None = None, stand_in: StandInPlayer | None = None):
        self.games: dict[str, Game] = {}
        self.default_name = default
        # The computer player of every seat the stand-in plays in these games (the `[stand_in]`
        # settings); `normal` unless the server configured another level.
        self.stand_in = stand_in or StandInPlayer()
        # The server's accounts, over these games (one name and password for all of them).
        self.accounts = ServerAccounts(lambda: self.games.values())

    def add(self, game: Game) -> None:
        game.stand_in = self.stand_in
        game.server_accounts = self.accounts
        self.games[game.setup.name] = game
        if self.default_name is None:
            self.default_name = game.setup.name

    def remove(self, name: str) -> None:
        self.games.pop(name, None)
        if self.default_name == name:
            self.default_name = next(iter(self.games), None)

    def find(self, name: str | None) -> Game | None:
        """The named game, or the default game for None/empty names."""
        if not name:
            name = self.default_name
        return self.games.get(name) if name is not None else None

    @property
    def default(self) -> Game | None:
        return self.find(None)

    def ordered(self) -> list[Game]:
        """Every game, the default one first (single-game clients take the first Game frame)."""
        default = self.default
        rest = [g for name, g in sorted(self.games.items()) if g is not default]
        return ([default] if default is not None else []) + rest
