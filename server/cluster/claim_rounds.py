"""The claim rounds of a cluster node: which games it runs, loading them, letting them go.

Every `poll_interval` seconds, and at once when a NOTIFY says claims changed (`wake`), a round
(`server.database.ownership.thd_round`) refreshes the node's heartbeat, takes orphaned games up
to the fair share and cuts off stale nodes. Games the round gives this node are loaded
(`Game.restore` and `resume`: an interrupted turn is resolved again, the timer keeps its stored
deadline); games it no longer gives it are dropped; a node with more than its share hands a few
to less loaded nodes (`server.cluster.hand_over`). Losing the claim connection loses every
game; the node then joins again.
"""

from __future__ import annotations

import math
from typing import Any

from twisted.internet import defer
from twisted.logger import Logger

from server.cluster.fencing import ClaimConnectionLost
from server.cluster.node_state import NodeState
from server.database import ownership
from server.game.game import Game
from server.operating.desk import restore_game

log = Logger()

REBALANCE_PER_ROUND = 8


class ClaimRounds(NodeState):
    """The claim rounds of `server.cluster.node.ClusterNode` (see the module docstring)."""

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
        before = self.by_id
        self.placements = {p.name: p for p in result.placements}
        self.by_id = {p.game_id: p for p in result.placements}
        moved = [
            gid
            for gid, old in before.items()
            if old.node is not None and getattr(self.by_id.get(gid), "node", None) != old.node
        ]
        for gid in moved:
            for watcher in list(self._move_watchers):
                try:
                    watcher(gid)
                except Exception:
                    log.failure("a move watcher failed")
        self.nodes = {n.name: n for n in result.nodes}
        self.directory.default_name = self.default_name()
        for game in list(self.directory.games.values()):
            if game.id in self.leaving:
                continue
            held = self.store.claims.get(game.id)
            if result.mine.get(game.id) != held:
                self._drop(game, "another node runs it now")
        self._not_coming()

    def _not_coming(self) -> None:
        """Answer None to whoever awaits a game (`arrival`) that the placements no longer give
        this node: they were looked up when it did (before this node lost its claims, a
        handover, a stale round), and the game will not come. Waiting on would hold a login
        for `relay_timeout` (the client's own request timeout first) although the game runs
        elsewhere; the caller looks up where it runs now."""
        for name in list(self._arrivals):
            placement = self.placements.get(name)
            if placement is not None and placement.node == self.name:
                continue
            for waiter in self._arrivals.pop(name, []):
                waiter.callback(None)

    def _rebalance(self, result: ownership.Round) -> None:
        """Hand games to nodes with fewer, while this node runs more than its fair share and a
        node runs at least two fewer than this one (so two nodes never pass a game to and fro).
        A few games a round, each handed over gracefully: players stay connected. A game that
        arrived less than `failover_timeout` ago stays: after a failover its players' sessions
        are still being carried over to it (a frozen node woken up joins again at once, and
        handing it the games back then carried those sessions over twice, delaying the first
        turn under the new owner by seconds)."""
        if self.stopping or self._rebalancing:
            return
        running = [n for n in result.nodes if n.alive and n.state == ownership.RUNNING]
        me = next((n for n in running if n.id == self.node_id), None)
        if me is None or len(running) < 2:
            return
        share = math.ceil(len(result.placements) / len(running))
        counts = {n.name: len(n.games) for n in running}
        settled = self.reactor.seconds() - self.settings.failover_timeout
        mine = sorted(
            (
                g
                for g in self.directory.games.values()
                if g.id not in self.leaving and self._arrived_at.get(g.id, settled) <= settled
            ),
            key=lambda g: -g.id,
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
            self._arrived_at[record.game_id] = self.reactor.seconds()
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
        self._arrived_at.pop(game.id, None)
        self._inflight.pop(game.id, None)
        for waiter in self._quiet.pop(game.id, []):
            waiter.callback(None)
        self.directory.remove(game.setup.name)
        self.directory.default_name = self.default_name()
        self._not_coming()  # handed over: the placements name the new owner already
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


def _sleep(reactor, seconds: float) -> defer.Deferred:
    d: defer.Deferred = defer.Deferred()
    reactor.callLater(seconds, d.callback, None)
    return d
