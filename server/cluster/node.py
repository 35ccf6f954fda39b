"""One node of a cluster: it joins, claims its share of the games, runs them, and lets them go.

The life of a node (`ClusterNode`):

* **join**: the claim connection takes the node's advisory lock and registers it
  (`server.database.ownership.thd_register_node`); the LISTEN connection starts; the configured
  open game is created if the database has no game yet; the first claim round runs.
* **claim rounds**, every `poll_interval` seconds and at once when a NOTIFY says claims changed:
  heartbeat, orphans taken up to the fair share, stale nodes cut off
  (`ownership.thd_round`). Games the round gives this node are loaded (`Game.restore` and
  `resume`: an interrupted turn is resolved again, the timer keeps its stored deadline); games
  the round no longer gives it are dropped. The round also says where every game runs
  (`placement`), which is what the TP sessions route by (`server.cluster.routing`).
* **handing over** (`move_game`, and `stop` for every game): the game's sessions hold their
  requests, the node waits for the requests in progress and for a turn being stored, stops the
  timer, writes the new owner (raising the epoch), drops the game, and the sessions carry on
  with the new owner. A stopping node gives each game to the least loaded running node.
* **losing** a game: a fenced write refused (`ClaimLost`) or a round that no longer lists it.
  Losing the claim connection loses every game; the node then joins again.

Every game write goes through the `FencedStore`, so whatever this object believes, a game it
no longer holds cannot be changed by it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from twisted.internet import defer
from twisted.internet.task import LoopingCall
from twisted.logger import Logger

from server.cluster.claim_rounds import ClaimRounds
from server.cluster.fencing import ClaimConnection, FencedStore
from server.cluster.hand_over import HandOver
from server.cluster.notify import NotifyListener
from server.config.cluster import ClusterSettings
from server.database import lease, ownership
from server.database.ownership import NodeConflict, NodeInfo, Placement
from server.game.directory import GameDirectory
from server.game.game import Game
from server.model.store import ConflictError, GameSetup
from server.operating.game_actions import OperationError

log = Logger()


def _register(conn, name: str, advertise: str, host: str, pid: int, now: float) -> tuple[int, int]:
    holder = lease.thd_single_holder(conn, now)
    if holder is not None:
        raise NodeConflict(
            f"a single server (not a cluster node) is using this database ({holder.describe(now)})"
        )
    return ownership.thd_register_node(conn, name, advertise, host, pid)


def _create_if_empty(conn, setup: GameSetup) -> int | None:
    import sqlalchemy as sa

    from server.database import games as q
    from server.database.schema import games

    if conn.execute(sa.select(games.c.id).limit(1)).first() is not None:
        return None
    return q.thd_create_game(conn, setup)


class ClusterNode(ClaimRounds, HandOver):
    """One node of the cluster (see the module docstring); its claim rounds are
    `server.cluster.claim_rounds`, its handing over of games `server.cluster.hand_over`."""

    def __init__(
        self,
        settings: ClusterSettings,
        url: str,
        store: FencedStore,
        directory: GameDirectory,
        reactor,
        *,
        hasher=None,
        default_game: str | None = None,
    ):
        self.settings = settings
        self.name = settings.node
        self.url = url
        self.store = store
        self.directory = directory
        self.reactor = reactor
        self.hasher = hasher
        self.default_game = default_game
        self.desk: Any = None  # server.operating.desk.OperatorDesk, set by the app
        store.on_lost = self._claim_refused
        self.claims: ClaimConnection | None = None
        self.listener: NotifyListener | None = None
        self.node_id: int | None = None
        self.space = 0
        self.placements: dict[str, Placement] = {}
        self.by_id: dict[int, Placement] = {}
        self.nodes: dict[str, NodeInfo] = {}
        self.stopping = False
        self.leaving: dict[int, defer.Deferred] = {}
        self.loading: set[int] = set()
        self._loop: LoopingCall | None = None
        self._round: defer.Deferred | None = None
        self._again = False
        self._wake_call = None
        self._after_round: list[defer.Deferred] = []
        self._arrivals: dict[str, list[defer.Deferred]] = {}
        self._arrived_at: dict[int, float] = {}  # game id → when this node loaded it (reactor time)
        self._inflight: dict[int, int] = {}
        self._quiet: dict[int, list[defer.Deferred]] = {}
        self._departure_watchers: list[Callable[[int], None]] = []
        self._move_watchers: list[Callable[[int], None]] = []
        self._news: dict[int, list[Callable[[dict], None]]] = {}
        self.latest_change: dict[int, int] = {}  # game id → the newest change record heard of
        self._rejoining = False
        self._rebalancing = False

    # -- joining ---------------------------------------------------------------------------

    async def join(self, default_setup: GameSetup | None = None) -> None:
        """Become a node of the cluster (OperationError when the name is taken or a single
        server holds the database), create the open game if there is no game, claim a share."""
        await self._connect()
        if default_setup is not None:
            try:
                await self.store._run(_create_if_empty, default_setup)
            except ConflictError:
                pass  # another node created it at the same moment
        self.listener = NotifyListener(
            self.url,
            ownership.channel(self.space),
            self.reactor,
            self._heard,
            on_connect=self.wake,
            application_name=ownership.session_name(self.name, "news", os.getpid()),
        )
        self.listener.start()
        await self.refresh()
        self._loop = LoopingCall(self._tick)
        self._loop.clock = self.reactor
        self._loop.start(self.settings.poll_interval, now=False)
        log.info(
            "cluster node {node} joined (advertised at {advertise}); it runs {count} games",
            node=self.name,
            advertise=self.settings.advertise,
            count=len(self.directory.games),
        )

    async def _connect(self) -> None:
        claims = ClaimConnection(
            self.url,
            self.reactor,
            application_name=ownership.session_name(self.name, "claims", os.getpid()),
            keepalive=self.settings.failover_timeout,
        )
        try:
            await claims.open()
            self.node_id, self.space = await claims.run(
                _register,
                self.name,
                self.settings.advertise,
                lease.this_host(),
                os.getpid(),
                self.reactor.seconds(),
            )
        except NodeConflict as conflict:
            await claims.close()
            raise OperationError(str(conflict)) from None
        except Exception:
            await claims.close()
            raise
        self.claims = claims
        self.store.space = self.space

    @property
    def session_factory(self):
        """What the TP listener makes for each connection (`server.tp.network.TPFactory`)."""
        from functools import partial

        from server.cluster.routing import ClusterSession

        return partial(ClusterSession, self)

    # -- where games run -------------------------------------------------------------------

    def placement(self, name: str | None) -> Placement | None:
        """Where the named game (None: the default game) runs, as of the last round."""
        if not name:
            name = self.default_name()
        return self.placements.get(name) if name else None

    def default_name(self) -> str | None:
        """The game of logins without `@game`: the configured open game, else the oldest."""
        if self.default_game and self.default_game in self.placements:
            return self.default_game
        if not self.placements:
            return None
        return min(self.placements.values(), key=lambda p: p.game_id).name

    def local(self, name: str | None) -> Game | None:
        placement = self.placement(name)
        return self.directory.games.get(placement.name) if placement is not None else None

    def node(self, name: str) -> NodeInfo | None:
        return self.nodes.get(name)

    def arrival(self, name: str, timeout: float) -> defer.Deferred:
        """Fires with the named game once this node runs it, or None after `timeout` s."""
        game = self.directory.games.get(name)
        if game is not None:
            return defer.succeed(game)
        d: defer.Deferred = defer.Deferred()
        self._arrivals.setdefault(name, []).append(d)
        self.wake()

        def expired() -> None:
            if not d.called:
                waiting = self._arrivals.get(name, [])
                if d in waiting:
                    waiting.remove(d)
                d.callback(None)

        call = self.reactor.callLater(timeout, expired)
        d.addBoth(lambda result: (call.active() and call.cancel(), result)[1])
        return d

    def watch_departures(self, watcher: Callable[[int], None]) -> Callable[[], None]:
        """`watcher(game_id)` when this node lets a game go; returns the unwatch call."""
        self._departure_watchers.append(watcher)
        return lambda: (
            self._departure_watchers.remove(watcher) if watcher in self._departure_watchers else None
        )

    def watch_moves(self, watcher: Callable[[int], None]) -> Callable[[], None]:
        """`watcher(game_id)` after a claim round in which a game's owner changed (another
        node, or none: the owner died or was cut off); returns the unwatch call. Relayed
        sessions follow their game with it (`server.cluster.routing`)."""
        self._move_watchers.append(watcher)
        return lambda: self._move_watchers.remove(watcher) if watcher in self._move_watchers else None

    def subscribe_news(self, game_id: int, listener: Callable[[dict], None]) -> Callable[[], None]:
        """`listener(message)` for every turn stored of the game, whichever node runs it
        (LISTEN/NOTIFY, `server.cluster.notify`): the message names the turn (`"t"`) and its
        change record's sequence (`"q"`); what changed is read with `changes_since`. Other
        writes send no news (every node would have to read it)."""
        self._news.setdefault(game_id, []).append(listener)

        def unsubscribe() -> None:
            listeners = self._news.get(game_id, [])
            if listener in listeners:
                listeners.remove(listener)

        return unsubscribe

    def changes_since(self, game_id: int, after: int) -> defer.Deferred:
        """The game's change records numbered above `after` (a node catching up after news)."""
        return self.store.changes_after(game_id, after)

    # -- requests in progress (the sessions tell) ------------------------------------------

    def leaving_game(self, game_id: int) -> defer.Deferred | None:
        """While the game is being handed over: a Deferred that fires once it is gone."""
        return self.leaving.get(game_id)

    def begin(self, game_id: int) -> None:
        self._inflight[game_id] = self._inflight.get(game_id, 0) + 1

    def end(self, game_id: int) -> None:
        left = self._inflight.get(game_id, 1) - 1
        if left > 0:
            self._inflight[game_id] = left
            return
        self._inflight.pop(game_id, None)
        for d in self._quiet.pop(game_id, []):
            d.callback(None)

    def _idle(self, game_id: int) -> defer.Deferred:
        if not self._inflight.get(game_id):
            return defer.succeed(None)
        d: defer.Deferred = defer.Deferred()
        self._quiet.setdefault(game_id, []).append(d)
        return d

    # -- news ------------------------------------------------------------------------------

    def _heard(self, message: dict) -> None:
        kind = message.get("k")
        game_id = message.get("g")
        if kind in ("claims", "node"):
            self.wake()
        elif kind == "request":
            if self.desk is not None and isinstance(game_id, int) and self._local_by_id(game_id) is not None:
                self.desk.poll()
            else:
                self.wake()  # perhaps a new game, waiting for a node
        elif kind == "turn" and isinstance(game_id, int):
            placement = self.by_id.get(game_id)
            if placement is not None and isinstance(message.get("t"), int):
                updated = _with_turn(placement, message["t"])
                self.by_id[game_id] = self.placements[placement.name] = updated
        if isinstance(game_id, int) and isinstance(message.get("q"), int):
            self.latest_change[game_id] = max(self.latest_change.get(game_id, 0), message["q"])
            for listener in list(self._news.get(game_id, [])):
                try:
                    listener(message)
                except Exception:
                    log.failure("a cluster news listener failed")

    # -- stopping --------------------------------------------------------------------------

    async def stop(self) -> None:
        """Leave the cluster: hand every game to the least loaded running node (or leave it to
        be claimed), give back the claims and the lock."""
        if self.stopping:
            return
        self.stopping = True
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        if self._round is not None:
            await self._round
        if self.claims is not None and self.node_id is not None:
            try:
                await self.claims.run(ownership.thd_set_state, self.node_id, ownership.STOPPING)
                result = await self.claims.run(
                    ownership.thd_round,
                    self.node_id,
                    self.space,
                    stale_after=self.settings.failover_timeout,
                    take=False,
                )
                self._take_round(result)
                await self._hand_over_all()
            except Exception:
                log.failure("cluster node {node}: handing the games over failed", node=self.name)
            try:
                node_id, self.node_id = self.node_id, None
                released = await self.claims.run(ownership.thd_leave, node_id, self.space)
                if released:
                    log.info(
                        "cluster node {node}: {count} games left for the other nodes",
                        node=self.name,
                        count=len(released),
                    )
            except Exception:
                log.failure("cluster node {node}: leaving the cluster failed", node=self.name)
        for game in list(self.directory.games.values()):
            self._drop(game, "the node stopped")
        if self.listener is not None:
            self.listener.stop()
        if self.claims is not None:
            await self.claims.close()
        log.info("cluster node {node} left the cluster", node=self.name)


def _with_turn(placement: Placement, turn: int) -> Placement:
    return Placement(
        placement.game_id,
        placement.name,
        placement.node_id,
        placement.node,
        placement.advertise,
        placement.epoch,
        max(placement.last_turn, turn),
        placement.account_creation,
    )
