"""The game list of a cluster node's TP session: every game of the cluster, at this address.

GetGames answers with this node's games and those of every other node (asked over a relay
connection each, within `GAMES_TIMEOUT_S`), each pointing at this node's address: a client
that logs in to any of them here is relayed to its owner (`server.cluster.routing`).
"""

from __future__ import annotations

from typing import Any

from twisted.internet import defer

import protocol as tp
from protocol import FailCode, Frame
from protocol.records import GameConnection
from server.cluster.relay import RELAY_CLIENT, Upstream, connect_upstream
from server.cluster.session_state import SessionState
from server.views.tp.games import game_frame

GAMES_TIMEOUT_S = 3.0


class GameList(SessionState):
    """GetGames of `server.cluster.routing.ClusterSession` (see the module docstring)."""

    async def _games(self, frame: Frame) -> bytes:
        """GetGames: this node's games and every other node's, each pointing at this address."""
        now = self.node.reactor.seconds()
        found: dict[str, tp.Game] = {
            g.setup.name: game_frame(g.snapshot, self.host, self.port, now)
            for g in self.node.directory.games.values()
        }
        others = {p.node: p for p in self.node.placements.values() if p.owned and p.node != self.node.name}
        if self.relayed:
            others = {}  # another node asks for this node's games only
        asked = [defer.ensureDeferred(self._games_of(p)) for p in others.values()]
        for ok, listed in await defer.DeferredList(asked, consumeErrors=True):
            if ok:
                for game in listed:
                    found.setdefault(game.name, game)
        if not found:
            return self._encode(tp.Fail(FailCode.NO_SUCH_THING, "No games on this server"), frame.sequence)
        default = self.node.default_name()
        ordered = [found[n] for n in sorted(found, key=lambda n: (n != default, n))]
        return tp.encode_reply(ordered, self.version, frame.sequence)

    async def _games_of(self, placement) -> list[tp.Game]:
        upstream: Upstream = await connect_upstream(
            self.node.reactor,
            placement.advertise,
            self.version,
            lambda f: None,
            lambda: None,
            self.node.settings.relay_answer_timeout,
        )
        try:
            await upstream.request(tp.Connect(f"{RELAY_CLIENT} {self.node.name} games"))
            waiting = upstream.request(tp.GetGames())
            waiting.addTimeout(GAMES_TIMEOUT_S, self.node.reactor)
            frames = await waiting
        finally:
            upstream.close()
        listed = []
        for item in frames:
            try:
                message = tp.decode(item)
            except tp.ProtocolError:
                continue
            if isinstance(message, tp.Game) and self.node.placement(message.name) is not None:
                owner = self.node.placement(message.name)
                if owner is not None and owner.node == placement.node:
                    connections = (GameConnection("tp", self.host, self.host, self.port),)
                    listed.append(_replace(message, connections=connections))
        return listed


def _replace(message: tp.Message, **changes) -> Any:
    from dataclasses import replace

    return replace(message, **changes)  # type: ignore[type-var]  # every TP message is a dataclass
