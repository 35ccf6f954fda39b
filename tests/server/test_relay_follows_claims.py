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
from server.database.ownership import Placement, Round
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
