"""A write whose COMMIT reaches PostgreSQL but whose answer is lost is never answered as refused.

A game on a real PostgreSQL, reached through a proxy of the test's own (`pg_proxy`), with players
on in-memory TP connections. The proxy loses the answer to one order's COMMIT (the order is
stored), or drops the COMMIT itself (it is not), or loses the answer and then lets nothing
through while the game looks. Every time, what the player is told, what the game holds in memory
and what the database stores agree: stored and looked up, the order is acknowledged; not stored,
it is refused ("nothing was changed"); not known, the player is told it may or may not have been
done, and the game settles it (applies it, since it is stored) before its next write.
"""

from __future__ import annotations

import pytest
from sqlalchemy.engine import make_url
from twisted.internet.task import Clock

import protocol as tp
from server.database import SyncDatabase
from server.game.directory import GameDirectory
from server.game.game import Game
from server.model.store import GameSetup
from server.model.timer_settings import TimerSettings
from server.tp.errors import OUTCOME_UNKNOWN_TEXT, STORE_UNAVAILABLE_TEXT
from tests.server.wire import Wire
from tests.support.games import legal_orders

from .pg_proxy import PostgresProxy
from .tp_client import TPClient

pytestmark = pytest.mark.timeout(120)

PASSWORD = "a-good-password"


@pytest.fixture
def played(pg_url):
    """(proxy, game, ann, the database read directly): one game, ann and bob logged in."""
    direct = SyncDatabase(pg_url)
    direct.upgrade()
    url = make_url(pg_url)
    proxy = PostgresProxy((url.host or "127.0.0.1", url.port or 5432))
    store = SyncDatabase(proxy.url_of(url))
    setup = GameSetup("tae", seed=7, timer=TimerSettings(turn_length=0), ctime=1_700_000_000)
    game_id = store.create_game(setup)
    game = Game(game_id, setup, setup.initial_state(), store, Clock())
    directory = GameDirectory()
    directory.add(game)
    game.start()
    ann, bob = Wire(directory), Wire(directory)
    ann.login("ann", PASSWORD)
    bob.login("bob", PASSWORD)
    try:
        yield proxy, game, ann, direct
    finally:
        game.close()
        store.close()
        proxy.close()
        direct.close()


def order_request(fleet: int, kind: int, target: int) -> tp.InsertOrder:
    return tp.InsertOrder(fleet, -1, kind, TPClient.order_args(kind, target))


def stored_orders(db: SyncDatabase, game: Game) -> list[tuple[int, int]]:
    stored = db.load_games([game.id])[0]
    return sorted((o.object_id, o.target) for o in stored.orders if o.seq not in stored.removed_orders)


def held_orders(game: Game) -> list[tuple[int, int]]:
    return sorted((o.fleet, o.target) for o in game.orders_of(1))


def test_a_stored_order_whose_commit_answer_was_lost_is_acknowledged(played):
    proxy, game, ann, db = played
    fleet, kind, target = legal_orders(game, 1)[0]
    proxy.lose_commit_answer()
    answer = ann.one(order_request(fleet, kind, target))
    assert proxy.commits_faulted == 1
    assert isinstance(answer, tp.Order), answer
    assert stored_orders(db, game) == held_orders(game) == [(fleet, target)]


def test_an_order_whose_commit_never_arrived_is_refused_and_not_stored(played):
    proxy, game, ann, db = played
    fleet, kind, target = legal_orders(game, 1)[0]
    proxy.drop_commit()
    answer = ann.one(order_request(fleet, kind, target))
    assert proxy.commits_faulted == 1
    assert isinstance(answer, tp.Fail) and (answer.code, answer.message) == (3, STORE_UNAVAILABLE_TEXT)
    assert stored_orders(db, game) == held_orders(game) == []
    assert isinstance(ann.one(order_request(fleet, kind, target)), tp.Order)
    assert stored_orders(db, game) == held_orders(game) == [(fleet, target)]


def test_an_order_that_cannot_be_looked_up_may_or_may_not_be_done_and_is_settled_next(played):
    proxy, game, ann, db = played
    (fleet, kind, target), (fleet2, kind2, target2) = legal_orders(game, 1)[:2]
    proxy.lose_commit_answer(then_down=True)
    answer = ann.one(order_request(fleet, kind, target))
    assert proxy.commits_faulted == 1
    assert isinstance(answer, tp.Fail) and (answer.code, answer.message) == (3, OUTCOME_UNKNOWN_TEXT)
    assert stored_orders(db, game) == [(fleet, target)]  # PostgreSQL has it; the game does not know
    assert held_orders(game) == []
    refused = ann.one(order_request(fleet2, kind2, target2))  # the database is still away
    assert isinstance(refused, tp.Fail) and (refused.code, refused.message) == (3, STORE_UNAVAILABLE_TEXT)
    assert held_orders(game) == []

    proxy.up()
    assert isinstance(ann.one(order_request(fleet2, kind2, target2)), tp.Order)
    assert stored_orders(db, game) == held_orders(game) == sorted([(fleet, target), (fleet2, target2)])
    assert isinstance(ann.one(tp.FinishedTurn()), tp.Okay)
