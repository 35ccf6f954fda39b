"""What the parts of a cluster node share, for the type checker.

`server.cluster.node.ClusterNode` is one class made of parts, one module each: the node itself
(joining, where games run, news, stopping), `server.cluster.claim_rounds` (the claim rounds)
and `server.cluster.hand_over` (handing games to other nodes). `NodeState` declares the state
and the steps the parts call across one another, so that each part type-checks on its own; at
run time it is empty and `ClusterNode` defines everything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from twisted.internet import defer
    from twisted.internet.task import LoopingCall

    from server.cluster.fencing import ClaimConnection, FencedStore
    from server.cluster.notify import NotifyListener
    from server.config.cluster import ClusterSettings
    from server.database.ownership import NodeInfo, Placement
    from server.game.directory import GameDirectory
    from server.game.game import Game


class NodeState:
    """The state and shared steps of `server.cluster.node.ClusterNode` (see the module docstring)."""

    if TYPE_CHECKING:
        settings: ClusterSettings
        name: str
        store: FencedStore
        directory: GameDirectory
        reactor: Any
        hasher: Any
        desk: Any
        claims: ClaimConnection | None
        listener: NotifyListener | None
        node_id: int | None
        space: int
        placements: dict[str, Placement]
        by_id: dict[int, Placement]
        nodes: dict[str, NodeInfo]
        stopping: bool
        leaving: dict[int, defer.Deferred]
        loading: set[int]
        _loop: LoopingCall | None
        _round: defer.Deferred | None
        _again: bool
        _wake_call: Any
        _after_round: list[defer.Deferred]
        _arrivals: dict[str, list[defer.Deferred]]
        _arrived_at: dict[int, float]
        _inflight: dict[int, int]
        _quiet: dict[int, list[defer.Deferred]]
        _departure_watchers: list[Callable[[int], None]]
        _move_watchers: list[Callable[[int], None]]
        _rejoining: bool
        _rebalancing: bool

        def default_name(self) -> str | None: ...

        def refresh(self) -> defer.Deferred: ...

        def wake(self) -> None: ...

        def _idle(self, game_id: int) -> defer.Deferred: ...

        async def _connect(self) -> None: ...

        def _drop(self, game: Game, reason: str) -> None: ...

        def _local_by_id(self, game_id: int) -> Game | None: ...

        async def _hand_over(self, game: Game, target: NodeInfo | None) -> bool: ...
