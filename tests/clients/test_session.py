"""The sans-IO ClientSession against scripted server bytes (built with protocol.encode)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clients.errors import (
    ConnectionClosed,
    MalformedReply,
    RequestFailed,
    StreamBroken,
    UnexpectedReply,
    VersionRejected,
)
from clients.session import (
    AsyncReceived,
    ClientSession,
    ConnectionFailed,
    ReplyReceived,
    Undecodable,
    UnsolicitedFrame,
)
from protocol import (
    Connect,
    Deframer,
    Fail,
    FailCode,
    FinishedTurn,
    Game,
    GetGames,
    GetObjectDesc,
    GetObjectIDs,
    GetObjectsByID,
    GetOrder,
    GetOrderDesc,
    GetPlayer,
    GetTimeRemaining,
    InsertOrder,
    Login,
    ObjectArg,
    ObjectIDs,
    Okay,
    Order,
    Player,
    Reference,
    ReferenceType,
    Sequence,
    TimeRemaining,
    Version,
    decode,
    encode,
    encode_reply,
)
from tests.protocol.tae import FLEET, OBJECT_DESCS, ORDER_DESCS, fleet, planet, star_system

TP03, TP04 = Version.TP03, Version.TP04


def frames_of(data: bytes, **descs):
    """Decode bytes the session sent (client frames)."""
    return [decode(f, **descs) for f in Deframer().frames(data)]


def feed(session: ClientSession, data: bytes, chunk: int | None = None):
    events = []
    if chunk is None:
        return session.receive_data(data)
    for start in range(0, len(data), chunk):
        events.extend(session.receive_data(data[start : start + chunk]))
    return events


def replies(events):
    return [e.request for e in events if isinstance(e, ReplyReceived)]


# ------------------------------------------------------------------------------------------------
# Sequence numbers and sending
# ------------------------------------------------------------------------------------------------


def test_sequence_numbers_start_at_one_and_increase():
    session = ClientSession(TP04)
    requests = [session.send(GetTimeRemaining()) for _ in range(3)]
    assert [r.sequence for r in requests] == [1, 2, 3]
    sent = list(Deframer().frames(session.data_to_send()))
    assert [f.sequence for f in sent] == [1, 2, 3]
    assert session.data_to_send() == b""


def test_sequence_numbers_wrap_around_and_skip_zero_and_waiting_ones():
    session = ClientSession(TP03, first_sequence=0xFFFFFFFF)
    first = session.send(GetTimeRemaining())
    second = session.send(GetTimeRemaining())
    assert (first.sequence, second.sequence) == (0xFFFFFFFF, 1)
    session.data_to_send()
    session = ClientSession(TP03)
    waiting = session.send(GetTimeRemaining(), sequence=2)
    assert session.send(GetTimeRemaining()).sequence == 1
    assert session.send(GetTimeRemaining()).sequence == 3
    assert waiting.sequence == 2
    with pytest.raises(ValueError):
        session.send(GetTimeRemaining(), sequence=2)


def test_only_requests_the_version_has_can_be_sent():
    with pytest.raises(ValueError):
        ClientSession(TP03).send(GetGames())  # frame 65 does not exist in TP03
    with pytest.raises(ValueError):
        ClientSession(TP04).send(Okay("not a request"))


# ------------------------------------------------------------------------------------------------
# Single replies, Fails, Sequence + N
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [TP03, TP04])
def test_single_reply(version):
    session = ClientSession(version)
    request = session.send(Login("alice", "secret"))
    assert not request.done
    events = feed(session, encode(Okay("Welcome"), version, request.sequence))
    assert replies(events) == [request]
    assert request.result() == Okay("Welcome")
    assert session.pending == {}


def test_a_fail_answers_the_whole_request():
    session = ClientSession(TP04)
    request = session.send(Login("alice", "wrong"))
    fail = Fail(FailCode.FRAME, "Login Error - bad username or password", ((7, 3),))
    feed(session, encode(fail, TP04, request.sequence))
    with pytest.raises(RequestFailed) as caught:
        request.result()
    assert caught.value.code == FailCode.FRAME
    assert caught.value.fail.references == (Reference(ReferenceType.PLAYER, 3),)
    assert caught.value.request == Login("alice", "wrong")


def test_sequence_and_items_with_per_item_fails():
    session = ClientSession(TP03)
    request = session.send(GetPlayer((1, 2, 9)))
    items = [
        Player(1, "alice", "Human"),
        Player(2, "bob", "Human"),
        Fail(FailCode.NO_SUCH_THING, "No such player"),
    ]
    events = feed(session, encode_reply(items, TP03, request.sequence), chunk=5)
    assert replies(events) == [request]
    assert request.result() == tuple(items)


def test_empty_sequence_and_lone_item_for_a_list_request():
    session = ClientSession(TP04)
    empty = session.send(GetPlayer((5,)))
    lone = session.send(GetPlayer((1,)))
    feed(session, encode(Sequence(0), TP04, empty.sequence))
    feed(session, encode(Player(1, "alice", "Human", 4), TP04, lone.sequence))
    assert empty.result() == ()
    assert lone.result() == (Player(1, "alice", "Human", 4),)


def test_single_request_accepts_a_sequence_of_one():
    session = ClientSession(TP04, order_descs=ORDER_DESCS)
    request = session.send(InsertOrder(7, -1, 2, (ObjectArg(12),)))
    order = Order(7, 0, 2, (ObjectArg(12),), 1)
    feed(session, encode_reply([order], TP04, request.sequence))
    assert request.result() == order


def test_insert_order_is_answered_by_okay_in_tp03_and_by_order_in_tp04():
    order = Order(7, 0, 2, (ObjectArg(12),), 1)
    tp03 = ClientSession(TP03, order_descs=ORDER_DESCS)
    request = tp03.send(InsertOrder(42, -1, 2, (ObjectArg(12),)))
    feed(tp03, encode(Order(42, 0, 2, (ObjectArg(12),)), TP03, request.sequence))
    with pytest.raises(UnexpectedReply):
        request.result()
    request = tp03.send(InsertOrder(42, -1, 2, (ObjectArg(12),)))
    feed(tp03, encode(Okay("Order Added"), TP03, request.sequence))
    assert request.result() == Okay("Order Added")
    tp04 = ClientSession(TP04, order_descs=ORDER_DESCS)
    request = tp04.send(InsertOrder(7, -1, 2, (ObjectArg(12),)))
    feed(tp04, encode(order, TP04, request.sequence))
    assert request.result() == order


def test_unexpected_item_type_is_an_error():
    session = ClientSession(TP04)
    request = session.send(GetPlayer((1,)))
    feed(session, encode_reply([Okay("what?")], TP04, request.sequence))
    with pytest.raises(UnexpectedReply):
        request.result()


def test_game_reply_without_sequence():
    session = ClientSession(TP04)
    request = session.send(GetGames())
    game = Game("g", "", ("0.4",), "1", "fake", "TaE", "0.01", (), (), "", 99)
    feed(session, encode(game, TP04, request.sequence))
    assert request.result() == (game,)


# ------------------------------------------------------------------------------------------------
# Pipelining and interleaving
# ------------------------------------------------------------------------------------------------


def test_interleaved_replies_to_pipelined_requests():
    session = ClientSession(TP03)
    players = session.send(GetPlayer((1, 2)))
    ids = session.send(GetObjectIDs(-1, 0, 0))
    time = session.send(GetTimeRemaining())
    s1, s2, s3 = players.sequence, ids.sequence, time.sequence
    stream = b"".join(
        [
            encode(Sequence(2), TP03, s1),
            encode(TimeRemaining(30), TP03, s3),  # answers arrive out of order,
            encode(Player(1, "alice", "Human"), TP03, s1),
            encode(TimeRemaining(0), TP03, 0),  # with a push in between
            encode(ObjectIDs(5, 3, ()), TP03, s2),
            encode(Player(2, "bob", "Human"), TP03, s1),
        ]
    )
    events = feed(session, stream, chunk=3)
    assert replies(events) == [time, ids, players]
    assert [e.message for e in events if isinstance(e, AsyncReceived)] == [TimeRemaining(0)]
    assert time.result() == TimeRemaining(30)
    assert ids.result() == ObjectIDs(5, 3, ())
    assert [p.name for p in players.result()] == ["alice", "bob"]


@settings(max_examples=40, deadline=None)
@given(cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=12))
def test_any_chunking_gives_the_same_answers(cuts):
    session = ClientSession(TP04, object_descs=OBJECT_DESCS)
    objects = session.send(GetObjectsByID((100, 101, 102)))
    time = session.send(GetTimeRemaining())
    items = [star_system(100, 101), planet(101, 100), Fail(4, "No such object")]
    stream = (
        encode_reply(items, TP04, objects.sequence)
        + encode(TimeRemaining(0, 3, 4, "", ()), TP04, 0)
        + encode(TimeRemaining(12, 0, 4, "", (1, 2)), TP04, time.sequence)
    )
    events, start = [], 0
    for cut in sorted(c % (len(stream) + 1) for c in cuts) + [len(stream)]:
        events.extend(session.receive_data(stream[start:cut]))
        start = max(start, cut)
    assert objects.result() == tuple(items)
    assert time.result() == TimeRemaining(12, 0, 4, "", (1, 2))
    assert [type(e) for e in events] == [ReplyReceived, AsyncReceived, ReplyReceived]


def test_unsolicited_frames_are_reported_not_matched():
    session = ClientSession(TP04)
    request = session.send(GetTimeRemaining())
    events = feed(session, encode(Okay("stray"), TP04, 77))
    assert isinstance(events[0], UnsolicitedFrame) and events[0].message == Okay("stray")
    assert not request.done


def test_connect_accepts_a_sequence_zero_answer():
    session = ClientSession(TP03)
    request = session.send(Connect("me"))
    feed(session, encode(Okay("hello"), TP03, 0))
    assert request.result() == Okay("hello")


# ------------------------------------------------------------------------------------------------
# Malformed frames (tpserver-cpp's TP03 Player carries 8 extra bytes, Appendix A.1)
# ------------------------------------------------------------------------------------------------


def _tp03_player_with_modtime(sequence: int) -> bytes:
    """A TP03 header on a TP04 Player body (which ends with the 8-byte modtime)."""
    return b"TP03" + encode(Player(1, "alice", "Human", 9), TP04, sequence)[4:]


def test_a_malformed_lone_reply_fails_only_its_request():
    session = ClientSession(TP03)
    request = session.send(GetPlayer((0,)))
    other = session.send(GetTimeRemaining())
    events = feed(
        session, _tp03_player_with_modtime(request.sequence) + encode(TimeRemaining(5), TP03, other.sequence)
    )
    assert replies(events) == [request, other]
    with pytest.raises(MalformedReply, match="left over"):
        request.result()
    assert other.result() == TimeRemaining(5)
    assert not session.closed


def test_a_malformed_item_in_a_sequence_is_undecodable():
    session = ClientSession(TP03)
    request = session.send(GetPlayer((0,)))
    feed(session, encode(Sequence(1), TP03, request.sequence) + _tp03_player_with_modtime(request.sequence))
    (item,) = request.result()
    assert isinstance(item, Undecodable)
    assert item.error.code == FailCode.FRAME


# ------------------------------------------------------------------------------------------------
# Descriptions fetched lazily
# ------------------------------------------------------------------------------------------------


def test_object_of_unknown_type_triggers_getobjectdesc_then_decodes():
    session = ClientSession(TP04, object_descs={k: v for k, v in OBJECT_DESCS.items() if k != 4})
    first = session.send(GetObjectsByID((200, 100)))
    second = session.send(GetObjectsByID((201,)))
    session.data_to_send()
    events = feed(session, encode_reply([fleet(200), star_system(100, 101)], TP04, first.sequence))
    events += feed(session, encode_reply([fleet(201)], TP04, second.sequence))
    assert events == []  # both wait for the description
    (fetch,) = frames_of(session.data_to_send())  # asked once, for both
    assert fetch == GetObjectDesc((FLEET.id,))
    fetch_sequence = 3
    events = feed(session, encode_reply([FLEET], TP04, fetch_sequence))
    assert replies(events) == [first, second]
    assert first.result() == (fleet(200), star_system(100, 101))
    assert second.result() == (fleet(201),)
    assert session.object_descs[4] == FLEET
    # Known now: no more fetching.
    third = session.send(GetObjectsByID((202,)))
    session.data_to_send()
    feed(session, encode_reply([fleet(202)], TP04, third.sequence))
    assert third.result() == (fleet(202),) and session.data_to_send() == b""


def test_description_the_server_will_not_give():
    session = ClientSession(TP04)
    request = session.send(GetObjectsByID((200, 201)))
    lone = session.send(GetObjectsByID((202,)))
    session.data_to_send()
    feed(session, encode_reply([fleet(200), Fail(4, "gone")], TP04, request.sequence))
    (fetch,) = frames_of(session.data_to_send())
    assert fetch == GetObjectDesc((4,))
    feed(session, encode(Fail(FailCode.NO_SUCH_THING, "No such object type"), TP04, 3))
    item, fail = request.result()
    assert isinstance(item, Undecodable) and fail == Fail(4, "gone")
    assert "no description of object type 4" in str(item.error)
    # Later frames of that type fail at once instead of asking again.
    feed(session, encode(fleet(202), TP04, lone.sequence))
    with pytest.raises(MalformedReply):
        lone.result()
    assert session.data_to_send() == b""


def test_order_descriptions_are_learnt_from_replies_and_fetched_when_missing():
    session = ClientSession(TP03)
    descs = session.send(GetOrderDesc((2,)))
    feed(session, encode_reply([ORDER_DESCS[2]], TP03, descs.sequence))
    orders = session.send(GetOrder(42, (0, 1)))
    session.data_to_send()
    stream = encode_reply(
        [Order(42, 0, 2, (ObjectArg(6),), 1), Order(42, 1, 3, (ObjectArg(8),), 1)],
        TP03,
        orders.sequence,
    )
    assert feed(session, stream) == []
    (fetch,) = frames_of(session.data_to_send())
    assert fetch == GetOrderDesc((3,))
    feed(session, encode_reply([ORDER_DESCS[3]], TP03, 3))
    assert [o.type for o in orders.result()] == [2, 3]


# ------------------------------------------------------------------------------------------------
# Broken streams
# ------------------------------------------------------------------------------------------------


def test_plain_text_refusal_breaks_the_session():
    session = ClientSession(TP04)
    request = session.send(Connect("me"))
    events = feed(session, b"You are not running the correct protocol\n")
    assert isinstance(events[0], ConnectionFailed)
    assert replies(events) == [request]
    with pytest.raises(StreamBroken, match="not running the correct protocol"):
        request.result()
    with pytest.raises(ConnectionClosed):
        session.send(GetTimeRemaining())


def test_a_fail_in_another_version_is_a_version_refusal():
    session = ClientSession(TP04)
    request = session.send(Connect("me"))
    refusal = Fail(0, "TP Protocol, but I only support versions 2 and 3, sorry.")
    feed(session, encode(refusal, TP03, 0))
    with pytest.raises(VersionRejected, match="only support versions 2 and 3"):
        request.result()


def test_connection_lost_fails_every_waiting_request():
    session = ClientSession(TP03)
    requests = [session.send(FinishedTurn()), session.send(GetTimeRemaining())]
    events = session.connection_lost("bye")
    assert replies(events) == requests
    for request in requests:
        with pytest.raises(ConnectionClosed, match="bye"):
            request.result()
    assert session.connection_lost() == []
    assert session.receive_data(b"TP03") == []
