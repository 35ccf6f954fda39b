"""The sans-IO deframer: chunking, version detection (§1.2), limits, errors and recovery."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import (
    MAX_BODY_LENGTH,
    Answer,
    Connect,
    Deframer,
    Fail,
    FailCode,
    Frame,
    FrameType,
    Okay,
    Ping,
    ProtocolError,
    Version,
    decode,
    encode,
    encode_error,
)
from protocol.deframer import NOT_TP_TEXT, TOO_OLD_TEXT, detect_version
from protocol.header import encode_header

from . import captures

TP03, TP04 = Version.TP03, Version.TP04


def connect(version: Version, sequence: int = 1) -> bytes:
    return encode(Connect("test"), version, sequence)


def all_frames(deframer: Deframer, data: bytes) -> list[Frame]:
    return list(deframer.frames(data))


# --- chunking -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", captures.ALL)
def test_one_byte_at_a_time_equals_all_at_once(name):
    data = captures.stream(name, captures.SERVER)
    whole = all_frames(Deframer(), data)
    deframer = Deframer()
    single = []
    for index in range(len(data)):
        single.extend(deframer.frames(data[index : index + 1]))
    assert single == whole
    assert b"".join(frame.to_bytes() for frame in whole) == data
    assert deframer.buffered == 0


@settings(max_examples=60, deadline=None)
@given(cuts=st.lists(st.integers(min_value=0, max_value=4000), max_size=30))
def test_any_chunking_gives_the_same_frames(cuts):
    data = b"".join(encode(Okay("x" * n), TP04, n) for n in range(0, 200, 7))
    expected = all_frames(Deframer(), data)
    deframer = Deframer()
    got = []
    previous = 0
    for cut in sorted(set(cuts)) + [len(data)]:
        got.extend(deframer.frames(data[previous:cut]))
        previous = max(previous, cut)
    assert got == expected


def test_nothing_comes_out_of_a_partial_frame():
    data = connect(TP04)
    deframer = Deframer()
    for size in range(len(data)):
        deframer = Deframer()
        assert all_frames(deframer, data[:size]) == []
        assert deframer.buffered == size
    assert deframer.version == (TP04 if len(data) - 1 >= 4 else None)


def test_frames_before_an_error_are_delivered_first():
    deframer = Deframer()
    data = connect(TP04) + encode(Ping(), TP04, 2) + b"XX" + bytes(14)
    iterator = deframer.frames(data)
    assert next(iterator).sequence == 1
    assert next(iterator).sequence == 2
    with pytest.raises(ProtocolError):
        next(iterator)


def test_frames_feeds_eagerly():
    deframer = Deframer()
    deframer.frames(connect(TP03))  # never iterated
    assert deframer.buffered > 0
    assert deframer.next_frame().type == FrameType.CONNECT


# --- §1.2 version detection -----------------------------------------------------------------


@pytest.mark.parametrize(
    "prefix, answer, text, reply_version",
    [
        (b"TP00", Answer.TEXT_AND_CLOSE, TOO_OLD_TEXT, None),
        (b"TP01", Answer.TEXT_AND_CLOSE, TOO_OLD_TEXT, None),
        (b"TP02", Answer.TEXT_AND_CLOSE, TOO_OLD_TEXT, None),
        (b"TP04", Answer.FAIL_AND_REDETECT, None, TP03),  # ASCII "TP04": a TP03-style header
        (b"TP09", Answer.FAIL_AND_REDETECT, None, TP03),
        (b"TP\x05\x00", Answer.FAIL_AND_REDETECT, None, TP04),
        (b"TP\x2f\x00", Answer.FAIL_AND_REDETECT, None, TP04),
        (b"TP\x03\x00", Answer.FAIL_AND_REDETECT, None, TP03),
        (b"TP1x", Answer.FAIL_AND_REDETECT, None, TP03),
        (b"TP0x", Answer.FAIL_AND_REDETECT, None, TP03),
        (b"GET ", Answer.TEXT_AND_CLOSE, NOT_TP_TEXT, None),
        (b"\x00\x00\x00\x00", Answer.TEXT_AND_CLOSE, NOT_TP_TEXT, None),
    ],
)
def test_version_detection_errors(prefix, answer, text, reply_version):
    deframer = Deframer()
    deframer.feed(prefix[:3])
    assert deframer.next_frame() is None  # nothing is decided before four bytes
    deframer.feed(prefix[3:] + bytes(12))
    with pytest.raises(ProtocolError) as caught:
        deframer.next_frame()
    error = caught.value
    assert (error.code, error.answer, error.text, error.reply_version) == (
        FailCode.PROTOCOL,
        answer,
        text,
        reply_version,
    )
    assert deframer.version is None


@pytest.mark.parametrize("prefix, version", [(b"TP03", TP03), (b"TP\x04\x00", TP04), (b"TP\x04\x09", TP04)])
def test_version_detection_accepts_tp03_and_tp04(prefix, version):
    assert detect_version(prefix) == version


def test_a_text_answer_is_plain_bytes():
    deframer = Deframer()
    with pytest.raises(ProtocolError) as caught:
        all_frames(deframer, b"TP02" + bytes(12))
    assert encode_error(caught.value, deframer.version) == TOO_OLD_TEXT.encode()
    with pytest.raises(ValueError):
        deframer.recover()


def test_unsupported_versions_get_a_fail_and_the_connection_may_retry():
    deframer = Deframer()
    with pytest.raises(ProtocolError) as caught:
        all_frames(deframer, b"TP05" + bytes(40))
    reply = encode_error(caught.value, deframer.version)
    (fail_frame,) = all_frames(Deframer(), reply)
    assert fail_frame.version == TP03 and fail_frame.sequence == 0
    fail = decode(fail_frame)
    assert fail == Fail(FailCode.PROTOCOL, "TP Protocol, but I only support versions 3 and 4, sorry.")
    # As SRV: drain what was buffered, keep the connection, detect again.
    deframer.recover()
    assert deframer.buffered == 0
    (frame,) = all_frames(deframer, connect(TP03, 5))
    assert (frame.version, frame.sequence) == (TP03, 5)


def test_a_binary_version_above_4_is_answered_in_tp04():
    deframer = Deframer()
    with pytest.raises(ProtocolError) as caught:
        all_frames(deframer, b"TP\x05\x00" + bytes(12))
    (frame,) = all_frames(Deframer(), encode_error(caught.value, None))
    assert frame.version == TP04 and frame.type == FrameType.FAIL


# --- limits ---------------------------------------------------------------------------------


def test_a_too_long_frame_fails_before_its_body_arrives():
    deframer = Deframer()
    header = encode_header(TP04, 3, FrameType.CONNECT, MAX_BODY_LENGTH)
    with pytest.raises(ProtocolError) as caught:
        all_frames(deframer, header)
    error = caught.value
    assert (error.code, error.answer, error.sequence) == (FailCode.PROTOCOL, Answer.FAIL_AND_CLOSE, 3)
    assert "too large" in error.message
    reply = decode(all_frames(Deframer(), encode_error(error, deframer.version))[0])
    assert reply.code == FailCode.PROTOCOL
    with pytest.raises(ValueError):
        deframer.recover()


def test_the_longest_allowed_frame_is_buffered():
    deframer = Deframer()
    header = encode_header(TP04, 3, FrameType.OKAY, MAX_BODY_LENGTH - 1)
    assert all_frames(deframer, header) == []
    assert all_frames(deframer, bytes(MAX_BODY_LENGTH - 1))[0].body == bytes(MAX_BODY_LENGTH - 1)


def test_negative_lengths_are_a_header_error():
    with pytest.raises(ProtocolError) as caught:
        all_frames(Deframer(), encode_header(TP03, 1, 3, 0x80000000))
    assert "could not decode header" in caught.value.message
    assert caught.value.answer == Answer.FAIL_AND_CLOSE


def test_the_limit_is_configurable():
    # Bodies must be shorter than the limit, as SRV's "< 1048576".
    assert len(all_frames(Deframer(max_length=10), encode(Okay("12345"), TP03, 1))[0].body) == 9
    with pytest.raises(ProtocolError):
        all_frames(Deframer(max_length=10), encode(Okay("123456"), TP03, 1))


# --- later frames ---------------------------------------------------------------------------


def test_a_later_frame_of_another_version_is_refused_then_skipped():
    deframer = Deframer()
    data = connect(TP04, 1) + encode(Ping(), TP03, 2) + encode(Ping(), TP04, 3)
    iterator = deframer.frames(data)
    assert next(iterator).sequence == 1
    with pytest.raises(ProtocolError) as caught:
        next(iterator)
    error = caught.value
    assert (error.code, error.message, error.answer, error.sequence) == (
        FailCode.PROTOCOL,
        "Protocol Error, wrong version number",
        Answer.FAIL,
        2,
    )
    with pytest.raises(ProtocolError):  # stopped until recovered
        deframer.next_frame()
    reply = all_frames(Deframer(), encode_error(error, deframer.version))[0]
    assert (reply.version, reply.sequence) == (TP04, 2)
    deframer.recover()
    assert [frame.sequence for frame in deframer.frames()] == [3]


def test_tp03_connection_refuses_a_tp04_frame():
    deframer = Deframer()
    all_frames(deframer, connect(TP03))
    with pytest.raises(ProtocolError) as caught:
        all_frames(deframer, encode(Ping(), TP04, 2))
    assert caught.value.message == "Protocol Error, wrong version number"


def test_garbage_after_a_good_frame_closes():
    deframer = Deframer()
    all_frames(deframer, connect(TP04))
    with pytest.raises(ProtocolError) as caught:
        all_frames(deframer, b"HTTP/1.0 200 OK\r\n")
    assert caught.value.answer == Answer.FAIL_AND_CLOSE
    assert "could not decode header" in caught.value.message


def test_after_an_error_input_is_dropped_and_the_error_repeats():
    deframer = Deframer()
    with pytest.raises(ProtocolError) as first:
        all_frames(deframer, b"GET / HTTP/1.0\r\n")
    deframer.feed(b"more" * 1000)
    assert deframer.buffered < 100
    with pytest.raises(ProtocolError) as again:
        deframer.next_frame()
    assert again.value is first.value
    assert deframer.error is first.value


def test_unknown_frame_types_are_framed_and_left_to_decode():
    data = encode_header(TP04, 1, 999, 0)
    (frame,) = all_frames(Deframer(), data)
    assert frame.type == 999
    with pytest.raises(ProtocolError) as caught:
        decode(frame)
    assert caught.value.code == FailCode.PROTOCOL and caught.value.sequence == 1


def test_the_read_loop_of_the_package_docstring():
    """The loop in protocol.__doc__, run over a stream with a bad body and a wrong-version frame:
    both are answered with a Fail echoing their sequence, and every good frame is dispatched."""
    written, dispatched, closed = [], [], []

    class Transport:
        write = written.append

        def loseConnection(self):
            closed.append(True)

    transport = Transport()
    deframer = Deframer()

    def data_received(data: bytes) -> None:
        deframer.feed(data)
        while True:
            try:
                frame = deframer.next_frame()
            except ProtocolError as error:
                transport.write(encode_error(error, deframer.version))
                if error.answer not in (Answer.FAIL, Answer.FAIL_AND_REDETECT):
                    return transport.loseConnection()
                deframer.recover()
                continue
            if frame is None:
                break
            try:
                message = decode(frame)
            except ProtocolError as error:
                transport.write(encode_error(error, deframer.version))
                continue
            dispatched.append(message)

    stream = (
        connect(TP04, 1)
        + encode_header(TP04, 2, FrameType.LOGIN, 3)
        + b"abc"  # a body too short for Login
        + encode(Ping(), TP03, 3)  # wrong version
        + encode(Ping(), TP04, 4)
    )
    for index in range(0, len(stream), 5):
        data_received(stream[index : index + 5])
    assert dispatched == [Connect("test"), Ping()]
    fails = [decode(frame) for frame in Deframer().frames(b"".join(written))]
    assert [(fail.code, fail.message.split(":")[0]) for fail in fails] == [
        (FailCode.FRAME, "Unable to unpack Frame"),
        (FailCode.PROTOCOL, "Protocol Error, wrong version number"),
    ]
    assert [frame.sequence for frame in Deframer().frames(b"".join(written))] == [2, 3]
    assert not closed
    data_received(b"garbage!" * 2)
    assert closed


def test_frames_and_errors_recovers_where_srv_does_and_stops_where_it_closes():
    deframer = Deframer()
    # a TP03 connection, then a TP04 frame mid-stream (Fail, read on), then a frame too long
    deframer.feed(connect(TP03, 1) + connect(TP04, 2) + connect(TP03, 3))
    deframer.feed(encode_header(TP03, 4, FrameType.CONNECT, MAX_BODY_LENGTH) + connect(TP03, 5))
    items = list(deframer.frames_and_errors())
    assert [type(item).__name__ for item in items] == ["Frame", "ProtocolError", "Frame", "ProtocolError"]
    wrong_version, too_long = items[1], items[3]
    assert isinstance(wrong_version, ProtocolError) and not wrong_version.closes_stream
    assert isinstance(too_long, ProtocolError) and too_long.closes_stream
    assert [item.sequence for item in items if isinstance(item, Frame)] == [1, 3]
    assert list(deframer.frames_and_errors()) == [too_long]  # broken for good: no frame 5
