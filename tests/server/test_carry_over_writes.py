"""A request under way when a relayed session's game left is answered as if nothing had
happened (issue 23, item 5): a write whose answer was lost is looked up in the change records
(`server.cluster.write_outcome`) and answered as the owner would have when it is stored, sent
again when it is not; "may or may not" only while that cannot be told. A list paged through
with the old owner's key is started again at the new owner, under the client's key."""

from __future__ import annotations

from dataclasses import replace

from twisted.internet import defer
from twisted.internet.task import Clock

import protocol as tp
from protocol import Frame, Version
from ruleset import OrderType
from server.cluster.carry_over import MOVED_TEXT
from server.cluster.routing import ClusterSession
from server.cluster.write_outcome import NO_SLOT, behind, frames_of
from server.config.cluster import ClusterSettings
from server.database import DatabaseStore
from server.game.directory import GameDirectory
from server.model.changes import KINDS, ChangeRecord, MessageRemoved
from server.model.store import StoreUnavailable
from server.views.tp import catalogue
from tests.support.deferreds import failureResultOf, successResultOf

from .test_change_records import leader, playing


class Reads:
    """The node's store as the session reads it: on the test's database, or away."""

    def __init__(self, store: DatabaseStore):
        self.engine = store.engine
        self.away = False
        self.records: list[ChangeRecord] | None = None  # instead of the stored ones

    def read(self, fn, *args) -> defer.Deferred:
        if self.away:
            return defer.fail(StoreUnavailable("the database is away"))
        if self.records is not None and fn.__name__ == "thd_records":
            return defer.succeed(self.records)
        with self.engine.begin() as conn:
            return defer.succeed(fn(conn, *args))


class Node:
    def __init__(self, store: DatabaseStore):
        self.settings = ClusterSettings("a", "127.0.0.1:6923")
        self.reactor = Clock()
        self.store = Reads(store)
        self.name = "a"

    def watch_departures(self, watcher):
        return lambda: None

    def watch_moves(self, watcher):
        return lambda: None


def relayed(store, game) -> tuple[ClusterSession, list[tp.Message]]:
    """Ann's session, relayed; logged in (its ledger opened) and carried over to a new owner.
    What it sends again is kept (and answered Okay)."""
    session = ClusterSession(Node(store), GameDirectory(), Version.TP04, lambda data: None)
    session.mode, session.game_id, session.game_name = "remote", game.id, "g"
    session.credentials = ("ann", "ann-password")
    successResultOf(defer.ensureDeferred(session._open_ledger()))
    session.owner_changed = True
    sent: list[tp.Message] = []

    def handle_frame(message, frame):
        sent.append(message)
        if isinstance(message, tp.RemoveMessage):  # each slot removed, as the owner answers
            items = [tp.Sequence(len(message.slots))] + [tp.Okay("Message removed")] * len(message.slots)
            return b"".join(tp.encode(item, Version.TP04, frame.sequence) for item in items)
        return tp.encode(tp.Okay("sent again"), Version.TP04, frame.sequence)

    session.handle_frame = handle_frame  # type: ignore[method-assign]
    return session, sent


def frame_of(message: tp.Message, sequence: int = 7) -> Frame:
    return Frame(Version.TP04, 0, sequence, message.TYPE, tp.encode_body(message, Version.TP04))


def repeat(session: ClusterSession, message: tp.Message) -> list[tp.Message]:
    answer = successResultOf(defer.ensureDeferred(session._repeat(message, frame_of(message), 1)))
    return [tp.decode(frame, order_descs=catalogue.ORDER_DESCS) for frame in frames_of(answer)]


def an_insert(game) -> tuple[tp.InsertOrder, int, int]:
    fleet, target = leader(game, 1), game.state.board.system_id(0)
    return tp.InsertOrder(fleet, -1, int(OrderType.MOVE), (tp.ObjectArg(target),)), fleet, target


def test_an_insert_stored_before_its_answer_was_lost_is_answered_as_the_owner_would(store):
    game = playing(store)
    session, sent = relayed(store, game)
    insert, fleet, target = an_insert(game)
    successResultOf(game.insert_order(1, fleet, -1, int(OrderType.MOVE), target))  # the old owner stored it
    (answer,) = repeat(session, insert)
    assert isinstance(answer, tp.Order)
    assert (answer.id, answer.slot, answer.type) == (fleet, 0, OrderType.MOVE)
    assert answer.args == (tp.ObjectArg(target),) and sent == []
    # The same insert again, under way at the next move: the one stored is already told.
    assert repeat(session, insert) == [tp.Okay("sent again")] and sent == [insert]


def test_an_insert_that_is_not_stored_is_sent_again(store):
    game = playing(store)
    session, sent = relayed(store, game)
    insert, fleet, target = an_insert(game)
    assert repeat(session, insert) == [tp.Okay("sent again")] and sent == [insert]


def test_an_insert_the_client_was_told_of_is_not_taken_for_the_one_under_way(store):
    game = playing(store)
    session, sent = relayed(store, game)
    insert, fleet, target = an_insert(game)
    successResultOf(game.insert_order(1, fleet, -1, int(OrderType.MOVE), target))
    session._note_answer(insert, tp.encode(tp.Order(fleet, 0, int(OrderType.MOVE)), Version.TP04, 3))
    assert repeat(session, insert) == [tp.Okay("sent again")] and sent == [insert]


def test_a_write_that_cannot_be_looked_up_may_or_may_not_have_been_done(store):
    game = playing(store)
    session, sent = relayed(store, game)
    insert, _, _ = an_insert(game)
    session.node.store.away = True
    (answer,) = repeat(session, insert)
    assert isinstance(answer, tp.Fail) and answer.message == MOVED_TEXT and sent == []


class SlowOwner:
    """The upstream to an owner found again after the relay gave it up (it was slow, not gone):
    it answers the request sent behind the write, having carried out the write or not."""

    def __init__(self, stores_meanwhile=None):
        self.asked: list[tp.Message] = []
        self.stores_meanwhile = stores_meanwhile

    def exchange(self, frame: Frame) -> defer.Deferred:
        self.asked.append(tp.decode(frame, order_descs=catalogue.ORDER_DESCS))
        if self.stores_meanwhile is not None:
            self.stores_meanwhile()
        refused = tp.encode(tp.Fail(tp.FailCode.UNAVAILABLE_TEMPORARILY, "no such slot"), Version.TP04, 1)
        return defer.succeed(frames_of(refused))


def test_a_write_not_found_at_the_same_owner_is_looked_up_again_behind_a_refused_request(store):
    """The relay found the same owner again: the write may still land there. A request the owner
    refuses after taking the game's write lock goes first; then the records tell."""
    game = playing(store)
    insert, fleet, target = an_insert(game)
    session, sent = relayed(store, game)
    session.owner_changed = False
    owner = SlowOwner(lambda: successResultOf(game.insert_order(1, fleet, -1, int(OrderType.MOVE), target)))
    session.upstream = owner  # type: ignore[assignment]
    (answer,) = repeat(session, insert)
    assert isinstance(answer, tp.Order) and answer.id == fleet and sent == []  # it landed: stored
    assert owner.asked == [replace(insert, slot=NO_SLOT)]

    other, _ = relayed(store, game)
    other.owner_changed = False
    other.upstream = SlowOwner()  # type: ignore[assignment]
    second = replace(insert, id=leader(game, 1) + 10_000)  # never stored
    assert repeat(other, second) == [tp.Okay("sent again")]


def test_a_write_not_found_at_the_same_owner_that_cannot_be_asked_may_or_may_not_be_done(store):
    game = playing(store)
    session, sent = relayed(store, game)
    session.owner_changed = False  # and no connection to it: nothing can go behind the write
    insert, _, _ = an_insert(game)
    (answer,) = repeat(session, insert)
    assert isinstance(answer, tp.Fail) and answer.message == MOVED_TEXT and sent == []


def test_a_removal_stored_is_okay(store):
    game = playing(store)
    session, sent = relayed(store, game)
    _, fleet, target = an_insert(game)
    successResultOf(game.insert_order(1, fleet, -1, int(OrderType.MOVE), target))
    successResultOf(game.remove_order(1, fleet, 0))
    answers = repeat(session, tp.RemoveOrder(fleet, (0,)))
    assert answers == [tp.Sequence(1), tp.Okay("Order removed")] and sent == []  # as the owner answers


def test_a_removal_of_several_slots_stored_in_part_sends_the_rest_again(store):
    game = playing(store)
    session, sent = relayed(store, game)
    session.node.store.records = [ChangeRecord(game.id, 9, 0.0, MessageRemoved(1, 0))]
    answers = repeat(session, tp.RemoveMessage(1, (0, 0, 0)))
    assert answers == [tp.Sequence(3)] + [tp.Okay("Message removed")] * 3
    assert sent == [tp.RemoveMessage(1, (0, 0))]
    # The slot found stored is counted here; the rest where its answer comes (`_forward`).
    assert session.ledger is not None and session.ledger.told[(KINDS[MessageRemoved], 1)] == 1


def test_a_list_paged_with_the_old_owners_key_is_started_again_at_the_new_owner(store):
    game = playing(store)
    session, _ = relayed(store, game)
    asked: list[tp.GetObjectIDs] = []
    owner_key = {0: 1, 1: 7}  # each owner numbers its own lists

    def serve(message, frame):
        asked.append(message)
        key = owner_key[session.generation]
        if message.key not in (-1, key):
            return tp.encode(tp.Fail(tp.FailCode.FRAME, "Invalid sequence key"), Version.TP04, frame.sequence)
        ids = tuple(tp.IdModtime(i, 0) for i in range(message.start, message.start + message.amount))
        listed = tp.ObjectIDs(key, 20 - message.start - message.amount, ids)
        return tp.encode(listed, Version.TP04, frame.sequence)

    session._serve = serve  # type: ignore[method-assign]

    def listed(message) -> tp.Message:
        answer = successResultOf(defer.ensureDeferred(session._listed(message, frame_of(message))))
        return tp.decode(frames_of(answer)[0])

    first = listed(tp.GetObjectIDs(-1, 0, 10))
    assert isinstance(first, tp.ObjectIDs) and first.key == 1
    session.generation = 1  # carried over to a new owner
    second = listed(tp.GetObjectIDs(1, 10, 10))
    assert isinstance(second, tp.ObjectIDs) and second.key == 1 and second.remaining == 0
    assert [ids.ids[0].id for ids in (second,)] == [10]
    assert asked[1:] == [tp.GetObjectIDs(-1, 0, 0), tp.GetObjectIDs(7, 10, 10)]
    # A list the client starts afresh at the new owner is the new owner's, untouched.
    third = listed(tp.GetObjectIDs(-1, 0, 5))
    assert isinstance(third, tp.ObjectIDs) and third.key == 7


def test_an_account_whose_creation_answer_was_lost_is_created_when_the_second_try_finds_it(store):
    """A CreateAccount sent again after its first answer was lost is refused ("exists") when the
    first one made the account: the client is answered Okay, as the first would have been."""
    game = playing(store)
    session, _ = relayed(store, game)
    refused = tp.encode(tp.Fail(tp.FailCode.UNAVAILABLE_PERMANENTLY, "exists"), Version.TP04, 4)

    def after_all(username: str, existed: bool | None) -> tp.Message:
        create = tp.CreateAccount(f"{username}@g", "a-password", "", "")
        answer = successResultOf(
            defer.ensureDeferred(session._created_after_all(create, game.id, username, existed, refused))
        )
        return tp.decode(frames_of(answer)[0])

    assert after_all("ann", existed=False) == tp.Okay("Account created.")
    assert isinstance(after_all("ann", existed=True), tp.Fail)  # it was there before: a refusal
    assert isinstance(after_all("ann", existed=None), tp.Fail)  # not known before: the refusal stands
    assert isinstance(after_all("zed", existed=False), tp.Fail)  # not made: another refusal
    assert successResultOf(defer.ensureDeferred(session._account_exists(game.id, "ann"))) is True
    session.node.store.away = True
    assert successResultOf(defer.ensureDeferred(session._account_exists(game.id, "ann"))) is None


def test_the_request_behind_a_write_is_refused_by_the_game_and_changes_nothing(store):
    """`write_outcome.behind`: the owner refuses it inside the game's write lock (so it waits
    for the write before it) and stores nothing."""
    from server.model.refusals import Refused

    game = playing(store)
    insert, fleet, target = an_insert(game)
    successResultOf(game.insert_order(1, fleet, -1, int(OrderType.MOVE), target))
    before = successResultOf(defer.maybeDeferred(store.changes_after, game.id, 0))
    writes = {
        "insert": lambda: game.insert_order(1, fleet, NO_SLOT, int(OrderType.MOVE), target),
        "order removal": lambda: game.remove_order(1, fleet, NO_SLOT),
        "message removal": lambda: game.remove_message(1, NO_SLOT),
    }
    for name, write in writes.items():
        failure = failureResultOf(write())
        assert failure.check(Refused), name
    assert successResultOf(defer.maybeDeferred(store.changes_after, game.id, 0)) == before
    assert behind(insert) == replace(insert, slot=NO_SLOT)
    assert behind(tp.RemoveOrder(fleet, (0, 1))) == tp.RemoveOrder(fleet, (NO_SLOT,))
