"""The client side of tpserver-tae: a Thousand Parsec client library for the TaE ruleset.

It imports ``protocol`` (and third-party libraries) only: a client knows only what the wire says.

Layers, bottom up
-----------------
``session``            ``ClientSession``: sans-IO. Sequence numbers, requests → bytes, bytes →
                       replies matched by sequence (single frame, Fail, or Sequence(N) + N),
                       pushed frames (sequence 0), lazy TP04 ObjectDesc/OrderDesc fetching.
``protocol.replies``   which request gets which form of answer (spec §6.2), for both ends.
``plans``              conversations as generators: ``reply = yield message``,
                       ``outcomes = yield [m1, m2]`` (pipelined); any transport runs them.
``cache``              ``Cache``: objects, descriptions, order queues/orders, boards/messages,
                       players, designs, … refreshed by ID lists with modtimes (only changes).
``tae_model``          the TaE vocabulary: colony and fleet kinds, board squares, fleets, scores.
``game_api``           ``TaeGame``: the TaE board grid, fleets by kind, scores, turn, game over,
                       order helpers (insert/remove/probe), finish turn.
``game_messages``      what board messages say: scores, the final ranking (by references).
``conflict_view``      the conflict of a combat turn: sides, systems, strengths, reinforcements.
``blocking``           ``connect()`` → ``BlockingConnection``; ``BlockingClient`` (cache + game);
                       TLS with ``tls=TlsOptions(...)`` (``tls``).
``discovery``          servers on the local network (mDNS ``_tp._tcp``/``_tps._tcp``).
``twisted_transport``  ``TPClientProtocol`` (Deferreds); ``TwistedClient`` (cache + game).

Example (blocking)::

    from clients import BlockingClient, ColonyKind, Version

    client = BlockingClient.connect("localhost", 6923, version=Version.TP04, timeout=10)
    client.login("alice", "secret")
    client.update()
    print(client.game.render())
    leader = client.game.my_leaders()[ColonyKind.SCIENTIST]
    client.insert_order(leader.id, "Move", (4, 5))       # target as (x, y) or a system id
    client.finish_turn()
    client.wait_for_next_turn(timeout=600)               # then the cache is up to date
    print(client.game.turn, client.game.scores())
"""

from protocol import Version

from .blocking import BlockingClient, BlockingConnection, connect
from .cache import Cache, UpdateStats
from .conflict_view import ConflictView, running_conflict
from .errors import (
    ClientError,
    ConnectFailed,
    ConnectionClosed,
    DescriptionUnavailable,
    MalformedReply,
    Redirected,
    RequestFailed,
    RequestTimeout,
    StreamBroken,
    TlsMismatch,
    UnexpectedReply,
    VersionRejected,
)
from .game_api import TaeGame
from .game_messages import GameOver, Standing, parse_scores
from .session import (
    AsyncReceived,
    ClientSession,
    ConnectionFailed,
    ReplyReceived,
    Request,
    Undecodable,
    UnsolicitedFrame,
)
from .tae_model import ColonyKind, FleetKind, FleetView, Scores, SystemView, parse_system_name

__all__ = [
    "AsyncReceived",
    "BlockingClient",
    "BlockingConnection",
    "Cache",
    "ClientError",
    "ClientSession",
    "ColonyKind",
    "ConflictView",
    "ConnectFailed",
    "ConnectionClosed",
    "ConnectionFailed",
    "DescriptionUnavailable",
    "FleetKind",
    "FleetView",
    "GameOver",
    "MalformedReply",
    "Redirected",
    "ReplyReceived",
    "Request",
    "RequestFailed",
    "RequestTimeout",
    "Scores",
    "Standing",
    "StreamBroken",
    "SystemView",
    "TaeGame",
    "TlsMismatch",
    "Undecodable",
    "UnexpectedReply",
    "UnsolicitedFrame",
    "UpdateStats",
    "Version",
    "VersionRejected",
    "connect",
    "parse_scores",
    "parse_system_name",
    "running_conflict",
]
