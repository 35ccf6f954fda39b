"""Whatever a logged-in client sends — any request with any values, or raw bytes — the server
answers with well-formed frames or closes that connection, never raises, and the other players'
sessions go on."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import protocol as tp
from protocol import Version, is_defined, is_request, message_class
from tests.protocol.strategies import messages_of

from .wire import Wire, make_directory

REQUESTS = {
    version: [
        message_class(t, version)
        for t in range(78)
        if is_defined(t, version) and is_request(t) and t not in (tp.FrameType.ORDER,)
    ]
    for version in Version
}


def request_messages(version: Version):
    return (
        st.sampled_from(REQUESTS[version]).flatmap(lambda cls: messages_of(cls, version)).map(lambda m: m[0])
    )


def check_answers(wire: Wire) -> None:
    data = wire.transport.value()
    wire.transport.clear()
    for frame in wire.frames(data):  # every frame the server wrote decodes
        assert tp.decode(frame, object_descs=_object_descs(), order_descs=_order_descs()) is not None


def _object_descs():
    from server.views.tp.catalogue import OBJECT_DESCS

    return OBJECT_DESCS


def _order_descs():
    from server.views.tp.catalogue import ORDER_DESCS

    return ORDER_DESCS


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(version=st.sampled_from(list(Version)), data=st.data())
def test_any_requests_get_well_formed_answers(version, data):
    directory, game = make_directory()
    bystander = Wire(directory, Version.TP04)
    bystander.login("bystander")
    wire = Wire(directory, version)
    wire.login("fuzzer")
    for message in data.draw(st.lists(request_messages(version), min_size=1, max_size=8)):
        wire.sequence += 1
        wire.connection.dataReceived(tp.encode(message, version, wire.sequence))
        check_answers(wire)
        if wire.transport.disconnecting:
            break
    assert isinstance(bystander.one(tp.Ping()), tp.Okay)
    assert game.state.turn >= 0


@settings(max_examples=40, deadline=None)
@given(version=st.sampled_from(list(Version)), junk=st.binary(max_size=300))
def test_raw_bytes_after_login(version, junk):
    directory, _ = make_directory()
    bystander = Wire(directory, Version.TP03)
    bystander.login("bystander")
    wire = Wire(directory, version)
    wire.login("fuzzer")
    wire.connection.dataReceived(junk)
    data = wire.transport.value()
    if not data.startswith(b"You are not"):
        check_answers(wire)
    assert isinstance(bystander.one(tp.Ping()), tp.Okay)
