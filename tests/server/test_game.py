"""The game service over a memory store: accounts, orders, turns, restore, snapshots."""

from twisted.internet.task import Clock

from ruleset import OrderType, Phase
from ruleset.board import UNINHABITABLE
from ruleset.kinds import Kind, Role
from server.game.game import Game
from server.model.memory_store import MemoryStore
from server.model.refusals import Refused
from server.model.store import GameSetup
from server.model.timer_settings import TimerSettings
from server.model.writes import StoreAccount, StoreOrder, StoreTurn
from tests.support.deferreds import failureResultOf, successResultOf
from tests.support.games import new_game

result = successResultOf


def refusal(d) -> Refused:
    """The Refused a write failed with (the test fails if it did not fail so)."""
    return failureResultOf(d, Refused).value


def colonist(game, player, kind=None):
    return next(
        f.id
        for f in game.state.fleets.values()
        if f.owner == player and f.role is Role.COLONIST and (kind is None or f.kind is kind)
    )


def test_accounts_and_passwords():
    store, game = new_game()
    assert result(game.create_account("alice", "secret")) == 1
    assert refusal(game.create_account("alice", "other")).code == 2
    assert result(game.authenticate("alice", "secret")) == 1
    assert refusal(game.authenticate("alice", "wrong")).code == 1
    assert refusal(game.authenticate("nobody", "secret")).code == 1
    assert store.games[game.id].accounts[0].password_hash.startswith("scrypt$")
    for bad in ("", "a@b", " pad"):
        assert refusal(game.create_account(bad, "x")).code == 1


def test_full_game_refuses_players():
    _, game = new_game(max_players=1)
    result(game.create_account("a", "x"))
    assert refusal(game.create_account("b", "x")).code == 2


def test_an_order_is_stored_before_it_is_queued_and_modtimes_move():
    store, game = new_game()
    result(game.create_account("a", "x"))
    result(game.create_account("b", "x"))
    fleet = colonist(game, 1)
    before = game.modtime(("queue", fleet))
    published = game.snapshot
    target = game.state.board.system_id(game.state.board.cell_at(0, 0))
    kind = game.state.fleets[fleet].kind
    order_type = OrderType.COLONIZE_MINING if kind is Kind.MINING else OrderType.COLONIZE
    assert result(game.insert_order(1, fleet, -1, order_type, target)) == 0
    assert len(store.games[game.id].orders) == 1
    assert game.modtime(("queue", fleet)) > before
    # a new snapshot shows it; the one published before does not change
    assert [q.order.target for q in game.snapshot.queue(fleet)] == [target]
    assert published.queue(fleet) == () and published.modtime(("queue", fleet)) == before
    # someone else's fleet
    assert refusal(game.insert_order(2, fleet, -1, order_type, target)).code == 4
    # remove it again
    assert result(game.remove_order(1, fleet, 0)) is None
    assert game.queue(fleet) == [] and store.games[game.id].removed_orders == {1}
    assert refusal(game.remove_order(1, fleet, 0)).code == 3


def test_turn_ends_when_all_finished_and_queues_clear():
    store, game = new_game()
    result(game.create_account("a", "x"))
    result(game.create_account("b", "x"))
    announced = []
    game.subscribe(lambda snapshot: snapshot.announcement and announced.append(snapshot.announcement))
    leader = game.state.leader(1, Kind.SCIENTIST).id
    target = game.state.board.system_id(game.state.board.cell_at(11, 0))  # next to the artifact at (10, 0)
    result(game.insert_order(1, leader, -1, OrderType.MOVE, target))
    game.finish_turn(1)
    assert game.state.turn == 0 and game.waiting_for() == [2]
    game.finish_turn(2)
    assert game.state.turn == 1
    assert game.state.leader_at[leader] == game.state.board.cell_at(11, 0)
    assert game.snapshot.queues == {} and game.finished == set()
    assert [a.reason for a in announced][-2:] == [3, 1]
    subjects = [m.message.subject for m in game.snapshot.board(1)]
    assert "Move fleet order complete" in subjects and subjects[-1] == "Turn Order"
    assert len(store.games[game.id].turns) == 1


def test_restore_gives_back_the_same_game():
    store, game = new_game(seed=7)
    result(game.create_account("a", "x"))
    result(game.create_account("b", "x"))
    game.finish_turn(1)
    game.finish_turn(2)
    result(game.create_account("c", "x"))
    fleet = colonist(game, 3)
    kind = game.state.fleets[fleet].kind
    order_type = OrderType.COLONIZE_MINING if kind is Kind.MINING else OrderType.COLONIZE
    board = game.state.board
    # a target of the colonist's terrain (R7a refuses the wrong one at once)
    wanted = (lambda c: board.terrain[c] == UNINHABITABLE) if kind is Kind.MINING else (lambda c: c == 0)
    cell = next(c for c in range(board.size) if wanted(c) and c not in game.state.colonies)
    result(game.insert_order(3, fleet, -1, order_type, game.state.board.system_id(cell)))
    again = Game.restore(store.load_games()[0], store, Clock())
    assert again.state == game.state
    assert [q.order for q in again.queue(fleet)] == [q.order for q in game.queue(fleet)]
    assert [m.message for m in again.snapshot.board(1)] == [m.message for m in game.snapshot.board(1)]
    assert result(again.authenticate("c", "x")) == 3
    assert again.snapshot.modtime_serial > game.snapshot.modtime_serial
    for key in (("object", 0), ("board", 1), ("queue", fleet)):
        assert again.modtime(key) > game.modtime(key)  # clients refetch, never keep stale data


def test_nothing_happens_after_game_over():
    _, game = new_game(map_text="A.A\n")  # two artifacts: the first turn ends the game
    result(game.create_account("a", "x"))
    result(game.create_account("b", "x"))
    game.finish_turn(1)
    game.finish_turn(2)
    assert game.state.phase is Phase.OVER
    assert game.waiting_for() == []
    assert game.snapshot.board(1)[-1].message.subject == "GAME OVER!"
    assert refusal(game.create_account("c", "x")).code == 2


class SlowStore(MemoryStore):
    """A store whose writes finish only when the test says so, like a busy database thread."""

    def __init__(self):
        super().__init__()
        self.waiting = []

    def _later(self, method, *args):
        from twisted.internet import defer

        d = defer.Deferred()
        self.waiting.append((d, method, args))
        return d

    def finish_all(self):
        while self.waiting:
            d, method, args = self.waiting.pop(0)
            d.callback(method(*args))

    def write(self, game_id, write):
        """Joins, orders and turns wait for `finish_all`; the other writes are quick."""
        if any(isinstance(step, (StoreAccount, StoreOrder, StoreTurn)) for step in write.steps):
            return self._later(super().write, game_id, write)
        return super().write(game_id, write)


def slow_game():
    store = SlowStore()
    setup = GameSetup("tae", timer=TimerSettings(turn_length=0))
    game = Game(store.create_game(setup), setup, Game.initial_state(setup), store, Clock())
    return store, game


def test_concurrent_joins_get_distinct_players():
    store, game = slow_game()
    first, second = game.create_account("a", "x"), game.create_account("b", "x")
    store.finish_all()
    store.finish_all()
    assert result(first) == 1 and result(second) == 2
    assert [p.name for p in game.state.players] == ["a", "b"]


def test_a_join_during_the_end_of_turn_waits_for_the_new_state():
    store, game = slow_game()
    for name in ("a", "b"):
        d = game.create_account(name, "x")
        store.finish_all()
        result(d)
    game.finish_turn(1)
    game.finish_turn(2)
    assert game.busy  # the turn is being stored
    late = game.create_account("c", "x")
    fleet = next(f.id for f in game.state.fleets.values() if f.owner == 1 and f.role is Role.LEADER)
    order = game.insert_order(1, fleet, -1, OrderType.MOVE, game.state.board.system_id(0))
    store.finish_all()  # the turn commits, then the join and the order run on the new state
    store.finish_all()
    store.finish_all()
    assert game.state.turn == 1
    assert result(late) == 3 and game.state.player(3).name == "c"
    assert result(order) == 0 and game.queue(fleet)[0].entry.turn == 2


def test_a_finished_turn_sent_while_the_turn_ends_does_not_count_for_the_next():
    import protocol as tp
    from server.game.directory import GameDirectory
    from tests.server.wire import Wire

    store, game = slow_game()
    directory = GameDirectory()
    directory.add(game)
    wires = []
    for name in ("a", "b"):
        wire = Wire(directory)
        wire.connection.dataReceived(tp.encode(tp.Connect("x"), wire.version, 2))
        wire.connection.dataReceived(tp.encode(tp.CreateAccount(name, "pw", "", ""), wire.version, 3))
        store.finish_all()
        wire.connection.dataReceived(tp.encode(tp.Login(name, "pw"), wire.version, 4))
        wire.read()
        wires.append(wire)
    game.finish_turn(1)
    game.finish_turn(2)
    assert game.busy
    wires[0].connection.dataReceived(tp.encode(tp.FinishedTurn(), wires[0].version, 5))
    store.finish_all()
    replies = [m for m in wires[0].read() if isinstance(m, tp.Okay)]
    assert replies and game.state.turn == 1 and game.finished == set()


class FailingStore(MemoryStore):
    """A store that cannot keep turns (the database is away)."""

    def __init__(self):
        super().__init__()
        self.commits = 0

    def commit_turn(self, game_id, record):
        self.commits += 1
        raise RuntimeError("the database is away")


def test_a_closed_game_stops_retrying_a_turn_it_could_not_store():
    store = FailingStore()
    clock = Clock()
    setup = GameSetup("tae", timer=TimerSettings(turn_length=0))
    game = Game(store.create_game(setup), setup, setup.initial_state(), store, clock)
    for name in ("a", "b"):
        result(game.create_account(name, "secret-pw"))
    game.finish_turn(1)
    game.finish_turn(2)
    assert store.commits == 1 and game.busy
    clock.advance(5)
    assert store.commits == 2  # retried
    game.close()
    clock.advance(60)
    assert store.commits == 2 and not clock.getDelayedCalls()
