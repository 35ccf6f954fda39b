"""A game closed while its turn is ending lets go of everything that waited for that turn, and a
cluster node's handover never waits for a game forever (issue 23, item 2: a handover waited on
`game.ready()` while the end of a turn was being stored; the node then lost its claims, the
game was closed, the wait was never released, and the game stayed in `ClusterNode.leaving`:
the node never loaded it again while the database kept giving it to that node)."""

from __future__ import annotations

from types import SimpleNamespace

from twisted.internet import defer
from twisted.internet.task import Clock

from server.cluster.node import ClusterNode
from server.config.cluster import ClusterSettings
from server.database.ownership import ClaimLost
from server.game.directory import GameDirectory
from server.game.game import Game
from server.game.records import GameLeft
from server.model.store import StoreUnavailable
from server.model.timer_settings import TimerSettings
from tests.support.games import legal_orders, new_game
from tests.support.stores import hold_turns


def playing(clock: Clock, turn_length: int = 0):
    store, game = new_game(clock=clock, timer=TimerSettings(turn_length=turn_length))
    for name in ("ann", "bob"):
        game.create_account(name, "a-good-password")
    game.start()
    return store, game


def fired(d: defer.Deferred) -> list:
    out: list = []
    d.addBoth(out.append)
    return out


def test_closing_a_game_whose_turn_is_being_stored_again_releases_its_waiters():
    clock = Clock()
    store, game = playing(clock)
    hold_turns(store, lambda: defer.fail(StoreUnavailable("the database is away")))
    ended = fired(game.end_turn())
    assert game.busy and not ended  # the turn is stored again every few seconds
    waiting = fired(game.ready())
    game.close()
    assert ended == [None] and waiting == [None]
    assert not game.busy and not game._lock.locked
    clock.advance(60)
    assert game.state.turn == 0  # nothing more is stored here: the next owner resolves the turn


def test_a_turn_whose_commit_is_refused_after_the_game_closed_releases_its_waiters():
    clock = Clock()
    store, game = playing(clock)
    commit: defer.Deferred = defer.Deferred()
    hold_turns(store, lambda: commit)
    ended = fired(game.end_turn())
    game.close()
    assert not ended
    commit.errback(ClaimLost("game 1 is run by another node"))
    assert ended == [None] and not game._lock.locked and not game.busy


def test_a_turn_stored_as_the_game_closes_is_applied_without_starting_a_clock():
    clock = Clock()
    store, game = playing(clock, turn_length=60)
    commit: defer.Deferred = defer.Deferred()
    hold_turns(store, lambda: commit)
    ended = fired(game.end_turn())
    game.close()
    commit.callback(1)  # the commit made it (this node still held the claim then)
    assert ended == [None] and game.state.turn == 1 and not game._lock.locked
    assert not clock.getDelayedCalls()


# -- a cluster node's handover ----------------------------------------------------------------


class ClaimConnectionAnswering:
    """The claim connection, as far as a handover uses it: the new owner's epoch."""

    def __init__(self):
        self.calls: list = []

    def run(self, fn, *args):
        self.calls.append(fn.__name__)
        return defer.succeed(2)


def node_running(game: Game, clock: Clock, handover_timeout: float = 20.0) -> ClusterNode:
    settings = ClusterSettings("a", "127.0.0.1:6923", handover_timeout=handover_timeout)
    store = SimpleNamespace(claims={game.id: 1}, forget=lambda gid: store.claims.pop(gid, None))
    directory = GameDirectory()
    directory.add(game)
    node = ClusterNode(settings, "postgresql://unused", store, directory, clock)  # type: ignore[arg-type]
    node.claims = ClaimConnectionAnswering()  # type: ignore[assignment]
    node.node_id = 1
    return node


TARGET = SimpleNamespace(id=2, name="b", advertise="127.0.0.1:6924")


def test_a_handover_waiting_for_a_turn_ends_when_the_node_loses_the_game():
    clock = Clock()
    store, game = playing(clock)
    commit: defer.Deferred = defer.Deferred()
    hold_turns(store, lambda: commit)
    game.end_turn()
    node = node_running(game, clock)
    moved = fired(defer.ensureDeferred(node._hand_over(game, TARGET)))  # type: ignore[arg-type]
    assert game.id in node.leaving and not moved
    commit.errback(ClaimLost("game 1 is run by another node"))  # the turn is tried again later
    node._drop(game, "this node lost its claims")  # the claim connection broke
    clock.advance(0)
    assert moved == [False], "the handover finished: the game left another way"
    assert game.id not in node.leaving and node.claims.calls == []  # type: ignore[union-attr]


def test_a_handover_waits_for_a_hung_turn_at_most_the_handover_timeout():
    clock = Clock()
    store, game = playing(clock)
    hold_turns(store, defer.Deferred)  # the turn's commit never answers
    game.end_turn()
    node = node_running(game, clock, handover_timeout=5)
    moved = fired(defer.ensureDeferred(node._hand_over(game, TARGET)))  # type: ignore[arg-type]
    clock.advance(4.9)
    assert not moved and game.id in node.leaving
    clock.advance(0.2)
    clock.advance(0)
    assert moved == [True] and game.id not in node.leaving
    assert node.claims.calls == ["thd_hand_over"] and game.closed  # type: ignore[union-attr]


class ClaimConnectionOfALostClaim:
    """The claim connection when another node took the game: the hand-over finds no claim."""

    def run(self, fn, *args):
        return defer.fail(ClaimLost("game 1 is not run by this node any more"))


def moving_node(game: Game, clock: Clock, now_on: str | None) -> ClusterNode:
    """A node running `game`, asked to move it to node b; the database says it runs on `now_on`
    once the hand-over finds its claim gone."""
    from server.database import ownership
    from server.database.ownership import Placement

    node = node_running(game, clock)
    node.claims = ClaimConnectionOfALostClaim()  # type: ignore[assignment]
    b = SimpleNamespace(id=2, name="b", advertise="127.0.0.1:6924", alive=True, state=ownership.RUNNING)
    node.nodes = {"b": b}  # type: ignore[dict-item]

    async def refresh() -> None:
        node.by_id[game.id] = Placement(game.id, "tae", None, now_on, None, 2, 0, True)

    node.refresh = refresh  # type: ignore[method-assign]
    return node


def test_move_game_says_where_the_game_went_when_its_claim_was_lost_on_the_way():
    """`move-game` reported "moved to node b" when the claim was taken meanwhile (CI: the game
    then ran nowhere for a moment, and `tae-server nodes` disagreed with the report)."""
    from server.operating.game_actions import OperationError

    for now_on, expected in ((None, "runs on no node yet: not moved"), ("c", "runs on node 'c': not moved")):
        clock = Clock()
        _, game = playing(clock)
        node = moving_node(game, clock, now_on)
        answer = fired(defer.ensureDeferred(node.move_game(game, "b")))
        clock.advance(0)
        assert len(answer) == 1 and answer[0].check(OperationError), answer
        assert expected in str(answer[0].value) and "left node 'a' meanwhile" in str(answer[0].value)
        assert game.closed and game.id not in node.leaving


def test_move_game_of_a_game_a_rebalancing_round_hands_to_the_same_node_reports_the_move():
    clock = Clock()
    _, game = playing(clock)
    node = moving_node(game, clock, "b")
    rebalancing: defer.Deferred = defer.Deferred()
    node.leaving[game.id] = rebalancing
    answer = fired(defer.ensureDeferred(node.move_game(game, "b")))
    assert not answer, "it waits for the hand-over under way"
    rebalancing.callback(None)
    assert answer == ["game 'tae' moved from node 'a' to node 'b'"]


class PendingRequests:
    """The operator requests table as the desk uses it: one pending request, whose marking as
    done waits for the test."""

    def __init__(self, request):
        self.request = request
        self.finishing: defer.Deferred = defer.Deferred()
        self.finished: list = []

    def pending(self, game_ids=None):
        return defer.succeed([self.request] if not self.finished else [])

    def finish(self, request_id, status, result, game_id=None):
        self.finished.append((request_id, status))
        return self.finishing


def test_a_hand_over_waits_until_an_operator_request_carried_out_is_marked_done():
    """Else the new owner finds it still pending and carries it out again (CI: an admin's
    `add-player` answered "An account with that name already exists" after adding the player)."""
    from server.database.operator_requests import OperatorRequest
    from server.operating.desk import OperatorDesk

    clock = Clock()
    store, game = playing(clock)
    node = node_running(game, clock)
    requests = PendingRequests(OperatorRequest(1, game.id, "pause", {}))
    store.requests = requests  # type: ignore[assignment]
    desk = OperatorDesk(store, node.directory, clock, cluster=node)
    polled = fired(defer.ensureDeferred(desk._poll()))
    assert requests.finished == [(1, "done")] and not polled  # carried out; being marked done
    moved = fired(defer.ensureDeferred(node._hand_over(game, TARGET)))  # type: ignore[arg-type]
    clock.advance(1)
    assert not moved and node.claims.calls == []  # type: ignore[union-attr]
    requests.finishing.callback(None)
    clock.advance(0)
    assert polled == [None] and moved == [True]
    assert node.claims.calls == ["thd_hand_over"]  # type: ignore[union-attr]


def test_the_desk_leaves_the_requests_of_a_game_being_handed_over_to_its_new_owner():
    from server.database.operator_requests import OperatorRequest
    from server.operating.desk import OperatorDesk

    clock = Clock()
    store, game = playing(clock)
    node = node_running(game, clock)
    requests = PendingRequests(OperatorRequest(1, game.id, "pause", {}))
    store.requests = requests  # type: ignore[assignment]
    node.leaving[game.id] = defer.Deferred()
    desk = OperatorDesk(store, node.directory, clock, cluster=node)
    assert fired(defer.ensureDeferred(desk._poll())) == [None]
    assert requests.finished == [] and not game.snapshot.paused


# -- a closed game writes nothing -------------------------------------------------------------


def test_a_closed_game_writes_nothing_even_when_its_node_holds_the_claim_again():
    """A session still holding a game that left its node (and came back as a new Game object)
    must not write with the claim the node holds again: found by the chaos run, where such a
    session stored orders and finished flags of turn 1 into a game at turn 3."""
    clock = Clock()
    store, game = playing(clock)
    fleet, kind, target = legal_orders(game, 1)[0]
    game.close()
    records = len(store.changes.get(game.id, []))
    answers = fired(game.insert_order(1, fleet, -1, kind, target))
    assert len(answers) == 1 and answers[0].check(GameLeft) and answers[0].check(StoreUnavailable)
    finished = fired(game.finish_turn(1))
    assert len(store.changes.get(game.id, [])) == records
    assert game.orders_of(1) == [] and (finished == [None] or finished[0].check(StoreUnavailable))


class LocalSessionOfAGameThatLeft:
    """A TP session whose login succeeded on a game closed meanwhile."""

    def __init__(self, game: Game):
        self.state = None
        self.game = None
        self.left = False
        self._game = game

    def handle(self, message, sequence):
        from server.tp.session import State

        self.state, self.game = State.PLAYING, self._game
        return b""

    def connection_lost(self) -> None:
        self.left = True


def test_a_session_carried_over_does_not_stay_with_a_game_that_left_during_its_login():
    from server.cluster.carry_over import CarryOver

    clock = Clock()
    _, game = playing(clock)
    game.close()  # handed over while the password was being checked
    local = LocalSessionOfAGameThatLeft(game)
    session = CarryOver()
    session.credentials, session.game_name, session.client = ("ann", "a-good-password"), "tae", "test"
    session._make_local = lambda: local  # type: ignore[assignment,return-value]
    session.node = SimpleNamespace(local=lambda name: None)
    verdict = fired(defer.ensureDeferred(session._log_in_locally()))
    assert verdict == [None], "look for the game's owner again"
    assert local.left and getattr(session, "mode", None) != "local"
