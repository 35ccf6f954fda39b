"""A relayed session follows its game's claim (issue 23, item 4): when a claim round sees the
game leave the node the session is relayed to (moved, or its owner died or was cut off), the
relay gives that owner up at once instead of waiting for its answer or the answer's deadline,
and the session is carried over to the new owner."""

from __future__ import annotations

from twisted.internet import defer
from twisted.internet.task import Clock

import protocol as tp
from protocol import FailCode, Frame, Version
from server.cluster.node import ClusterNode
from server.cluster.relay import decode_answer
from server.cluster.routing import ClusterSession
from server.cluster.write_outcome import frames_of
from server.config.cluster import ClusterSettings
from server.database.ownership import RUNNING, NodeInfo, Placement, Round
from server.game.directory import GameDirectory
from server.tp.errors import STORE_UNAVAILABLE_TEXT
from tests.support.deferreds import successResultOf


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


class WokenNode:
    """Node b as it wakes from a freeze: its placements still put the game `duel` here and it
    still runs it, until the claim round that `refresh` runs finds it on node a."""

    def __init__(self, moved: bool):
        self.settings = ClusterSettings("b", "127.0.0.1:6923")
        self.reactor = Clock()
        self.name = "b"
        self.moved = moved
        self.games: dict[str, object] = {"duel": object()}
        self.placements = {"duel": placement("b", 1)}

    def placement(self, name):
        return self.placements.get(name)

    def local(self, name):
        return self.games.get(name)

    def refresh(self):
        if self.moved:
            self.games.clear()
            self.placements["duel"] = placement("a", 2)
        return defer.succeed(None)

    def watch_departures(self, watcher):
        return lambda: None

    def watch_moves(self, watcher):
        return lambda: None


def create_on_woken_node(moved: bool) -> tuple[tp.Message | None, list[str]]:
    """Carol's CreateAccount at node b, handled by b's own game and refused with nothing stored
    (b lost its claim while frozen); what she is answered, and what went to node a."""
    node = WokenNode(moved)
    session = ClusterSession(node, GameDirectory(), Version.TP04, lambda data: None)
    relayed: list[str] = []

    async def route_locally(message, frame, placement):
        if moved:
            node.games.pop("duel", None)  # b's claim round let it go meanwhile
        return session._encode(
            tp.Fail(FailCode.UNAVAILABLE_TEMPORARILY, STORE_UNAVAILABLE_TEXT), frame.sequence
        )

    async def via_owner(placement, message):
        relayed.append(f"{message.username} to {placement.node}")
        return [
            Frame(Version.TP04, 0, 1, tp.Okay.TYPE, tp.encode_body(tp.Okay("Account created."), Version.TP04))
        ]

    async def account_exists(game_id, username):
        return False

    session._route_locally = route_locally  # type: ignore[method-assign]
    session._via_owner = via_owner  # type: ignore[method-assign]
    session._account_exists = account_exists  # type: ignore[method-assign]
    message = tp.CreateAccount("carol@duel", "a-password", "", "")
    frame = Frame(Version.TP04, 0, 7, message.TYPE, tp.encode_body(message, Version.TP04))
    answer = successResultOf(defer.ensureDeferred(session._route(message, frame)))
    return decode_answer(frames_of(answer)), relayed


def test_an_account_refused_because_the_game_left_the_node_is_asked_of_the_new_owner():
    """A node that wakes from a freeze handles what came meanwhile before it learns that its
    games moved: an account creation reaches the game it still runs, whose write is refused
    (the claim is gone) with nothing stored. The client is not told so: once a claim round
    shows the game elsewhere, the request goes to the new owner, and its answer is the client's
    (a TP client that does not retry would otherwise give up on a game that works)."""
    answer, relayed = create_on_woken_node(moved=True)
    assert answer == tp.Okay("Account created.")
    assert relayed == ["carol@duel to a"]


def test_an_account_refused_while_the_game_stays_is_answered_as_refused():
    """The database away, the game still this node's: the refusal is the answer, as on a
    single server (nothing was stored; the client may try again)."""
    answer, relayed = create_on_woken_node(moved=False)
    assert answer == tp.Fail(FailCode.UNAVAILABLE_TEMPORARILY, STORE_UNAVAILABLE_TEXT)
    assert relayed == []
