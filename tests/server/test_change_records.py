"""Every write of a game stores exactly one change record, in the transaction of its rows and
its notifications (`server.model.changes`, `server.database.changes`)."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from hypothesis import given
from hypothesis import strategies as st
from twisted.internet import defer
from twisted.internet.task import Clock

from ruleset import OrderType, Role
from server.database.changes import changes
from server.game.game import Game
from server.model.changes import (
    KINDS,
    ChangeRecord,
    ClockControlled,
    DeadlineChanged,
    MessageRemoved,
    OrderGiven,
    OrderRemoved,
    PasswordChanged,
    SeatChanged,
    TurnEnded,
    TurnFinished,
    change_from,
    kind_of,
    payload_of,
)
from server.model.memory_store import MemoryStore
from server.model.store import GameSetup
from server.model.timer_settings import TimerSettings
from server.notifications import rules
from tests.support.deferreds import failureResultOf, successResultOf

START = 1_800_000_000.0
HOOK = "https://chat.example/hook"


def playing(store, channels: bool = True, **setup) -> Game:
    """A game of two players whose first turn runs (a 600 s deadline), each with a webhook
    (`channels`: a database store)."""
    clock = Clock()
    clock.advance(START)
    setup.setdefault("timer", TimerSettings(turn_length=600))
    game_setup = GameSetup("g", vacation_days_max=7, **setup)
    game_id = successResultOf(defer.maybeDeferred(store.create_game, game_setup))
    game = Game(game_id, game_setup, game_setup.initial_state(), store, clock)
    game.notify_with(rules.entries_for)
    for name in ("ann", "bob"):
        successResultOf(game.create_account(name, name + "-password"))
    for player in (1, 2) if channels else ():
        successResultOf(
            defer.maybeDeferred(store.notifications.add_channel, game_id, player, "webhook", HOOK, "json", 5)
        )
    return game


def records(store, game: Game) -> list[ChangeRecord]:
    return successResultOf(defer.maybeDeferred(store.changes_after, game.id, 0))


def leader(game: Game, player: int) -> int:
    return next(f.id for f in game.state.fleets.values() if f.owner == player and f.role is Role.LEADER)


def give_order(game: Game, player: int = 1) -> defer.Deferred:
    return game.insert_order(player, leader(game, player), -1, OrderType.MOVE, game.state.board.system_id(0))


# Each write, and the kinds of the records it stores (one, but for writes that also move the
# open turn's clock: the deadline is a write of its own when the timer moved it).
WRITES = {
    "order given": (lambda g: give_order(g), [OrderGiven]),
    "order removed": (
        lambda g: give_order(g).addCallback(lambda _: g.remove_order(1, leader(g, 1), 0)),
        None,
    ),
    "message removed": (lambda g: g.remove_message(1, 0), [MessageRemoved]),
    "turn finished": (lambda g: g.finish_turn(1), [TurnFinished]),
    "paused": (lambda g: g.pause(), [ClockControlled]),
    "resumed": (lambda g: g.pause().addCallback(lambda _: g.resume_clock()), None),
    "extended": (lambda g: g.extend(60), [ClockControlled]),
    "removed": (lambda g: g.remove_player("bob"), [SeatChanged]),
    "reinstated": (lambda g: g.remove_player("bob").addCallback(lambda _: g.reinstate_player("bob")), None),
    "vacation": (lambda g: g.start_vacation(2, 2), [SeatChanged]),
    "resigned": (lambda g: g.resign(2), [SeatChanged]),
    "password": (lambda g: g.set_password("ann", "a-new-password-1"), [PasswordChanged]),
    "joined": (lambda g: g.create_account("cid", "cid-password"), [SeatChanged]),
}


@pytest.mark.parametrize("name", sorted(WRITES))
def test_each_write_stores_one_record_of_its_kind(store, name):
    game = playing(store)
    before = records(store, game)
    write, kinds = WRITES[name]
    successResultOf(write(game))
    new = records(store, game)[len(before) :]
    if kinds is None:  # two writes: the second's record follows the first's
        assert len(new) == 2
    else:
        assert [type(r.change) for r in new] == kinds
    assert [r.sequence for r in records(store, game)] == list(range(1, len(before) + len(new) + 1))
    assert game.last_change == len(before) + len(new)


def test_the_end_of_a_turn_is_one_record_with_the_next_deadline(store):
    game = playing(store)
    successResultOf(game.finish_turn(1))
    game.clock.advance(10)
    successResultOf(game.finish_turn(2))
    last = records(store, game)[-1].change
    assert isinstance(last, TurnEnded) and last.turn == 1 and last.deadline == START + 10 + 600
    stored = successResultOf(defer.maybeDeferred(store.load_games, None, False))[0]
    assert stored.deadline == (2, START + 10 + 600)  # stored with the turn, in its transaction
    assert game.snapshot.deadline == START + 10 + 600  # the timer runs to the same deadline


def test_the_first_turn_starting_is_a_deadline_record_that_tells_the_players(store):
    game = playing(store)
    kinds = [type(r.change) for r in records(store, game)]
    assert kinds == [SeatChanged, SeatChanged, DeadlineChanged]
    started = records(store, game)[-1].change
    assert isinstance(started, DeadlineChanged) and started.turn_started and started.deadline == START + 600


def test_a_moved_deadline_is_stored_once(store):
    """The threshold timer moves the deadline when enough players finished: one record."""
    game = playing(store, timer=TimerSettings("threshold", 0, 2, 50, 30, 600))
    successResultOf(game.finish_turn(1))
    kinds = [type(r.change) for r in records(store, game)][-2:]
    assert kinds == [TurnFinished, DeadlineChanged]
    stored = successResultOf(defer.maybeDeferred(store.load_games, None, False))[0]
    assert stored.deadline == (1, START + 30)


def outbox_rows(store) -> int:
    with store.engine.connect() as conn:
        return int(conn.execute(sa.text("SELECT count(*) FROM notification_outbox")).scalar())


def fail_inserts_into(store, table: str, holding: str = ""):
    """Make inserts into `table` (those whose parameters hold `holding`) fail."""

    def fail(conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith(f"INSERT INTO {table.upper()}") and holding in str(
            parameters
        ):
            raise sa.exc.OperationalError(statement, parameters, RuntimeError("injected"))

    sa.event.listen(store.engine, "before_cursor_execute", fail)
    return lambda: sa.event.remove(store.engine, "before_cursor_execute", fail)


def test_a_failed_commit_stores_neither_the_change_nor_its_record_nor_its_notifications(store):
    game = playing(store)
    successResultOf(game.finish_turn(1))
    counted = (len(records(store, game)), outbox_rows(store))
    put_back = fail_inserts_into(store, "changes")
    failureResultOf(game.remove_player("ann"))  # would tell bob he is the last one
    assert 1 not in successResultOf(defer.maybeDeferred(store.load_games, None, False))[0].removed_players
    assert 1 not in game.removed_players
    put_back()
    put_back = fail_inserts_into(store, "changes", "turn_ended")
    successResultOf(game.finish_turn(2))  # the finish is stored; the end of the turn cannot be
    assert game.busy and game.state.turn == 0
    counted = (len(records(store, game)), outbox_rows(store))
    stored = successResultOf(defer.maybeDeferred(store.load_games, None, False))[0]
    assert stored.turns == [] and (len(records(store, game)), outbox_rows(store)) == counted
    put_back()
    game.clock.advance(10)  # the turn is stored again, with its record and its notifications
    assert game.state.turn == 1 and isinstance(records(store, game)[-1].change, TurnEnded)
    assert outbox_rows(store) == counted[1] + 2  # turn 1 started, for ann and bob


def test_a_failed_outbox_write_fails_the_whole_write(store):
    game = playing(store)
    put_back = fail_inserts_into(store, "notification_outbox")
    failureResultOf(game.finish_turn(1))  # bob would be told he is the last one
    assert records(store, game)[-1].kind == "deadline_changed" and not game.finished
    put_back()
    successResultOf(game.finish_turn(1))
    assert records(store, game)[-1].kind == "turn_finished" and game.finished == {1}


def test_the_memory_store_keeps_the_same_records():
    store = MemoryStore()
    game = playing(store, channels=False)
    successResultOf(give_order(game))
    successResultOf(game.finish_turn(1))
    successResultOf(game.finish_turn(2))
    assert [r.kind for r in store.changes_after(game.id)] == [
        "seat_changed",
        "seat_changed",
        "deadline_changed",
        "order_given",
        "turn_finished",
        "turn_finished",
        "turn_ended",
    ]
    assert sorted(e.key for e in store.outbox if e.event == "turn_started") == [
        f"{game.id}:0:turn_started:1",
        f"{game.id}:0:turn_started:2",
        f"{game.id}:1:turn_started:1",
        f"{game.id}:1:turn_started:2",
    ]
    assert [e.key for e in store.outbox if e.event == "last_one"] == [f"{game.id}:0:last_one:2"]


def test_the_records_are_in_the_changes_table(store):
    game = playing(store)
    with store.engine.connect() as conn:
        rows = conn.execute(sa.select(changes.c.sequence, changes.c.kind).where(changes.c.game_id == game.id))
        assert [tuple(r) for r in rows] == [(1, "seat_changed"), (2, "seat_changed"), (3, "deadline_changed")]


plain = st.integers(min_value=-(2**31), max_value=2**31)
CHANGES = st.one_of(
    st.builds(OrderGiven, plain, plain, plain, plain, plain, plain, plain),
    st.builds(OrderRemoved, plain, plain, plain, plain),
    st.builds(MessageRemoved, plain, plain),
    st.builds(TurnFinished, plain, plain),
    st.builds(
        TurnEnded,
        plain,
        st.sampled_from(["normal", "combat", "over"]),
        st.none() | st.floats(0, 2e9),
        st.lists(
            st.tuples(st.text(), st.none() | plain, st.none() | plain, st.none() | plain, st.text())
        ).map(tuple),
        st.lists(plain).map(tuple),
    ),
    st.builds(ClockControlled, st.text(), plain, st.floats(0, 1e9), st.text()),
    st.builds(SeatChanged, st.text(), plain, plain),
    st.builds(DeadlineChanged, plain, st.none() | st.floats(0, 2e9), st.booleans()),
    st.builds(PasswordChanged, plain),
)


@given(CHANGES)
def test_every_change_goes_through_json_and_back(change):
    import json

    payload = json.loads(json.dumps(payload_of(change)))
    assert change_from(kind_of(change), payload) == change


def test_every_kind_is_named_once():
    assert len(set(KINDS.values())) == len(KINDS)
    with pytest.raises(ValueError):
        change_from("no_such_kind", {})


def test_a_restart_keeps_the_stored_deadline_and_writes_nothing(store):
    game = playing(store)
    game.clock.advance(100)
    counted = len(records(store, game))
    game.close()
    (stored,) = successResultOf(defer.maybeDeferred(store.load_games, None, False))
    again = Game.restore(stored, store, game.clock)
    again.resume(stored.deadline)
    assert again.snapshot.deadline == START + 600  # not a fresh 600 s from the restart
    assert len(records(store, again)) == counted


def test_the_deadline_is_written_only_through_a_write_of_the_game():
    """One path stores the deadline: a `StoreDeadline` step of a game's write (the end of a
    turn, an operator's control, `server.game.records` when the timer moved it); nothing looks a
    store method up by name."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "server"
    callers, lookups = [], []
    for path in root.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(root).as_posix()
        if ".set_deadline(" in text and not name.startswith(("database/", "model/memory_store")):
            callers.append(name)
        if "getattr(self.store" in text or "getattr(store" in text:
            lookups.append(name)
    assert callers == [] and lookups == []
