"""`ClusterBackend`: the operator commands on a cluster node, for every game of the cluster.

An admin client may connect to any node. A game this node runs is served as `LiveBackend`
serves it (its live snapshot, the game service). A game another node runs is read from the
database (`list-games` from the stored summaries, `status` from the game as last stored, with
the deadline its owner recorded), and a change to it (any command of the operator command
table, `server.operating.commands`) is queued as an operator request
(`server.database.operator_requests`): the NOTIFY it sends wakes the owner's `OperatorDesk`,
which carries it out through the same command as a fenced write, and this node waits for the
result (`REQUEST_WAIT_S`). So a change is carried out once, by the node
that runs the game, also while the game moves or fails over (its new owner does it).
`create-game` stores the game and waits until a node claims it.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from typing import Any

from twisted.internet import defer

from server.admin.backend import CommandFailed, GameListing
from server.admin.live import LiveBackend, listing_of, new_game_setup
from server.config.file import GameConfig
from server.database import ConflictError
from server.database import games as q
from server.database import operator_requests as requests_q
from server.database.ownership import thd_lock_space, thd_notify
from server.game.directory import GameDirectory
from server.game.game import Game
from server.operating.arguments import DEFAULT_GAME
from server.operating.command_declaration import OperatorCommand
from server.operating.commands import no_such_game, thd_queue_command
from server.operating.game_actions import OperationError
from server.operating.on_database import stored_snapshot
from server.views.operator_status import GameStatus, status_of

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


def _stored_status(conn, game_id: int, now: float, owner: str | None) -> GameStatus:
    """The status of a game another node runs, as stored (with the deadline its owner recorded)."""
    stored = q.thd_load_games(conn, [game_id], all_states=False)[0]
    where = f"node {owner!r}" if owner else None
    return status_of(stored_snapshot(stored, now), now, server=where, deadline_recorded=True)


def _queue(conn, game_id: int, command: OperatorCommand, payload: dict[str, Any]) -> int:
    return thd_queue_command(conn, game_id, command, payload)[0]


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

    where = "this cluster"

    def _placement(self, name: str) -> Any:
        """The game's placement (server.database.ownership.Placement); CommandFailed if none."""
        placement = self.cluster.placement(None if name == DEFAULT_GAME else name)
        if placement is None:
            raise CommandFailed(str(no_such_game(name, list(self.cluster.placements), self.where)))
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
            listed.append(listing_of(game.snapshot) if game is not None else _stored_listing(summary))
        return listed

    async def game_status(self, game: str) -> GameStatus:
        await self._look_up(game)
        if self._local(game) is not None:
            return await super().game_status(self._placement(game).name)
        placement = self._placement(game)
        owner = placement.node if placement.owned else None
        return await self.store.read(_stored_status, placement.game_id, self.clock.seconds(), owner)

    # -- changing -----------------------------------------------------------------------------

    async def create_game(self, name: str) -> str:
        if self.cluster.placement(name) is not None:
            raise CommandFailed(f"a game named {name!r} exists")
        seed = self.new_seed()
        setup = new_game_setup(self.game_defaults, name, seed, int(self.clock.seconds()))
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

    async def change(self, command: OperatorCommand, values: Mapping[str, Any]) -> str:
        game = values["game"]
        await self._look_up(game)
        if self._local(game) is not None:
            return await super().change(command, values)
        try:
            payload = await command.payload(values, self.hasher)
        except OperationError as error:
            raise CommandFailed(str(error)) from None
        return await self._ask_owner(game, command, payload)

    async def _ask_owner(self, game: str, command: OperatorCommand, payload: dict[str, Any]) -> str:
        """Queue the request for the node that runs the game and wait for its answer."""
        placement = self._placement(game)
        try:
            request_id = await self.store.read(_queue, placement.game_id, command, payload)
        except OperationError as error:
            raise CommandFailed(str(error)) from None
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


def _sleep(clock, seconds: float) -> defer.Deferred:
    d: defer.Deferred = defer.Deferred()
    clock.callLater(seconds, d.callback, None)
    return d
