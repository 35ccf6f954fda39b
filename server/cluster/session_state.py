"""What the parts of a cluster node's TP session share, for the type checker.

`server.cluster.routing.ClusterSession` is one class made of parts, one module each: routing
and relaying (`server.cluster.routing`), carrying the session over to a game's new owner
(`server.cluster.carry_over`) and the cluster's game list (`server.cluster.game_list`).
`SessionState` declares the state and the steps the parts call across one another; at run
time it is empty and `ClusterSession` defines everything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

#: The Fail text of a node asked for a game it does not run (the relaying node looks again).
NOT_HERE = "tae-cluster: this node does not run that game"

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from twisted.internet import defer

    import protocol as tp
    from protocol import Frame, Version
    from server.cluster.relay import Upstream
    from server.cluster.write_outcome import Ledger
    from server.tp.session import Session


class SessionState:
    """The state and shared steps of `server.cluster.routing.ClusterSession`."""

    if TYPE_CHECKING:
        node: Any
        version: Version
        push: Callable[[bytes], None]
        close: Callable[[], None] | None
        host: str
        port: int
        _make_local: Callable[[], Session]
        local: Session
        client: str
        relayed: bool
        credentials: tuple[str, str] | None
        game_name: str | None
        game_id: int | None
        mode: str | None
        upstream: Upstream | None
        upstream_node: str | None
        upstream_epoch: int | None
        _recovery: defer.Deferred | None
        _after_recovery: list[defer.Deferred]
        _abandon: Callable[[], None] | None
        ledger: Ledger | None
        generation: int
        owner_changed: bool
        _lists: dict[type, Any]
        closed: bool

        def handle_frame(self, message: tp.Message, frame: Frame) -> bytes | defer.Deferred: ...

        def _encode(self, message: tp.Message, sequence: int) -> bytes: ...

        async def _via_owner(self, placement: Any, message: tp.Message) -> list[Frame] | None: ...

        def _drop_upstream(self) -> None: ...

        async def _exchange(self, upstream: Upstream, frame: Frame) -> list[Frame]: ...

        def _serve(self, message: tp.Message, frame: Frame) -> bytes | defer.Deferred: ...
