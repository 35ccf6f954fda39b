"""tpserver-cpp's real answers (../shared/fixtures/tp-captures) through the client session.

The requests are the ones the captured client sent (decoded from its bytes); the session sends
them and must produce exactly the client's bytes, then match every answer the server gave. The
cpptext session is replayed in lockstep: that client fetched ObjectDescs lazily, one type at a
time, exactly as our session does, so even those requests must come out byte for byte.
"""

from __future__ import annotations

import pytest

from clients.errors import MalformedReply, RequestFailed
from clients.session import AsyncReceived, ClientSession, Undecodable
from protocol import (
    FailCode,
    Game,
    GetObjectDesc,
    Okay,
    Order,
    ProbeOrder,
    TimeRemaining,
    TimeRemainingReason,
    Tp03Object,
    Tp04Object,
    Version,
    decode,
)
from tests.protocol import captures
from tests.protocol.captures import CLIENT, SERVER
from tests.protocol.tae import ORDER_DESCS


def client_messages(name: str):
    return [
        (frame.sequence, decode(frame, order_descs=ORDER_DESCS)) for frame in captures.frames(name, CLIENT)
    ]


def test_cpptext_lockstep_with_lazy_object_descriptions():
    user_requests = [
        message
        for _, message in client_messages(captures.CPPTEXT_TP04)
        if not isinstance(message, GetObjectDesc)  # those the session must send by itself
    ]
    session = ClientSession(Version.TP04)
    sent = bytearray()
    done = []
    queue = list(user_requests)
    current = session.send(queue.pop(0))
    sent += session.data_to_send()
    for side, data in captures.reads(captures.CPPTEXT_TP04):
        if side != SERVER:
            continue
        session.receive_data(data)
        sent += session.data_to_send()
        if current.done:
            done.append(current)
            if queue:
                current = session.send(queue.pop(0))
                sent += session.data_to_send()
    assert not queue and current.done
    assert bytes(sent) == captures.stream(captures.CPPTEXT_TP04, CLIENT)
    results = [request.result() for request in done]
    assert isinstance(results[2][0], Game) and results[2][0].rule == "TaE"
    universe, galaxy = results[5][0], results[6][0]
    assert isinstance(universe, Tp04Object) and universe.id == 0
    assert galaxy.name == "The Fertile Galaxy" and len(galaxy.contains) > 100
    assert set(session.object_descs) == {0, 1}


def test_java_tp04_pipelined():
    messages = client_messages(captures.JAVA_TP04)
    session = ClientSession(Version.TP04)
    requests = [session.send(message) for _, message in messages]
    assert [r.sequence for r in requests] == [sequence for sequence, _ in messages]
    assert session.data_to_send() == captures.stream(captures.JAVA_TP04, CLIENT)
    events = []
    for side, data in captures.reads(captures.JAVA_TP04):
        if side == SERVER:
            events.extend(session.receive_data(data))
    assert session.data_to_send() == b"", "every description was asked for by the client"
    assert all(r.done for r in requests) and session.pending == {}
    by_sequence = {r.sequence: r for r in requests}
    objects = [obj for s in range(18, 30) for obj in by_sequence[s].result()]
    assert len(objects) == 466 and all(isinstance(o, Tp04Object) for o in objects)
    for sequence in range(33, 39):  # probing Move on objects that do not take it
        with pytest.raises(RequestFailed) as caught:
            by_sequence[sequence].result()
        assert caught.value.code == FailCode.UNAVAILABLE_PERMANENTLY
    assert isinstance(by_sequence[39].message, ProbeOrder)
    assert isinstance(by_sequence[39].result(), Order)
    assert by_sequence[40].result() == Order(275, -1, 2, by_sequence[40].result().args)
    assert by_sequence[41].result()[0].slot == 0
    assert isinstance(by_sequence[44].result(), Okay)
    pushed = [e.message for e in events if isinstance(e, AsyncReceived)]
    assert len(pushed) == 1 and isinstance(pushed[0], TimeRemaining)
    assert pushed[0].reason == TimeRemainingReason.TIMER_WARNING


@pytest.mark.parametrize("name", captures.TP03_CAPTURES)
def test_tp03_captures_and_tpserver_cpp_faults(name):
    """Appendix A: the TP03 Player carries 8 extra bytes (undecodable, the connection goes on)
    and the TP03 InsertOrder with an Object argument is refused with Fail(1)."""
    messages = client_messages(name)
    session = ClientSession(Version.TP03, first_sequence=messages[0][0])
    requests = [session.send(message) for _, message in messages]
    assert session.data_to_send() == captures.stream(name, CLIENT)
    for side, data in captures.reads(name):
        if side == SERVER:
            session.receive_data(data)
    assert all(r.done for r in requests) and not session.closed
    kinds = {type(r.message).__name__: r for r in requests}
    player = kinds["GetPlayer"]
    try:
        (item,) = player.result()
        assert isinstance(item, Undecodable)
    except MalformedReply:
        pass
    with pytest.raises(RequestFailed) as caught:
        kinds["InsertOrder"].result()
    assert caught.value.code == FailCode.FRAME
    objects = [obj for r in requests if type(r.message).__name__ == "GetObjectsByID" for obj in r.result()]
    assert objects and all(isinstance(o, Tp03Object) for o in objects)
    assert isinstance(kinds["FinishedTurn"].result(), Okay)
