"""The public API around the codec: errors, versions, directions, enums, messages as values."""

from __future__ import annotations

import dataclasses

import pytest

import protocol
from protocol import (
    Answer,
    BoardMessage,
    Direction,
    EncodingError,
    Fail,
    FailCode,
    FeatureId,
    Features,
    Frame,
    FrameType,
    GetGames,
    GetObjectsByID,
    InsertOrder,
    IntegerParam,
    MissingDescriptionError,
    ObjectArg,
    ObjectDesc,
    ObjectIDs,
    ObjectParamDesc,
    ObjectParamGroupDesc,
    Okay,
    Order,
    OrderDesc,
    OrderParamDesc,
    Player,
    ProtocolError,
    Reference,
    ReferenceType,
    Sequence,
    TimeRemaining,
    Tp04Object,
    Version,
    decode,
    direction,
    encode,
    encode_body,
    encode_error,
    encode_reply,
    frame_bytes,
    is_request,
    is_response,
    message_class,
)

from .tae import FLEET, OBJECT_DESCS, ORDER_DESCS, fleet

TP03, TP04 = Version.TP03, Version.TP04


def frame(version, frame_type, body, sequence=9) -> Frame:
    return Frame(version, 0, sequence, frame_type, body)


# --- decode errors --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "version, frame_type", [(TP03, 64), (TP03, 66), (TP03, 77), (TP04, 78), (TP04, 1000)]
)
def test_frame_types_a_version_lacks_are_protocol_errors(version, frame_type):
    with pytest.raises(ProtocolError) as caught:
        decode(frame(version, frame_type, b""))
    assert caught.value.code == FailCode.PROTOCOL
    assert caught.value.message == "Protocol Error, frame type not known"
    assert caught.value.sequence == 9


def test_short_and_long_bodies_are_frame_errors_with_the_sequence():
    for body in (b"\0\0\0\x05ab", b"\0\0\0\x01ab"):
        with pytest.raises(ProtocolError) as caught:
            decode(frame(TP04, FrameType.OKAY, body))
        assert caught.value.code == FailCode.FRAME
        assert caught.value.sequence == 9
        assert caught.value.message.startswith("Unable to unpack Frame: Okay")
        assert caught.value.answer == Answer.FAIL


def test_an_unknown_order_type_is_answered_like_srv():
    body = encode_body(InsertOrder(42, -1, 99), TP04)
    with pytest.raises(MissingDescriptionError) as caught:
        decode(frame(TP04, FrameType.INSERT_ORDER, body), order_descs=ORDER_DESCS)
    error = caught.value
    assert (error.kind, error.type_id, error.code) == ("order", 99, FailCode.NO_SUCH_THING)
    assert error.message == "No such order type"
    assert error.references == ((ReferenceType.ORDER_QUEUE, 42), (ReferenceType.ORDER_TYPE, 99))
    reply = decode(Frame(TP04, 0, 9, 1, encode_error(error, TP04)[16:]))
    assert reply == Fail(FailCode.NO_SUCH_THING, "No such order type", ((13, 42), (2, 99)))
    with pytest.raises(MissingDescriptionError) as tp03:
        decode(frame(TP03, FrameType.INSERT_ORDER, body))
    assert tp03.value.references[0] == (ReferenceType.OBJECT, 42)


def test_order_bodies_must_match_the_description():
    good = encode_body(InsertOrder(1, -1, 2, (ObjectArg(3),)), TP04)
    assert decode(frame(TP04, 12, good), order_descs=ORDER_DESCS).args == (ObjectArg(3),)
    for body in (good[:-1], good + b"\0"):
        with pytest.raises(ProtocolError) as caught:
            decode(frame(TP04, 12, body), order_descs=ORDER_DESCS)
        assert caught.value.code == FailCode.FRAME


def test_reinforce_has_no_arguments():
    order = InsertOrder(1, 0, 4)
    body = encode_body(order, TP03)
    assert decode(frame(TP03, 12, body), order_descs=ORDER_DESCS) == order


def test_unknown_enum_values_stay_ints():
    fail = decode(frame(TP04, 1, encode_body(Fail(99, "x", ((77, 1),)), TP04)))
    assert fail.code == 99 and not isinstance(fail.code, FailCode)
    assert fail.references == ((77, 1),)
    assert fail.references[0].type == 77 and not isinstance(fail.references[0].type, ReferenceType)
    features = decode(frame(TP03, 26, encode_body(Features((5, 0x4242)), TP03)))
    assert features.features == (FeatureId.KEEP_ALIVE, 0x4242)
    assert isinstance(features.features[0], FeatureId)
    remaining = decode(frame(TP04, 15, encode_body(TimeRemaining(1, 9), TP04)))
    assert remaining.reason == 9


def test_known_enum_values_become_members():
    fail = decode(frame(TP04, 1, encode_body(Fail(4, "x", ((-2, 1), (7, 3))), TP04)))
    assert fail.code is FailCode.NO_SUCH_THING
    assert [ref.type for ref in fail.references] == [ReferenceType.ORDER_ACTION, ReferenceType.PLAYER]


def test_descriptions_with_unknown_parameter_types_decode_but_cannot_lay_out_objects():
    desc = ObjectDesc(9, "Odd", "", 1, (ObjectParamGroupDesc(1, "G", "", (ObjectParamDesc("p", 42, ""),)),))
    decoded = decode(frame(TP04, 68, encode_body(desc, TP04)))
    assert decoded.groups[0].params[0].type == 42
    body = encode_body(Tp04Object(1, 9, "", "", 0, (), 1, ()), TP04) + b"\0\0\0\0"
    with pytest.raises(ProtocolError) as caught:
        decode(frame(TP04, 7, body), object_descs={9: decoded})
    assert caught.value.code == FailCode.FRAME
    order_desc = OrderDesc(5, "Odd", "", (OrderParamDesc("p", 42, ""),), 0)
    with pytest.raises(ProtocolError):
        decode(frame(TP04, 12, encode_body(InsertOrder(1, 0, 5), TP04)), order_descs={5: order_desc})


def test_object_descriptions_can_be_any_mapping():
    class Lazy(dict):
        def __missing__(self, key):
            return OBJECT_DESCS[key]

    body = encode_body(fleet(5), TP04)
    assert decode(frame(TP04, 7, body), object_descs=Lazy()) == fleet(5)


# --- encode errors --------------------------------------------------------------------------


def test_encoding_a_type_the_version_lacks():
    with pytest.raises(EncodingError) as caught:
        encode(GetGames(), TP03, 1)
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, ProtocolError)
    assert caught.value.code == FailCode.UNAVAILABLE_PERMANENTLY


@pytest.mark.parametrize(
    "message",
    [
        Okay(5),
        Sequence(-1),
        Sequence(2**32),
        GetObjectsByID((-2,)),
        Player(1, "a", "b", modtime=-1),
        Tp04Object(1, 2, "", "", 0, (), 0, ((IntegerParam(-1),),)),
        Tp04Object(1, 2, "", "", 0, (), 0, (("not a parameter",),)),
        Order(1, 0, 2, ("not an argument",)),
        Order(1, 0, 2, (ObjectArg(-5),)),
    ],
)
def test_values_that_do_not_fit_are_encoding_errors(message):
    with pytest.raises(EncodingError):
        encode(message, TP04, 1)


def test_bad_sequence_numbers_are_encoding_errors():
    with pytest.raises(EncodingError):
        encode(Okay("x"), TP04, -1)


def test_bodies_over_the_frame_limit_are_refused():
    with pytest.raises(EncodingError) as caught:
        encode(ObjectIDs(0, 0, tuple((i, 1) for i in range(87_400))), TP04, 1)
    assert caught.value.code == FailCode.REQUEST_TOO_BIG
    assert len(encode(ObjectIDs(0, 0, tuple((i, 1) for i in range(87_378))), TP03, 1)) < 2**20


# --- error replies --------------------------------------------------------------------------


def test_encode_error_for_a_body_error_echoes_the_sequence():
    with pytest.raises(ProtocolError) as caught:
        decode(frame(TP03, 4, b"\0\0\0\x09abc", sequence=33))
    reply = encode_error(caught.value, TP03)
    assert reply[:16] == bytes.fromhex("54503033 00000021 00000001") + len(reply[16:]).to_bytes(4, "big")
    assert decode(frame(TP03, 1, reply[16:])).code == FailCode.FRAME


def test_tp03_fails_use_tp03_codes_and_no_references():
    error = ProtocolError(FailCode.REQUEST_TOO_BIG, "big", references=((1, 2),))
    fail = decode(frame(TP03, 1, encode_error(error, TP03, 4)[16:]))
    assert fail == Fail(FailCode.FRAME, "big")
    fail = decode(frame(TP04, 1, encode_error(error, TP04, 4)[16:]))
    assert fail == Fail(FailCode.REQUEST_TOO_BIG, "big", ((1, 2),))


# --- directions and types -------------------------------------------------------------------


def test_requests_and_responses():
    assert is_request(FrameType.INSERT_ORDER) and not is_response(FrameType.INSERT_ORDER)
    assert is_response(FrameType.OBJECT) and not is_request(FrameType.OBJECT)
    assert is_response(FrameType.TIME_REMAINING)
    for both in (FrameType.ORDER, FrameType.MESSAGE, FrameType.CATEGORY, FrameType.DESIGN):
        assert direction(both) == Direction.BOTH and is_request(both) and is_response(both)
    assert direction(78) is None and not is_request(1000) and not is_response(-1)
    requests = {t for t in FrameType if direction(t) == Direction.CLIENT_TO_SERVER}
    assert FrameType.GET_OBJECTS_BY_ID in requests and FrameType.FINISHED_TURN in requests
    assert len(requests) + len([t for t in FrameType if direction(t) != Direction.CLIENT_TO_SERVER]) == 78


def test_message_classes_by_type_and_version():
    assert message_class(7, TP03) is protocol.Tp03Object
    assert message_class(7, TP04) is protocol.Tp04Object
    assert message_class(19, TP03) is BoardMessage
    assert message_class(66, TP03) is None
    assert all(t == message_class(t, TP04).TYPE for t in FrameType)


# --- messages are values --------------------------------------------------------------------


def test_messages_are_frozen_and_slotted():
    okay = Okay("x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        okay.message = "y"
    assert not hasattr(okay, "__dict__")
    for name in protocol.__all__:
        value = getattr(protocol, name)
        if (
            isinstance(value, type)
            and issubclass(value, protocol.Message)
            and dataclasses.is_dataclass(value)
        ):
            assert value.__dataclass_params__.frozen, name
            assert "__slots__" in vars(value), name


def test_same_class_in_both_versions_with_defaults_for_version_only_fields():
    assert Fail(0, "x").references == ()
    assert Player(1, "a", "b").modtime == 0
    assert protocol.GetObjectIDs(-1, 0, -1).since == -1
    assert TimeRemaining(5).waiting == ()
    for version in Version:
        assert message_class(1, version) is Fail and message_class(40, version) is Player


def test_records_compare_equal_to_plain_tuples():
    assert Fail(1, "x", ((7, 3),)) == Fail(1, "x", (Reference(ReferenceType.PLAYER, 3),))


def test_encode_reply_is_a_sequence_and_the_items():
    data = encode_reply([Okay("a"), Okay("b")], TP04, 5)
    frames = list(protocol.Deframer().frames(data))
    assert [decode(f) for f in frames] == [Sequence(2), Okay("a"), Okay("b")]
    assert {f.sequence for f in frames} == {5}


def test_cached_bodies_get_fresh_headers():
    body = encode_body(fleet(3), TP04)
    assert frame_bytes(TP04, 77, FrameType.OBJECT, body) == encode(fleet(3), TP04, 77)


def test_object_desc_check():
    FLEET.check(fleet(1))
    with pytest.raises(ValueError):
        FLEET.check(dataclasses.replace(fleet(1), groups=fleet(1).groups[:-1]))
    with pytest.raises(ValueError):
        OBJECT_DESCS[2].check(fleet(1))


def test_the_package_docstring_example():
    """The fleet example of protocol.__doc__ encodes and decodes."""
    x, y, z, owner, queue_id, design, sequence = 1, 2, 3, 4, 5, 6, 7
    fleet_object = Tp04Object(
        id=42,
        type=4,
        name="Colonist Fleet",
        description="",
        parent=7,
        contains=(),
        modtime=9,
        groups=(
            (protocol.PositionParam(x, y, z), protocol.VelocityParam(0, 0, 0), protocol.SizeParam(2)),
            (protocol.ReferenceParam(ReferenceType.PLAYER, owner),),
            (protocol.OrderQueueParam(queue_id),),
            (protocol.ReferenceQuantityListParam(((ReferenceType.DESIGN, design, 1),)), IntegerParam(0)),
        ),
    )
    data = encode(fleet_object, Version.TP04, sequence)
    (got,) = protocol.Deframer().frames(data)
    assert decode(got, object_descs=OBJECT_DESCS) == fleet_object
    FLEET.check(fleet_object)
