"""Hostile bytes: whatever a peer sends, the deframer and decoder produce frames, messages or a
ProtocolError (never another exception), and never allocate more than the bytes received."""

from __future__ import annotations

import time
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol import (
    MAX_BODY_LENGTH,
    Answer,
    Deframer,
    Frame,
    Message,
    ProtocolError,
    Version,
    decode,
    encode_body,
    encode_error,
    is_defined,
    message_class,
)
from protocol.header import encode_header

from . import captures
from .strategies import messages_of
from .tae import OBJECT_DESCS, ORDER_DESCS

DESCS = {"object_descs": OBJECT_DESCS, "order_descs": ORDER_DESCS}


def feed_everything(chunks: list[bytes]) -> list[Message]:
    """What a server does with the bytes of one connection; only ProtocolError is allowed."""
    deframer = Deframer()
    messages = []
    for chunk in chunks:
        pending = chunk
        while True:
            try:
                for frame in deframer.frames(pending):
                    try:
                        messages.append(decode(frame, **DESCS))
                    except ProtocolError as error:
                        assert isinstance(encode_error(error, deframer.version), bytes)
                break
            except ProtocolError as error:
                assert isinstance(encode_error(error, deframer.version), bytes)
                if error.answer not in (Answer.FAIL, Answer.FAIL_AND_REDETECT):
                    return messages
                deframer.recover()
                pending = b""
    return messages


def chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({cut % (len(data) + 1) for cut in cuts})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)])]


FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(data=st.binary(max_size=400), cuts=st.lists(st.integers(0, 400), max_size=6))
def test_arbitrary_bytes(data, cuts):
    feed_everything(chunked(data, cuts))


@FUZZ
@given(
    prefix=st.sampled_from([b"TP03", b"TP\x04\x00"]),
    data=st.binary(max_size=400),
    cuts=st.lists(st.integers(0, 400), max_size=6),
)
def test_arbitrary_bytes_after_a_valid_version(prefix, data, cuts):
    feed_everything(chunked(prefix + data, cuts))


ALL_TYPES = [(v, t) for v in Version for t in range(78) if is_defined(t, v)]
FRAME_TYPES = st.one_of(st.integers(0, 80), st.integers(0, 2**32 - 1))


@FUZZ
@given(
    version=st.sampled_from(Version),
    frame_type=FRAME_TYPES,
    body=st.binary(max_size=300),
)
def test_arbitrary_bodies_of_every_frame_type(version, frame_type, body):
    try:
        decode(Frame(version, 0, 1, frame_type, body), **DESCS)
    except ProtocolError as error:
        assert error.sequence == 1


def mutate(data, body: bytes) -> bytes:
    """``body`` with up to three bytes set, cuts, insertions or 0xFFFFFFFF words."""
    damaged = bytearray(body)
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        where = data.draw(st.integers(0, len(damaged)), label="where")
        action = data.draw(st.sampled_from(["set", "cut", "insert", "ones"]), label="action")
        if action == "set" and where < len(damaged):
            damaged[where] = data.draw(st.integers(0, 255))
        elif action == "cut":
            del damaged[where:]
        elif action == "insert":
            damaged[where:where] = data.draw(st.binary(min_size=1, max_size=8))
        else:
            damaged[where : where + 4] = b"\xff\xff\xff\xff"
    return bytes(damaged)


def _capture_frames():
    frames = []
    for name in captures.ALL:
        for direction in (captures.CLIENT, captures.SERVER):
            frames.extend(captures.frames(name, direction))
    # Keep the variety, not the 1400 near-identical objects.
    seen, sample = set(), []
    for frame in frames:
        key = (frame.version, frame.type, len(frame.body) // 16)
        if key not in seen:
            seen.add(key)
            sample.append(frame)
    return sample


@pytest.fixture(scope="module")
def capture_frames():
    return _capture_frames()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_real_frames(capture_frames, data):
    frame = data.draw(st.sampled_from(capture_frames))
    wire = mutate(data, frame.to_bytes())
    # The header's length rarely survives mutation; also try the body behind a fresh header.
    body = wire[16:]
    header = encode_header(frame.version, frame.sequence, frame.type, len(body), frame.frame_version)
    feed_everything(chunked(wire, data.draw(st.lists(st.integers(0, 400), max_size=4))))
    feed_everything([header + body])


@pytest.mark.slow
@settings(max_examples=2500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_valid_bodies_of_every_frame_type(data):
    """Valid bodies of every (version, type), with their descriptions, then damaged: decoding
    reaches deep into each layout and still only ever returns a message or a ProtocolError."""
    version, frame_type = data.draw(st.sampled_from(ALL_TYPES), label="type")
    cls = message_class(frame_type, version)
    message, descs = data.draw(messages_of(cls, version), label="message")
    body = mutate(data, encode_body(message, version))
    try:
        decoded = decode(Frame(version, 0, 1, frame_type, body), **descs)
    except ProtocolError as error:
        assert error.sequence == 1
    else:
        assert type(decoded) is cls


# --- huge list counts -----------------------------------------------------------------------


def test_a_huge_list_count_fails_fast_for_every_frame_type():
    """0xFFFFFFFF at every word of a 20-byte body, for all 142 (version, type) pairs: each
    decode must end at once (no loop over four billion items, no allocation)."""
    slowest = 0.0
    for version, frame_type in ALL_TYPES:
        for word in range(5):
            body = bytearray(20)
            body[4 * word : 4 * word + 4] = b"\xff\xff\xff\xff"
            started = time.perf_counter()
            try:
                decode(Frame(version, 0, 1, frame_type, bytes(body)), **DESCS)
            except ProtocolError:
                pass
            slowest = max(slowest, time.perf_counter() - started)
    # Looping over 2**32 items would take minutes; a decode that fails fast takes microseconds.
    # The bound is loose so a loaded machine cannot make the test flaky.
    assert slowest < 0.5


@pytest.mark.parametrize(
    "version, frame_type",
    [
        (Version.TP04, 5),
        (Version.TP04, 31),
        (Version.TP04, 68),
        (Version.TP04, 7),
        (Version.TP03, 7),
        (Version.TP04, 12),
        (Version.TP04, 66),
    ],
)
def test_a_huge_count_in_the_largest_frame_allocates_nothing(version, frame_type):
    """A body just under 1 MiB whose lists claim 0xFFFFFFFF items: memory stays flat."""
    body = b"\xff" * (MAX_BODY_LENGTH - 1)
    frame = Frame(version, 0, 1, frame_type, body)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        started = time.perf_counter()
        with pytest.raises(ProtocolError):
            decode(frame, **DESCS)
        elapsed = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert elapsed < 1.0
    assert peak < 256 * 1024


def test_a_header_announcing_a_huge_body_is_refused_before_buffering():
    deframer = Deframer()
    with pytest.raises(ProtocolError):
        list(deframer.frames(encode_header(Version.TP04, 1, 5, 0xFFFFFFF0)))
    deframer.feed(bytes(10_000))
    assert deframer.buffered <= 16
