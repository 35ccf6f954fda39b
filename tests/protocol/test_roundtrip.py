"""Round trips for every frame type in both versions, and the fast object codecs held to the
construct declarations they replace."""

from __future__ import annotations

import struct

import pytest
from construct import ConstructError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol import (
    Deframer,
    Frame,
    ProtocolError,
    Tp04Object,
    Version,
    decode,
    encode,
    encode_body,
    is_defined,
    message_class,
    objects,
)
from protocol.schema import LeftoverBytes, TruncatedBody

from .strategies import messages_of, tp03_objects, tp04_objects
from .tae import OBJECT_DESCS

ALL_TYPES = [
    (version, frame_type)
    for version in Version
    for frame_type in range(0, 78)
    if is_defined(frame_type, version)
]

ROUND_TRIP = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_every_frame_type_of_both_versions_has_a_class():
    assert len(ALL_TYPES) == 64 + 78
    assert all(message_class(t, v) is not None for v, t in ALL_TYPES)


@pytest.mark.parametrize("version, frame_type", ALL_TYPES, ids=[f"{v.name}-{t}" for v, t in ALL_TYPES])
@ROUND_TRIP
@given(data=st.data())
def test_round_trip(version, frame_type, data):
    cls = message_class(frame_type, version)
    message, descs = data.draw(messages_of(cls, version))
    sequence = data.draw(st.integers(0, 2**32 - 1))
    wire = encode(message, version, sequence)
    (frame,) = Deframer().frames(wire)
    assert (frame.version, frame.sequence, frame.type) == (version, sequence, frame_type)
    decoded = decode(frame, **descs)
    assert type(decoded) is cls
    assert decoded == message
    assert encode(decoded, version, sequence) == wire


# --- the hand-written object codecs against the construct declarations -------------------------

EQUIVALENCE = settings(max_examples=150, deadline=None)
LOW_LEVEL = (ProtocolError, ConstructError, struct.error, TruncatedBody, LeftoverBytes, UnicodeError)


def outcome(function, *args):
    try:
        return ("ok", function(*args))
    except LOW_LEVEL:
        return ("error",)


@EQUIVALENCE
@given(case=tp04_objects())
def test_tp04_fast_path_writes_and_reads_what_construct_declares(case):
    obj, descs = case
    body = objects.encode_tp04_object(obj)
    assert body == objects.encode_tp04_object_with_construct(obj)
    assert objects.decode_tp04_object(body, descs["object_descs"]) == obj
    assert objects.decode_tp04_object_with_construct(body, descs["object_descs"]) == obj


@EQUIVALENCE
@given(case=tp03_objects())
def test_tp03_fast_path_writes_and_reads_what_construct_declares(case):
    obj, _ = case
    body = objects.encode_tp03_object(obj)
    assert body == objects.encode_tp03_object_with_construct(obj)
    assert objects.decode_tp03_object(body) == obj
    assert objects.decode_tp03_object_with_construct(body) == obj


@EQUIVALENCE
@given(data=st.data())
def test_fast_and_construct_decoders_agree_on_damaged_bodies(data):
    """Same message or both refuse, for real object bodies with bytes changed, cut or added."""
    if data.draw(st.booleans()):
        obj, descs = data.draw(tp04_objects())
        descs = descs["object_descs"]
        body = objects.encode_tp04_object(obj)
        fast = lambda b: objects.decode_tp04_object(b, descs)  # noqa: E731
        reference = lambda b: objects.decode_tp04_object_with_construct(b, descs)  # noqa: E731
    else:
        obj, _ = data.draw(tp03_objects())
        body = objects.encode_tp03_object(obj)
        fast, reference = objects.decode_tp03_object, objects.decode_tp03_object_with_construct
    damaged = bytearray(body)
    for _ in range(data.draw(st.integers(1, 3))):
        where = data.draw(st.integers(0, len(damaged)))
        action = data.draw(st.sampled_from(["set", "cut", "insert"]))
        if action == "set" and where < len(damaged):
            damaged[where] = data.draw(st.integers(0, 255))
        elif action == "cut":
            del damaged[where:]
        else:
            damaged[where:where] = data.draw(st.binary(min_size=1, max_size=4))
    damaged = bytes(damaged)
    assert outcome(fast, damaged) == outcome(reference, damaged)


def test_fleet_through_the_public_api():
    from .tae import fleet

    fleet_object = fleet(356)
    frame = Frame(Version.TP04, 0, 1, Tp04Object.TYPE, encode_body(fleet_object, Version.TP04))
    assert decode(frame, object_descs=OBJECT_DESCS) == fleet_object
    OBJECT_DESCS[4].check(fleet_object)
