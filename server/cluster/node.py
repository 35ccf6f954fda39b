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

import math
import os
from collections.abc import Callable
from typing import Any

from twisted.internet import defer
from twisted.internet.task import LoopingCall
from twisted.logger import Logger

from server.cluster.fencing import ClaimConnection, ClaimConnectionLost, FencedStore
from server.cluster.notify import NotifyListener
from server.config.cluster import ClusterSettings
from server.database import lease, ownership
from server.database.ownership import ClaimLost, NodeConflict, NodeInfo, Placement
from server.game.directory import GameDirectory
from server.game.game import Game
from server.model.store import ConflictError, GameSetup
from server.operating.desk import restore_game
from server.operating.game_actions import OperationError

log = Logger()

REBALANCE_PER_ROUND = 8


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


class ClusterNode:
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
        self._inflight: dict[int, int] = {}
        self._quiet: dict[int, list[defer.Deferred]] = {}
        self._departure_watchers: list[Callable[[int], None]] = []
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
            application_name=f"tae-node {self.name} news",
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
            application_name=f"tae-node {self.name} claims",
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

    def subscribe_news(self, game_id: int, listener: Callable[[dict], None]) -> Callable[[], None]:
        """`listener(message)` for every change record of the game, whichever node runs it
        (LISTEN/NOTIFY, `server.cluster.notify`): the message names the record's sequence
        (`"q"`); what changed is read with `changes_since`."""
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

    # -- rounds ----------------------------------------------------------------------------

    def wake(self) -> None:
        """Run a claim round soon (NOTIFY news, a session looking for its game)."""
        if self._wake_call is None or not self._wake_call.active():
            self._wake_call = self.reactor.callLater(0.02, self._tick)

    def refresh(self) -> defer.Deferred:
        """Fires after a claim round that started after this call has finished."""
        d: defer.Deferred = defer.Deferred()
        self._after_round.append(d)
        self._tick()
        return d

    def _tick(self) -> None:
        if self.node_id is None or self.claims is None or (self.stopping and not self._after_round):
            return
        if self._round is not None:
            self._again = True
            return
        waiters, self._after_round = self._after_round, []
        self._round = defer.ensureDeferred(self._run_round())

        def done(_: object) -> None:
            self._round = None
            for waiter in waiters:
                waiter.callback(None)
            if self._again or self._after_round:
                self._again = False
                self._tick()

        self._round.addErrback(
            lambda failure: log.failure("cluster node {node}: claim round failed", failure, node=self.name)
        )
        self._round.addBoth(done)

    async def _run_round(self) -> None:
        assert self.claims is not None
        try:
            result = await self.claims.run(
                ownership.thd_round,
                self.node_id,
                self.space,
                stale_after=self.settings.failover_timeout,
                take=not self.stopping,
            )
        except ClaimConnectionLost as error:
            await self._lost_everything(str(error))
            return
        for name in result.cut_off:
            log.warn(
                "cluster node {node}: node {other} stopped answering; cut off", node=self.name, other=name
            )
        self._take_round(result)
        self._rebalance(result)
        gains = {
            gid: epoch
            for gid, epoch in result.mine.items()
            if self._local_by_id(gid) is None and gid not in self.loading and gid not in self.leaving
        }
        if gains:
            await self._load(gains)

    def _take_round(self, result: ownership.Round) -> None:
        self.placements = {p.name: p for p in result.placements}
        self.by_id = {p.game_id: p for p in result.placements}
        self.nodes = {n.name: n for n in result.nodes}
        self.directory.default_name = self.default_name()
        for game in list(self.directory.games.values()):
            if game.id in self.leaving:
                continue
            held = self.store.claims.get(game.id)
            if result.mine.get(game.id) != held:
                self._drop(game, "another node runs it now")

    def _rebalance(self, result: ownership.Round) -> None:
        """Hand games to nodes with fewer, while this node runs more than its fair share and a
        node runs at least two fewer than this one (so two nodes never pass a game to and fro).
        A few games a round, each handed over gracefully: players stay connected."""
        if self.stopping or self._rebalancing:
            return
        running = [n for n in result.nodes if n.alive and n.state == ownership.RUNNING]
        me = next((n for n in running if n.id == self.node_id), None)
        if me is None or len(running) < 2:
            return
        share = math.ceil(len(result.placements) / len(running))
        counts = {n.name: len(n.games) for n in running}
        mine = sorted(
            (g for g in self.directory.games.values() if g.id not in self.leaving), key=lambda g: -g.id
        )
        plan: list[tuple[Game, Any]] = []
        while counts[self.name] > share and mine and len(plan) < REBALANCE_PER_ROUND:
            target = min((n for n in running if n.name != self.name), key=lambda n: (counts[n.name], n.name))
            if counts[target.name] >= counts[self.name] - 1:
                break
            counts[target.name] += 1
            counts[self.name] -= 1
            plan.append((mine.pop(0), target))
        if plan:
            self._rebalancing = True
            moves = [defer.ensureDeferred(self._hand_over(game, target)) for game, target in plan]
            done = defer.DeferredList(moves, consumeErrors=True)
            done.addCallback(lambda _: setattr(self, "_rebalancing", False))
            done.addCallback(lambda _: self.wake())
            log.info(
                "cluster node {node}: handing {count} games to less loaded nodes ({moves})",
                node=self.name,
                count=len(plan),
                moves=", ".join(f"{g.setup.name}->{t.name}" for g, t in plan),
            )

    def _local_by_id(self, game_id: int) -> Game | None:
        return next((g for g in self.directory.games.values() if g.id == game_id), None)

    async def _load(self, epochs: dict[int, int]) -> None:
        for gid, epoch in epochs.items():
            self.loading.add(gid)
            self.store.hold(gid, epoch)
        try:
            stored = await self.store.load_games(list(epochs), all_states=False)
        except Exception:
            for gid in epochs:
                self.loading.discard(gid)
                self.store.forget(gid)
            raise
        for record in stored:
            self.loading.discard(record.game_id)
            if self.store.claims.get(record.game_id) != epochs[record.game_id]:
                continue  # lost again while loading
            game = restore_game(
                record, self.store, self.reactor, self.directory, self.desk, hasher=self.hasher
            )
            log.info(
                "cluster node {node}: game {game} (id {id}) claimed at turn {turn}",
                node=self.name,
                game=game.setup.name,
                id=game.id,
                turn=game.state.turn,
            )
            for waiter in self._arrivals.pop(game.setup.name, []):
                waiter.callback(game)
        for gid in epochs:
            self.loading.discard(gid)
        self.directory.default_name = self.default_name()

    def _drop(self, game: Game, reason: str) -> None:
        """Let the game go: no more writes, no timer; its sessions move on (watchers)."""
        self.store.forget(game.id)
        game.close()
        self._inflight.pop(game.id, None)
        for waiter in self._quiet.pop(game.id, []):
            waiter.callback(None)
        self.directory.remove(game.setup.name)
        self.directory.default_name = self.default_name()
        log.info(
            "cluster node {node}: game {game} left this node: {reason}",
            node=self.name,
            game=game.setup.name,
            reason=reason,
        )
        for watcher in list(self._departure_watchers):
            try:
                watcher(game.id)
            except Exception:
                log.failure("a departure watcher failed")

    def _claim_refused(self, game_id: int) -> None:
        game = self._local_by_id(game_id)
        if game is not None and game_id not in self.leaving:
            self.reactor.callLater(0, self._drop, game, "its claim was taken by another node")
        self.wake()

    async def _lost_everything(self, why: str) -> None:
        log.error(
            "cluster node {node}: the claim connection broke ({why}): every game is let go",
            node=self.name,
            why=why,
        )
        for game in list(self.directory.games.values()):
            self._drop(game, "this node lost its claims")
        if self._rejoining or self.stopping:
            return
        self._rejoining = True
        old, self.claims, self.node_id = self.claims, None, None
        if old is not None:
            await old.close()
        try:
            while not self.stopping:
                try:
                    await self._connect()
                    log.info("cluster node {node}: joined again", node=self.name)
                    break
                except Exception as error:
                    log.warn(
                        "cluster node {node}: cannot join again yet ({error})", node=self.name, error=error
                    )
                    await _sleep(self.reactor, self.settings.poll_interval)
        finally:
            self._rejoining = False
        self.wake()

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

    # -- handing over ----------------------------------------------------------------------

    async def move_game(self, game: Game, node_name: str) -> str:
        """Hand `game` to the node `node_name` (the operator request `move_game`)."""
        await self.refresh()
        target = self.nodes.get(node_name)
        if target is None or not target.alive:
            alive = ", ".join(n.name for n in self.nodes.values() if n.alive)
            raise OperationError(f"no live node named {node_name!r} (live nodes: {alive or 'none'})")
        if target.name == self.name:
            return f"game {game.setup.name!r} runs on node {self.name!r} already"
        if target.state != ownership.RUNNING:
            raise OperationError(f"node {node_name!r} is {target.state}: it takes no games")
        await self._hand_over(game, target)
        return f"game {game.setup.name!r} moved from node {self.name!r} to node {target.name!r}"

    async def _hand_over(self, game: Game, target: NodeInfo | None) -> None:
        gid = game.id
        gone: defer.Deferred = defer.Deferred()
        self.leaving[gid] = gone
        deadline_before = game.snapshot.deadline
        try:
            await self._quiesce(game)
            epoch = self.store.claims.get(gid)
            if epoch is None:
                raise ClaimLost(f"game {gid} left this node meanwhile")
            assert self.claims is not None
            new_epoch = await self.claims.run(
                ownership.thd_hand_over,
                gid,
                self.node_id,
                epoch,
                None if target is None else target.id,
                self.space,
            )
        except ClaimLost:
            if self._local_by_id(gid) is not None:
                self._drop(game, "its claim was taken by another node")
            return
        except Exception:
            if deadline_before is not None and not game.busy and self._local_by_id(gid) is not None:
                game.timer.resume_deadline(deadline_before)
            raise
        finally:
            self.leaving.pop(gid, None)
            self.reactor.callLater(0, gone.callback, None)
        old = self.by_id.get(gid)
        if old is not None:
            moved = Placement(
                gid,
                old.name,
                None if target is None else target.id,
                None if target is None else target.name,
                None if target is None else target.advertise,
                int(new_epoch),
                old.last_turn,
                old.account_creation,
            )
            self.by_id[gid] = self.placements[old.name] = moved
        self._drop(game, f"handed over to node {target.name}" if target is not None else "released")

    async def _quiesce(self, game: Game) -> None:
        """Wait until no session request and no end of turn is in progress, then stop the timer
        (all in one reactor turn, so nothing starts in between)."""
        deadline = self.reactor.seconds() + self.settings.handover_timeout
        while True:
            await self._idle(game.id)
            await game.ready()
            if not game.busy and not self._inflight.get(game.id):
                game.timer.stop()
                return
            if self.reactor.seconds() > deadline:
                game.timer.stop()
                log.warn(
                    "cluster node {node}: game {game} did not become quiet; handing it over anyway",
                    node=self.name,
                    game=game.setup.name,
                )
                return

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

    async def _hand_over_all(self) -> None:
        targets = [
            n for n in self.nodes.values() if n.alive and n.state == ownership.RUNNING and n.name != self.name
        ]
        games = sorted(self.directory.games.values(), key=lambda g: g.id)
        if not targets or not games:
            return
        load = {n.name: len(n.games) for n in targets}
        plan = []
        for game in games:
            target = min(targets, key=lambda n: (load[n.name], n.name))
            load[target.name] += 1
            plan.append(self._hand_over(game, target))
        results = await defer.DeferredList([defer.ensureDeferred(p) for p in plan], consumeErrors=True)
        failed = sum(1 for ok, _ in results if not ok)
        log.info(
            "cluster node {node}: handed {count} games over to {targets} ({failed} failed)",
            node=self.name,
            count=len(plan) - failed,
            targets=", ".join(sorted(n.name for n in targets)),
            failed=failed,
        )


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


def _sleep(reactor, seconds: float) -> defer.Deferred:
    d: defer.Deferred = defer.Deferred()
    reactor.callLater(seconds, d.callback, None)
    return d
