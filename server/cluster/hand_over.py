"""Handing a cluster node's games over: to another node (`move_game`, rebalancing), or to all the
others when the node stops.

The game's sessions hold their requests, the node waits for the requests in progress and for a
turn being stored, stops the timer, writes the new owner (raising the claim epoch), drops the
game, and the sessions carry on with the new owner. A stopping node gives each game to the
least loaded running node.
"""

from __future__ import annotations

from twisted.internet import defer
from twisted.logger import Logger

from server.cluster.node_state import NodeState
from server.database import ownership
from server.database.ownership import ClaimLost, NodeInfo, Placement
from server.game.game import Game
from server.operating.game_actions import OperationError

log = Logger()


class HandOver(NodeState):
    """The handing over of `server.cluster.node.ClusterNode` (see the module docstring)."""

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
        moving = self.leaving.get(game.id)
        if moving is not None:  # a rebalancing round hands it over already: where to, see below
            await _after(moving)
        elif await self._hand_over(game, target):
            return f"game {game.setup.name!r} moved from node {self.name!r} to node {target.name!r}"
        # The game left this node another way meanwhile (rebalanced, or its claim was taken):
        # say where it runs now rather than report a move that did not happen.
        await self.refresh()
        now = self.by_id.get(game.id)
        owner = None if now is None else now.node
        if owner == target.name:
            return f"game {game.setup.name!r} moved from node {self.name!r} to node {target.name!r}"
        raise OperationError(
            f"game {game.setup.name!r} left node {self.name!r} meanwhile and runs on "
            f"{'no node yet' if owner is None else f'node {owner!r}'}: not moved to node {target.name!r}"
        )

    async def _hand_over(self, game: Game, target: NodeInfo | None) -> bool:
        """Hand `game` to `target` (None: to whoever claims it next); False when the game's
        claim was lost on the way (it is dropped here, and runs wherever the claim went)."""
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
            return False
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
        return True

    async def _quiesce(self, game: Game) -> None:
        """Wait until no session request and no end of turn is in progress, then stop the timer
        (all in one reactor turn, so nothing starts in between). Never longer than
        `handover_timeout`: a turn whose storing hangs must not keep the game leaving forever."""
        deadline = self.reactor.seconds() + self.settings.handover_timeout
        while True:
            left = deadline - self.reactor.seconds()
            if left > 0:
                await _at_most(self.reactor, left, self._idle(game.id))
                await _at_most(self.reactor, deadline - self.reactor.seconds(), game.ready())
            if game.closed or (not game.busy and not self._inflight.get(game.id)):
                game.timer.stop()
                return
            if self.reactor.seconds() >= deadline:
                game.timer.stop()
                log.warn(
                    "cluster node {node}: game {game} did not become quiet; handing it over anyway",
                    node=self.name,
                    game=game.setup.name,
                )
                return

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


def _after(d: defer.Deferred) -> defer.Deferred:
    """Fires (with None) when the shared `d` does, leaving `d`'s own result to its other waiters."""
    outer: defer.Deferred = defer.Deferred()

    def passed(result: object) -> object:
        outer.callback(None)
        return result

    d.addBoth(passed)
    return outer


def _at_most(reactor, seconds: float, d: defer.Deferred) -> defer.Deferred:
    """Fires when `d` does or after `seconds`, whichever comes first (`d` is left alone: a
    game's `ready()` waiter must not be cancelled)."""
    outer: defer.Deferred = defer.Deferred()

    def fire() -> None:
        if not outer.called:
            outer.callback(None)

    call = reactor.callLater(max(0.0, seconds), fire)

    def done(_: object) -> None:
        if call.active():
            call.cancel()
        fire()

    d.addBoth(done)
    return outer
