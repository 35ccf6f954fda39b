"""The stand-in's level on the server (`server.game.stand_in`, the `[stand_in]` settings): the
computer player at the configured level gives an absent seat's orders; `hard` thinks in a pool
from the turn's opening and an end of turn waits for it at most `hard_wait` seconds."""

from __future__ import annotations

from concurrent.futures import Future

import pytest
from twisted.internet.task import Clock

from ruleset import Kind, Order, OrderType, check_order
from ruleset.ai import Level, ai_rng, decide
from ruleset.seat import seat_view
from server.config.errors import ConfigError
from server.config.file import load_config
from server.game.directory import GameDirectory
from server.game.stand_in import StandInPlayer
from server.model.stand_in import StandInSettings
from tests.support.deferreds import successResultOf

from .test_accounts_and_config import write
from .test_attendance import four_players, play_turn_without


class HeldExecutor:
    """A pool whose searches finish when the test says so."""

    def __init__(self):
        self.submitted: list[tuple[Future, tuple]] = []

    def submit(self, fn, *args):
        future: Future = Future()
        future.set_running_or_notify_cancel()
        self.submitted.append((future, (fn, args)))
        return future

    def run(self, index: int = -1) -> None:
        future, (fn, args) = self.submitted[index]
        future.set_result(fn(*args))


def direct(f, *args):
    return f(*args)


def test_the_stand_in_level_is_a_setting(tmp_path):
    text = '[stand_in]\nlevel = "hard"\nhard_budget = 50\nhard_wait = 1.5\nhard_seconds = 0.5\n'
    config = load_config(write(tmp_path, text))
    assert config.stand_in == StandInSettings(Level.HARD, 50, 1.5, 0.5)
    default = load_config(None).stand_in
    assert default == StandInSettings(Level.NORMAL)
    assert (default.hard_budget, default.hard_seconds) == (100, 0.9)


@pytest.mark.parametrize(
    "text, words",
    [
        ('[stand_in]\nlevel = "expert"\n', "stand_in.level: unknown AI level 'expert'"),
        ("[stand_in]\nhard_budget = 0\n", "stand_in.hard_budget"),
        ("[stand_in]\nhard_wait = 600\n", "stand_in.hard_wait"),
        ("[stand_in]\nhard_seconds = 0\n", "stand_in.hard_seconds: expected 0.05 to 60 seconds"),
        ("[stand_in]\nthinking = 1\n", "thinking"),
    ],
)
def test_a_bad_stand_in_setting_is_named(tmp_path, text, words):
    with pytest.raises(ConfigError, match=words):
        load_config(write(tmp_path, text))


def test_a_cluster_node_plays_the_stand_in_at_the_configured_level(tmp_path, monkeypatch):
    """Every node builds its games' directory with the `[stand_in]` settings (it used to make a
    directory of its own, at `normal`, whatever the file said)."""
    from twisted.internet import defer

    from server.cluster.node import ClusterNode
    from server.cluster.start import join_cluster

    text = (
        '[stand_in]\nlevel = "hard"\nhard_budget = 30\n'
        '[cluster]\nnode = "node-a"\nadvertise = "127.0.0.1:6923"\n'
    )
    config = load_config(write(tmp_path, text))

    async def joined(node, default_setup=None) -> None:  # no database: the node's own tests join
        return None

    monkeypatch.setattr(ClusterNode, "join", joined)

    class Store:
        on_lost = None

    node = successResultOf(defer.ensureDeferred(join_cluster(config, Store(), Clock(), None)))
    assert node.directory.stand_in.settings == StandInSettings(Level.HARD, 30)
    assert node.desk.directory is node.directory


class Recording(StandInPlayer):
    """The stand-in player, remembering the orders it gave."""

    def __init__(self, settings):
        super().__init__(settings)
        self.given: list[tuple] = []

    def orders(self, seed, state, player, accepted, clock, level=None):
        return super().orders(seed, state, player, accepted, clock, level).addCallback(self._keep)

    def _keep(self, orders):
        self.given.append(orders)
        return orders


@pytest.mark.parametrize("level", [Level.EASY, Level.NORMAL])
def test_the_directory_gives_every_game_its_stand_in_and_the_seat_gets_that_levels_orders(level):
    clock = Clock()
    _, game = four_players(clock, absent_after_missed_turns=1)
    directory = GameDirectory(stand_in=Recording(StandInSettings(level)))
    directory.add(game)
    assert game.stand_in is directory.stand_in
    play_turn_without(game, clock, 2)  # bob is absent from now on
    state = game.state
    expected = decide(seat_view(state, 2), level, ai_rng(17, state.turn + 1, 2))
    play_turn_without(game, clock, 2)
    assert expected and directory.stand_in.given == [expected]
    for order in expected:  # given, checked and played: the fleets took their orders
        assert order.fleet not in game.state.fleets or order.type == 2


def test_hard_waits_at_most_its_bound_then_plays_normal():
    clock = Clock()
    _, game = four_players(clock, absent_after_missed_turns=1)
    pool = HeldExecutor()
    player = StandInPlayer(StandInSettings(Level.HARD, 10, 2.0), executor=pool, call_from_thread=direct)
    state = game.state
    waits = Clock()
    d = player.orders(17, state, 2, (), waits)
    assert not d.called and len(pool.submitted) == 1
    waits.advance(1.9)
    assert not d.called
    waits.advance(0.1)
    normal = decide(seat_view(state, 2), Level.NORMAL, ai_rng(17, state.turn + 1, 2))
    assert successResultOf(d) == normal
    assert not waits.getDelayedCalls()


def test_hard_searches_from_the_turns_opening_and_the_end_takes_the_answer():
    clock = Clock()
    _, game = four_players(clock, absent_after_missed_turns=1)
    pool = HeldExecutor()
    player = StandInPlayer(StandInSettings(Level.HARD, 4, 2.0), executor=pool, call_from_thread=direct)
    state = game.state
    player.open_turn(17, state, [2, 3], Clock())
    assert len(pool.submitted) == 2
    pool.run(0)  # bob's search is done before the turn ends
    waits = Clock()
    d = player.orders(17, state, 2, (), waits)
    assert len(pool.submitted) == 2  # no new search: the one from the opening is used
    orders = successResultOf(d)
    accepted = []
    for order in orders:
        assert check_order(state, order, accepted) is None
        accepted.append(order)
    assert not waits.getDelayedCalls()


def test_a_search_for_another_seat_is_not_used():
    clock = Clock()
    _, game = four_players(clock, absent_after_missed_turns=1)
    pool = HeldExecutor()
    player = StandInPlayer(StandInSettings(Level.HARD, 4, 2.0), executor=pool, call_from_thread=direct)
    state = game.state
    player.open_turn(17, state, [2], Clock())
    mine = next(iter(state.hand(2)))
    target = next(state.board.system_id(c) for c in range(state.board.size) if c not in state.colonies)
    kind = OrderType.COLONIZE_MINING if mine.kind is Kind.MINING else OrderType.COLONIZE
    given = [Order(2, mine.id, int(kind), target)]
    d = player.orders(17, state, 2, given, clock)  # bob gave an order meanwhile: a new search
    assert len(pool.submitted) == 2 and pool.submitted[0][0].cancelled() is False
    pool.run(-1)
    assert successResultOf(d) is not None


def test_a_failed_search_gives_normals_orders():
    clock = Clock()
    _, game = four_players(clock, absent_after_missed_turns=1)
    pool = HeldExecutor()
    player = StandInPlayer(StandInSettings(Level.HARD, 4, 2.0), executor=pool, call_from_thread=direct)
    state = game.state
    d = player.orders(17, state, 3, (), Clock())
    pool.submitted[-1][0].set_exception(RuntimeError("a worker died"))
    assert successResultOf(d) == decide(seat_view(state, 3), Level.NORMAL, ai_rng(17, state.turn + 1, 3))
    assert not player.searching()


def test_the_real_pool_searches_in_other_processes_and_stops_when_told():
    """The pool the server uses: fresh processes, an answer the rules accept, and a search that
    stops at once when its stop flag rises (a budget it could not finish in a minute)."""
    clock = Clock()
    _, game = four_players(clock, absent_after_missed_turns=1)
    state = game.state
    player = StandInPlayer(StandInSettings(Level.HARD, 1_000_000, 2.0), call_from_thread=direct)
    try:
        player.open_turn(17, state, [2], Clock())
        assert player.searching()
        ((_, _, (future, slot)),) = player._searches.values()
        player._stop(slot)
        orders = future.result(timeout=60)
        accepted: list[Order] = []
        for order in orders:
            assert order.player == 2 and check_order(state, order, accepted) is None
            accepted.append(order)
        assert not player.searching()
    finally:
        player.close()


def test_a_search_is_told_to_stop_hard_seconds_after_it_was_asked_for():
    """The time bound of a hard decision (`hard_seconds`) is the reactor's: it raises the search's
    stop flag then (the workers read no clock); a search that answered in time keeps its flag."""
    from server.game.stand_in import STOP_SLOTS

    _, game = four_players(Clock())
    clock = Clock()  # the reactor's, as the stand-in's searches see it
    pool = HeldExecutor()
    player = StandInPlayer(StandInSettings(Level.HARD, 4, 2.0, 0.5), executor=pool, call_from_thread=direct)
    player._flags = [0] * STOP_SLOTS  # the shared flags a pool of its own makes (`_pool`)
    player.open_turn(17, game.state, [2, 3], clock)
    (first, (_, first_args)), (_, (_, second_args)) = pool.submitted
    first_slot, second_slot = first_args[-1], second_args[-1]
    pool.run(0)  # seat 2's search answered at once
    clock.advance(0.49)
    assert player._flags[second_slot] == 0
    clock.advance(0.01)
    assert player._flags[second_slot] == 1  # seat 3's is told to stop, with its best so far
    assert player._flags[first_slot] == 0 and first.done()
    assert not clock.getDelayedCalls()
