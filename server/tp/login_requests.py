"""The requests of a connection before and at login: Connect, Ping, features, filters, games,
time remaining, account creation and login; and the news of the logged-in game."""

from __future__ import annotations

from twisted.internet import defer
from twisted.logger import Logger

import protocol as tp
from protocol import FailCode, FeatureId
from server.game.game import Game
from server.game.passwords import split_login
from server.model.refusals import clipped
from server.model.snapshot import GameSnapshot
from server.tp.errors import TPRefusal
from server.tp.session_base import Item, SessionBase, State
from server.views.tp.games import SERVER_TYPE, SERVER_VERSION, game_frame, time_remaining

log = Logger()

ACCOUNT_CREATED = "Account created."  # the Okay of a CreateAccount


class LoginRequests(SessionBase):
    """The handlers of this module, joined into `server.tp.session.Session`."""

    def on_connect(self, message: tp.Connect) -> tp.Message:
        self.state = State.CONNECTED if self.state is State.NEW else self.state
        return tp.Okay(f"Protocol check ok, continue! Welcome to {SERVER_TYPE} {SERVER_VERSION}")

    def on_ping(self, message: tp.Ping) -> tp.Message:
        return tp.Okay("Pong")

    def on_get_features(self, message: tp.GetFeatures) -> tp.Message:
        features = [FeatureId.KEEP_ALIVE, FeatureId.PROPERTY_CALC]
        game = self.game or self.directory.default
        if game is not None and game.setup.account_creation:
            features.append(FeatureId.ACCOUNT_CREATE)
        return tp.Features(tuple(features))

    def on_set_filters(self, message: tp.SetFilters) -> tp.Message:
        if message.filters:
            raise TPRefusal(FailCode.UNAVAILABLE_PERMANENTLY, "Not all filters specified are available")
        return tp.Okay("No filters")

    def on_get_games(self, message: tp.GetGames) -> list[Item]:
        games = self.directory.ordered()
        if not games:
            raise TPRefusal(FailCode.NO_SUCH_THING, "No games on this server")
        return [game_frame(g.snapshot, self.host, self.port, g.clock.seconds()) for g in games]

    def on_get_time_remaining(self, message: tp.GetTimeRemaining) -> tp.Message:
        game = self.game or self.directory.default
        if game is None:
            return tp.TimeRemaining(-1)
        snapshot = game.snapshot
        return time_remaining(snapshot, self.version, snapshot.seconds_left(game.clock.seconds()), 0)

    def _snapshot_published(self, snapshot: GameSnapshot) -> None:
        """News of the logged-in game: a timer announcement is pushed as TimeRemaining; a
        player an operator removed may not stay logged in (one who resigned may: they read
        their game, and the game refuses their orders)."""
        gone = "removed" if self.player in snapshot.removed_players else None
        if gone is not None and self.close is not None:
            log.info(
                "game {game}: closing the connection of {gone} player {player}",
                game=snapshot.name,
                gone=gone,
                player=self.player,
            )
            self.connection_lost()
            self.close()
            return
        news = snapshot.announcement
        if news is not None:
            frame = time_remaining(snapshot, self.version, news.seconds, news.reason)
            self.push(tp.encode(frame, self.version, 0))

    def on_create_account(self, message: tp.CreateAccount) -> defer.Deferred:
        username, game_name = split_login(message.username)
        game = self.directory.find(game_name)
        if game is None:
            raise TPRefusal(FailCode.NO_SUCH_THING, f"No such game: {_game_named(game_name)}")
        d = game.create_account(username, message.password, message.email, message.comment)

        def created(player: int) -> tp.Message:
            log.info(
                "game {game}: account {user} created (player {player})",
                game=game.setup.name,
                user=username,
                player=player,
            )
            return tp.Okay(ACCOUNT_CREATED)

        return d.addCallback(created)

    def on_login(self, message: tp.Login) -> defer.Deferred:
        if self.state is State.PLAYING:
            raise TPRefusal(FailCode.FRAME, "Already logged in")
        username, game_name = split_login(message.username)
        game = self.directory.find(game_name)
        if game is None:
            raise TPRefusal(FailCode.FRAME, f"Login Error - no such game {_game_named(game_name)}")
        if game.player_id(username) is None and game.setup.auto_add:
            d = game.create_account(username, message.password, creation_setting_applies=False)
        else:
            d = game.authenticate(username, message.password)  # a read: the seat stays as it is
        return d.addCallback(lambda player: self._logged_in(game, player))

    def _logged_in(self, game: Game, player: int) -> tp.Message:
        self.game, self.player, self.state = game, player, State.PLAYING
        self._unsubscribe = game.subscribe(self._snapshot_published)
        log.info("game {game}: player {player} logged in", game=game.setup.name, player=player)
        return tp.Okay("Welcome")


def _game_named(name: str | None) -> str:
    """A game name from a login, as a refusal quotes it (clipped: it is the peer's text)."""
    return clipped(name) if name is not None else "(none named, and no default game)"
