"""A relayed session follows its game's claim (issue 23, item 4): when a claim round sees the
game leave the node the session is relayed to (moved, or its owner died or was cut off), the
relay gives that owner up at once instead of waiting for its answer or the answer's deadline,
and the session is carried over to the new owner."""

from __future__ import annotations

from twisted.internet.task import Clock

from protocol import Version
from server.cluster.node import ClusterNode
from server.cluster.routing import ClusterSession
from server.config.cluster import ClusterSettings
from server.database.ownership import RUNNING, NodeInfo, Placement, Round
from server.game.directory import GameDirectory


class Owner:
    """The relay's connection to the owner, as far as giving it up goes."""

    def __init__(self):
        self.given_up = 0
        self.lost = False

    def give_up(self) -> None:
        self.given_up += 1

    def close(self) -> None:
        self.lost = True


class NoStore:
    claims: dict[int, int] = {}
    on_lost = None


def placement(node: str | None, epoch: int) -> Placement:
    return Placement(3, "duel", None if node is None else ord(node), node, "127.0.0.1:1", epoch, 4, True)


def a_round(*placements: Placement) -> Round:
    return Round({}, placements, (), (), ())


def relayed_session(node: ClusterNode) -> tuple[ClusterSession, Owner]:
    session = ClusterSession(node, GameDirectory(), Version.TP04, lambda data: None)
    owner = Owner()
    session.mode, session.game_id, session.game_name = "remote", 3, "duel"
    session.upstream, session.upstream_node, session.upstream_epoch = owner, "b", 1  # type: ignore[assignment]
    return session, owner


def test_a_relayed_session_gives_its_owner_up_when_the_game_moves_or_loses_its_owner():
    node = ClusterNode(ClusterSettings("a", "127.0.0.1:6923"), "unused", NoStore(), GameDirectory(), Clock())  # type: ignore[arg-type]
    node._take_round(a_round(placement("b", 1)))
    session, owner = relayed_session(node)
    node._take_round(a_round(placement("b", 1)))  # nothing moved
    assert owner.given_up == 0
    node._take_round(a_round(placement(None, 1)))  # b died or was cut off: no owner yet
    assert owner.given_up == 1

    node._take_round(a_round(placement("b", 1)))
    session2, owner2 = relayed_session(node)
    node._take_round(a_round(placement("c", 2)))  # c took the game over
    assert owner2.given_up == 1


def test_a_session_that_left_stops_following():
    node = ClusterNode(ClusterSettings("a", "127.0.0.1:6923"), "unused", NoStore(), GameDirectory(), Clock())  # type: ignore[arg-type]
    node._take_round(a_round(placement("b", 1)))
    session, owner = relayed_session(node)
    session.connection_lost()
    node._take_round(a_round(placement("c", 2)))
    assert owner.given_up == 0 and node._move_watchers == []


def test_a_wait_for_a_game_to_arrive_ends_when_the_round_places_it_elsewhere():
    """A node that lost its claims (a frozen node woken up) still has the placements that gave
    it the game: a login routed by them waits for the game to arrive here. The next round places
    it on another node; the wait ends then (and the login is relayed there), instead of after
    `relay_timeout`, which the client's own request timeout ends first."""
    clock = Clock()
    node = ClusterNode(ClusterSettings("a", "127.0.0.1:6923"), "unused", NoStore(), GameDirectory(), clock)  # type: ignore[arg-type]
    node._take_round(a_round(placement("a", 1)))
    waiting = node.arrival("duel", 30)
    arrived: list[object] = []
    waiting.addCallback(arrived.append)
    node._take_round(a_round(placement("a", 1)))  # still placed here: it may be loading
    assert arrived == []
    node._take_round(a_round(placement("b", 2)))  # b took it over
    assert arrived == [None]
    assert node._arrivals == {}
    clock.advance(30)  # its deadline passing later changes nothing
    assert arrived == [None]


class ShortGame:
    """What rebalancing looks at of a game: its id and name."""

    def __init__(self, game_id: int):
        self.id = game_id
        self.setup = type("Setup", (), {"name": f"g{game_id}"})()


def node_info(name: str, games: int) -> NodeInfo:
    return NodeInfo(ord(name), name, "127.0.0.1:1", "here", 1, RUNNING, True, 0.0, 0.0, ("g",) * games)


def test_a_game_that_just_arrived_is_not_handed_on_until_it_settled():
    """A node that took games over from a frozen node is not to hand them to that node the
    moment it wakes and joins again: the games' sessions are still being carried over to it,
    and moving the games at once carries them over twice. Once `failover_timeout` has passed,
    rebalancing hands them on as usual."""
    clock = Clock()
    clock.advance(1000)
    settings = ClusterSettings("b", "127.0.0.1:6923", failover_timeout=4.0)
    node = ClusterNode(settings, "unused", NoStore(), GameDirectory(), clock)  # type: ignore[arg-type]
    node.node_id = ord("b")
    for gid in (1, 2, 3, 4):
        node.directory.games[f"g{gid}"] = ShortGame(gid)  # type: ignore[assignment]
        node._arrived_at[gid] = clock.seconds()  # all four taken over just now
    handed: list[tuple[int, str]] = []

    async def hand_over(game, target) -> None:
        handed.append((game.id, target.name))

    node._hand_over = hand_over  # type: ignore[method-assign]
    placements = tuple(placement_of(gid, "b") for gid in (1, 2, 3, 4))
    woken = Round({}, placements, (node_info("a", 0), node_info("b", 4)), (), ())
    node._rebalance(woken)
    assert handed == []
    clock.advance(4.0)
    node._rebalancing = False
    node._rebalance(woken)
    assert handed == [(4, "a"), (3, "a")]  # down to the fair share, newest first


def placement_of(gid: int, node: str) -> Placement:
    return Placement(gid, f"g{gid}", ord(node), node, "127.0.0.1:1", 1, 0, True)
