"""Past turns read back from the store (the web's turn pages): one turn whole, every turn's events."""

from __future__ import annotations

import pytest
from twisted.internet.task import Clock

from server.database import SyncDatabase
from server.game.game import Game
from server.model.memory_store import MemoryStore
from server.model.store import GameSetup
from server.model.timer_settings import TimerSettings
from tests.support.deferreds import successResultOf


@pytest.fixture(params=["memory", "database"])
def store(request, sqlite_url):
    if request.param == "memory":
        yield MemoryStore()
        return
    db = SyncDatabase(sqlite_url)
    db.upgrade()
    try:
        yield db
    finally:
        db.close()


def test_each_turn_reads_back_with_its_state_and_events(store):
    setup = GameSetup("history", seed=4, timer=TimerSettings(turn_length=0))
    game = Game(store.create_game(setup), setup, setup.initial_state(), store, Clock())
    for name in ("ann", "bob"):
        successResultOf(game.create_account(name, "secret-pw"))
    states = {}
    for _ in range(3):
        for player in (1, 2):
            game.finish_turn(player)
        states[game.state.turn] = game.state
    assert sorted(states) == [1, 2, 3]
    for turn, state in states.items():
        record = store.turn_record(game.id, turn)
        assert record.turn == turn and record.state == state
    assert store.turn_record(game.id, 4) is None
    events = store.turn_events(game.id)
    assert [turn for turn, _ in events] == [1, 2, 3]
    assert [turn for turn, _ in store.turn_events(game.id, after=2)] == [3]
    assert all(isinstance(e, tuple) for _, e in events)
