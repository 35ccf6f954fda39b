"""`ClusterBackend`: the operator commands on a cluster node, for every game of the cluster.

An admin client may connect to any node. A game this node runs is served as `LiveBackend`
serves it (its live snapshot, the game service). A game another node runs is read from the
database (`list-games` from the stored summaries, `status` from the game as last stored, with
the deadline its owner recorded), and a change to it (`add-player`, `remove-player`,
`end-turn`) is queued as an operator request (`server.database.operator_requests`): the
NOTIFY it sends wakes the owner's `OperatorDesk`, which carries it out as a fenced write, and
this node waits for the result (`REQUEST_WAIT_S`). So a change is carried out once, by the node
that runs the game, also while the game moves or fails over (its new owner does it).
`create-game` stores the game and waits until a node claims it.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from twisted.internet import defer
from twisted.internet.task import Clock

from server.admin.backend import NOT_AVAILABLE, CommandFailed, GameListing, GameReport
from server.admin.live import DEFAULT_GAME, MAX_GAME_NAME, LiveBackend, _report, no_such_game
from server.admin.live import _listing as live_listing
from server.config.errors import ConfigError
from server.config.file import GameConfig
from server.database import ConflictError
from server.database import games as q
from server.database import operator_requests as requests_q
from server.database.ownership import thd_lock_space, thd_notify
from server.game.directory import GameDirectory
from server.game.game import Game

REQUEST_WAIT_S = 10.0
CLAIM_WAIT_S = 10.0
POLL_S = 0.1


def _stored_listing(summary: q.GameSummary) -> GameListing:
    return GameListing(
        id=summary.id,
        name=summary.name,
        turn=summary.turn,
        phase=summary.phase,
        players=summary.players,
        removed=summary.removed,
        max_players=summary.max_players,
        timer=summary.timer,
        turn_length=summary.turn_length,
    )


def _stored_report(conn, game_id: int, now: float) -> GameReport:
    stored = q.thd_load_games(conn, [game_id], all_states=False)[0]
    snapshot = Game.restore(stored, None, Clock()).snapshot  # type: ignore[arg-type]  # read only
    report = _report(snapshot, now)
    seconds_left = -1
    deadline = stored.deadline
    if deadline is not None and deadline[0] == snapshot.turn + 1 and deadline[1] is not None:
        if not snapshot.over:
            seconds_left = max(0, round(deadline[1] - now))
    return replace(report, seconds_left=seconds_left)


def _queue(conn, game_id: int, kind: str, payload: dict[str, Any]) -> int:
    return requests_q.thd_queue_request(conn, game_id, kind, payload)


def _turn_to_end(conn, name: str) -> tuple[int, str]:
    """The open turn (its number as every tool shows it) and the phase of game `name`."""
    summary = q.thd_game_summaries(conn, name)[0]
    return summary.turn, summary.phase


def _announce_claims(conn) -> None:
    thd_notify(conn, thd_lock_space(conn), {"k": "claims"})


class ClusterBackend(LiveBackend):
    """The `OperatorBackend` of a cluster node (`cluster`: its `ClusterNode`)."""

    def __init__(
        self,
        directory: GameDirectory,
        store,
        clock,
        game_defaults: GameConfig | None = None,
        *,
        cluster: Any,
        desk=None,
        hasher=None,
        new_seed: Callable[[], int] = lambda: secrets.randbelow(2**31),
    ):
        super().__init__(directory, store, clock, game_defaults, desk=desk, hasher=hasher, new_seed=new_seed)
        self.cluster = cluster

    # -- finding games ----------------------------------------------------------------------

    def _placement(self, name: str) -> Any:
        """The game's placement (server.database.ownership.Placement); CommandFailed if none."""
        placement = self.cluster.placement(None if name == DEFAULT_GAME else name)
        if placement is None:
            raise no_such_game(name, self.cluster.placements, "this cluster")
        return placement

    async def _look_up(self, name: str) -> None:
        """A game made a moment ago (on another node) may be missing from the last claim
        round: look at the database again before saying there is no such game."""
        if self.cluster.placement(None if name == DEFAULT_GAME else name) is None:
            await self.cluster.refresh()

    def _local(self, name: str) -> Game | None:
        placement = self._placement(name)
        game = self.directory.games.get(placement.name)
        return game if isinstance(game, Game) else None

    # -- reading ------------------------------------------------------------------------------

    async def list_games(self) -> list[GameListing]:
        summaries = await self.store.read(q.thd_game_summaries)
        local = {game.id: game for game in self.directory.games.values()}
        listed = []
        for summary in summaries:
            game = local.get(summary.id)
            listed.append(live_listing(game.snapshot) if game is not None else _stored_listing(summary))
        return listed

    async def game_status(self, game: str) -> GameReport:
        await self._look_up(game)
        if self._local(game) is not None:
            return await super().game_status(self._placement(game).name)
        placement = self._placement(game)
        return await self.store.read(_stored_report, placement.game_id, self.clock.seconds())

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
        if self.cluster.placement(name) is not None:
            raise CommandFailed(f"a game named {name!r} exists")
        seed = self.new_seed()
        config = replace(self.game_defaults, name=name, seed=seed, description=f"TaE game {name}")
        try:
            setup = config.setup(ctime=int(self.clock.seconds()))
        except ConfigError as error:
            raise CommandFailed(str(error)) from None
        try:
            game_id = await self.store.create_game(setup)
        except ConflictError:
            raise CommandFailed(f"a game named {name!r} exists") from None
        await self.store.read(_announce_claims)
        text = f"game {name!r} created (id {game_id}, seed {seed}); players join it as <name>@{name}"
        deadline = self.clock.seconds() + CLAIM_WAIT_S
        while self.clock.seconds() < deadline:
            await self.cluster.refresh()
            placement = self.cluster.placement(name)
            if placement is not None and placement.owned:
                return f"{text}; node {placement.node!r} runs it"
            await _sleep(self.clock, POLL_S)
        return f"{text}; no node has taken it yet"

    async def add_player(self, game: str, name: str, password: str) -> str:
        await self._look_up(game)
        if self._local(game) is not None:
            return await super().add_player(game, name, password)
        digest = await self.hasher.hash(password)
        payload = {"username": name, "password_hash": digest, "email": "", "comment": ""}
        return await self._ask_owner(game, "add_player", payload)

    async def remove_player(self, game: str, name: str) -> str:
        await self._look_up(game)
        if self._local(game) is not None:
            return await super().remove_player(game, name)
        return await self._ask_owner(game, "remove_player", {"username": name})

    async def end_turn(self, game: str) -> str:
        await self._look_up(game)
        if self._local(game) is not None:
            return await super().end_turn(game)
        placement = self._placement(game)
        turn, phase = await self.store.read(_turn_to_end, placement.name)
        if phase == "over":
            raise CommandFailed(f"game {placement.name!r} is over")
        return await self._ask_owner(game, "end_turn", {"open_turn": turn})

    async def _ask_owner(self, game: str, kind: str, payload: dict[str, Any]) -> str:
        """Queue the request for the node that runs the game and wait for its answer."""
        placement = self._placement(game)
        request_id = await self.store.read(_queue, placement.game_id, kind, payload)
        deadline = self.clock.seconds() + REQUEST_WAIT_S
        while True:
            request = await self.store.read(requests_q.thd_request, request_id)
            if request is None:
                raise CommandFailed(f"request #{request_id} disappeared")
            if request.status == requests_q.DONE:
                return str(request.result)
            if request.status == requests_q.FAILED:
                raise CommandFailed(str(request.result))
            if self.clock.seconds() >= deadline:
                raise CommandFailed(
                    f"request #{request_id} is queued but the node that runs game {placement.name!r} "
                    f"has not answered in {REQUEST_WAIT_S:g} s; it is carried out when a node runs the game"
                )
            await _sleep(self.clock, POLL_S)

    # -- not in the game service yet ------------------------------------------------------------

    async def reinstate_player(self, game: str, name: str) -> str:
        await self._look_up(game)
        self._placement(game)
        raise CommandFailed(NOT_AVAILABLE)

    async def pause(self, game: str) -> str:
        await self._look_up(game)
        self._placement(game)
        raise CommandFailed(NOT_AVAILABLE)

    async def resume(self, game: str) -> str:
        await self._look_up(game)
        self._placement(game)
        raise CommandFailed(NOT_AVAILABLE)

    async def extend(self, game: str, seconds: int) -> str:
        await self._look_up(game)
        self._placement(game)
        raise CommandFailed(NOT_AVAILABLE)

    async def set_setting(self, game: str, setting: str, value: str) -> str:
        await self._look_up(game)
        self._placement(game)
        raise CommandFailed(NOT_AVAILABLE)


def _sleep(clock, seconds: float) -> defer.Deferred:
    d: defer.Deferred = defer.Deferred()
    clock.callLater(seconds, d.callback, None)
    return d
