"""Real clients' bytes: everything they sent must decode to what they meant and re-encode
unchanged; tpserver-cpp's TP04 answers must decode too, and its known TP03 faults must be caught.
"""

from __future__ import annotations

import pytest

from protocol import (
    Connect,
    CreateAccount,
    Fail,
    FailCode,
    FeatureId,
    Features,
    FinishedTurn,
    Game,
    GetFeatures,
    GetGames,
    GetObjectDesc,
    GetObjectDescIDs,
    GetObjectIDs,
    GetObjectsByID,
    GetOrder,
    GetOrderDesc,
    GetOrderDescIDs,
    GetPlayer,
    GetTimeRemaining,
    InsertOrder,
    IntegerParam,
    Login,
    MissingDescriptionError,
    ObjectArg,
    ObjectDesc,
    Order,
    OrderDesc,
    Player,
    ProbeOrder,
    ProtocolError,
    Reference,
    ReferenceParam,
    ReferenceQuantity,
    ReferenceQuantityListParam,
    ReferenceType,
    TimeRemaining,
    TimeRemainingReason,
    Tp03Object,
    Tp04Object,
    Version,
    decode,
    encode,
    is_request,
    is_response,
)
from protocol.objects import FleetExtra, PlanetExtra, UniverseExtra

from . import captures
from .captures import CLIENT, SERVER
from .tae import OBJECT_DESCS, ORDER_DESCS


def ids(start: int, count: int) -> tuple[int, ...]:
    return tuple(range(start, start + count))


def star(order_id: int, order_type: int, cls=InsertOrder):
    """The order every capture inserts or probes: one "Star System" argument, object 2."""
    return cls(id=order_id, slot=-1, type=order_type, args=(ObjectArg(2),))


#: What each client meant, frame by frame (sequence number → message).
EXPECTED = {
    captures.CPPTEXT_TP04: {
        1: Connect("libtpproto-cpp/0.1.9 tpclient-cpptext/0.0.2"),
        2: GetFeatures(),
        3: GetGames(),
        4: Login("alice@tp", "secret tp"),
        5: GetTimeRemaining(),
        6: GetObjectsByID((0,)),
        7: GetObjectDesc((0,)),
        8: GetObjectsByID((1,)),
        9: GetObjectDesc((1,)),
    },
    captures.JAVA_TP04: {
        1: Connect("libtpproto-java/0.1.0 TpSession04-driver"),
        2: GetFeatures(),
        3: GetGames(),
        4: CreateAccount("hank", "hankpass", "hank@example.invalid", "reference session"),
        5: Login("hank", "hankpass"),
        6: GetTimeRemaining(),
        7: GetPlayer((0,)),
        8: GetObjectDescIDs(key=-1, start=0, amount=0, since=-1),
        9: GetObjectDescIDs(key=0, start=0, amount=5, since=-1),
        10: GetObjectDesc((0, 1, 2, 3, 4)),
        11: GetObjectIDs(key=-1, start=0, amount=0, since=-1),
        **{12 + n: GetObjectIDs(key=479, start=80 * n, amount=80) for n in range(5)},
        17: GetObjectIDs(key=479, start=400, amount=66),
        **{18 + n: GetObjectsByID(ids(40 * n, 40)) for n in range(11)},
        29: GetObjectsByID(ids(440, 26)),
        30: GetOrderDescIDs(key=-1, start=0, amount=0),
        31: GetOrderDescIDs(key=6, start=0, amount=5),
        32: GetOrderDesc((0, 1, 2, 3, 4)),
        **{33 + n: star(269 + n, 2, ProbeOrder) for n in range(7)},
        40: star(275, 2),
        41: GetOrder(275, (0,)),
        42: GetObjectsByID((460,)),
        43: GetTimeRemaining(),
        44: FinishedTurn(),
    },
    captures.JAVA_TP03: {
        1: Connect("libtpproto-java/0.1.0 TpSession03-driver"),
        2: GetFeatures(),
        3: CreateAccount("carol", "carolpass", "carol@example.invalid", "reference session"),
        4: Login("carol", "carolpass"),
        5: GetTimeRemaining(),
        6: GetPlayer((0,)),
        7: GetObjectIDs(key=-1, start=0, amount=0),
        **{8 + n: GetObjectIDs(key=409, start=80 * n, amount=80) for n in range(4)},
        12: GetObjectIDs(key=409, start=320, amount=76),
        13: GetObjectsByID((0, 1)),
        **{14 + n: GetObjectsByID(ids(40 * n, 40)) for n in range(9)},
        23: GetObjectsByID(ids(360, 36)),
        24: GetOrderDescIDs(key=-1, start=0, amount=0),
        25: GetOrderDescIDs(key=6, start=0, amount=5),
        26: GetOrderDesc((0, 1, 2, 3, 4)),
        27: star(384, 0),  # ColonizeMining, object id 384 (TP03 orders live on objects)
        28: GetOrder(384, (0,)),
        29: GetTimeRemaining(),
        30: FinishedTurn(),
    },
    captures.PY3_TP03: {
        2: Connect("libtpproto-py/0.2.5 libtpproto-py3-driver"),
        3: GetFeatures(),
        4: CreateAccount("oscar", "oscarpass", "oscar@example.invalid", "reference session"),
        5: Login("oscar", "oscarpass"),
        6: GetTimeRemaining(),
        7: GetPlayer((0,)),
        8: GetObjectIDs(key=-1, start=0, amount=-1),
        **{9 + n: GetObjectsByID(ids(40 * n, 40)) for n in range(14)},
        23: GetObjectsByID(ids(560, 4)),
        24: GetOrderDescIDs(key=-1, start=0, amount=-1),
        25: GetOrderDesc((0, 1, 2, 3, 4)),
        26: star(552, 1),  # Colonize
        27: GetOrder(552, (0,)),
        28: GetTimeRemaining(),
        29: FinishedTurn(),
    },
}

VERSIONS = {
    captures.CPPTEXT_TP04: Version.TP04,
    captures.JAVA_TP04: Version.TP04,
    captures.JAVA_TP03: Version.TP03,
    captures.PY3_TP03: Version.TP03,
}


@pytest.mark.parametrize("name", captures.ALL)
def test_every_client_frame_decodes_to_what_the_client_meant(name):
    frames = captures.frames(name, CLIENT)
    decoded = {}
    for frame in frames:
        assert frame.version == VERSIONS[name]
        assert is_request(frame.type), frame
        message = decode(frame, order_descs=ORDER_DESCS)
        assert frame.type == message.TYPE
        decoded[frame.sequence] = message
    assert len(decoded) == len(frames), "sequence numbers are unique in these sessions"
    assert decoded == EXPECTED[name]


@pytest.mark.parametrize("name", captures.ALL)
def test_every_client_frame_re_encodes_to_the_same_bytes(name):
    frames = captures.frames(name, CLIENT)
    encoded = b"".join(
        encode(decode(frame, order_descs=ORDER_DESCS), frame.version, frame.sequence) for frame in frames
    )
    assert encoded == captures.stream(name, CLIENT)


def _server_descriptions(frames):
    """Every ObjectDesc and OrderDesc the server sent, as a client would collect them."""
    object_descs, order_descs = {}, {}
    for frame in frames:
        if frame.type == ObjectDesc.TYPE:
            desc = decode(frame)
            object_descs[desc.id] = desc
        elif frame.type == OrderDesc.TYPE:
            desc = decode(frame)
            order_descs[desc.id] = desc
    return object_descs, order_descs


@pytest.mark.parametrize("name", captures.TP04_CAPTURES)
def test_tpserver_cpp_tp04_answers_decode_and_re_encode(name):
    frames = captures.frames(name, SERVER)
    object_descs, order_descs = _server_descriptions(frames)
    encoded = []
    for frame in frames:
        assert is_response(frame.type), frame
        message = decode(frame, object_descs=object_descs, order_descs=order_descs)
        encoded.append(encode(message, frame.version, frame.sequence))
    assert b"".join(encoded) == captures.stream(name, SERVER)


def test_the_published_tae_descriptions_match_tpserver_cpp():
    object_descs, order_descs = _server_descriptions(captures.frames(captures.JAVA_TP04, SERVER))
    assert {i: d.param_types() for i, d in object_descs.items()} == {
        i: d.param_types() for i, d in OBJECT_DESCS.items()
    }
    names = lambda descs: {  # noqa: E731
        i: [(g.name, [p.name for p in g.params]) for g in d.groups] for i, d in descs.items()
    }
    assert names(object_descs) == names(OBJECT_DESCS)
    without_modtime = lambda descs: {  # noqa: E731
        i: (d.id, d.name, d.description, d.params) for i, d in descs.items()
    }
    assert without_modtime(order_descs) == without_modtime(ORDER_DESCS)


def test_cpptext_fetches_object_descriptions_lazily_as_py4_does():
    """The server sends Object 0 before the client has its ObjectDesc: decoding says which
    description is missing, and succeeds once the description has arrived."""
    frames = captures.frames(captures.CPPTEXT_TP04, SERVER)
    objects = [frame for frame in frames if frame.type == Tp04Object.TYPE]
    with pytest.raises(MissingDescriptionError) as caught:
        decode(objects[0], object_descs={})
    assert (caught.value.kind, caught.value.type_id) == ("object", 0)
    assert caught.value.code == FailCode.NO_SUCH_THING
    assert caught.value.sequence == objects[0].sequence
    object_descs, _ = _server_descriptions(frames)
    universe = decode(objects[0], object_descs=object_descs)
    assert universe.name == "The Universe" and universe.parent == 0
    informational = universe.groups[1]
    assert informational == (IntegerParam(0),)  # the turn counter ("Year")


def test_what_tpserver_cpp_told_the_java_tp04_client():
    frames = captures.frames(captures.JAVA_TP04, SERVER)
    object_descs, order_descs = _server_descriptions(frames)
    by_type = {}
    for frame in frames:
        message = decode(frame, object_descs=object_descs, order_descs=order_descs)
        by_type.setdefault(type(message), []).append(message)

    (game,) = by_type[Game]
    assert game.versions == ("0.3", "0.4") and game.server_type == "tpserver-cpp"
    assert game.rule == "TaE" and game.ctime > 0

    (features,) = by_type[Features]
    assert features.features == (
        FeatureId.KEEP_ALIVE,
        FeatureId.PROPERTY_CALC,
        FeatureId.ACCOUNT_CREATE,
        FeatureId.FILTER_PADDING,
    )
    assert by_type[Player] == [Player(8, "hank", "Human", modtime=9)]
    first, *_ = by_type[TimeRemaining]
    assert first == TimeRemaining(70, TimeRemainingReason.REQUESTED, 1, "", (1, 2, 4, 5, 6, 8))

    fails = by_type[Fail]
    assert fails[0].code == FailCode.UNAVAILABLE_PERMANENTLY
    assert fails[0].references == (
        Reference(ReferenceType.ORDER_QUEUE, 269),
        Reference(ReferenceType.ORDER_TYPE, 2),
    )
    assert by_type[Order][0] == star(275, 2, Order)

    fleets = [obj for obj in by_type[Tp04Object] if obj.type == 4]
    assert fleets, "the session has fleets"
    positional, ownership, orders, ships = fleets[0].groups
    assert ownership[0] == ReferenceParam(ReferenceType.PLAYER, ownership[0].id)
    assert isinstance(ships[0], ReferenceQuantityListParam)
    assert all(item.type == ReferenceType.DESIGN for item in ships[0].items)
    assert isinstance(ships[0].items[0], ReferenceQuantity)


@pytest.mark.parametrize("name", captures.TP03_CAPTURES)
def test_tpserver_cpp_tp03_answers_decode_except_its_known_player_fault(name):
    """Appendix A.1: SRV appends an 8-byte modtime to TP03 Player frames. A strict TP03 decoder
    (like PY3, like ours) must refuse it; everything else SRV sent decodes and re-encodes."""
    frames = captures.frames(name, SERVER)
    _, order_descs = _server_descriptions(frames)
    faults = []
    for frame in frames:
        try:
            message = decode(frame, order_descs=order_descs)
        except ProtocolError as error:
            faults.append((frame, error))
            continue
        assert encode(message, frame.version, frame.sequence) == frame.to_bytes()
    ((frame, error),) = faults
    assert frame.type == Player.TYPE
    assert error.code == FailCode.FRAME and "8 bytes left over" in error.message
    assert error.sequence == frame.sequence
    # Without the 8 extra bytes it is a proper TP03 Player.
    trimmed = type(frame)(frame.version, 0, frame.sequence, frame.type, frame.body[:-8])
    player = decode(trimmed)
    assert player.race == "Human" and player.modtime == 0


def test_tp03_objects_from_tpserver_cpp():
    frames = captures.frames(captures.PY3_TP03, SERVER)
    objects = [decode(frame) for frame in frames if frame.type == Tp03Object.TYPE]
    by_id = {obj.id: obj for obj in objects}
    assert by_id[0].extra == UniverseExtra(age=2) and by_id[0].contains == (1,)
    assert by_id[3].extra == PlanetExtra(owner=-1, resources=())
    fleet = by_id[356]
    assert fleet.name == "Colonist Fleet"
    assert fleet.extra == FleetExtra(owner=1, ships=((1, 1),), damage=0)
    assert {obj.type for obj in objects} == {0, 1, 2, 3, 4}


def test_tp03_insert_order_has_only_the_object_id():
    """Appendix A.2: TP03 clients send the Object argument as a bare u32; SRV wrongly wants the
    TP04 list after it. We take the TP03 layout."""
    (frame,) = [f for f in captures.frames(captures.PY3_TP03, CLIENT) if f.type == 12]
    assert frame.body.hex() == "00000228ffffffff00000001000000000000000000000002"
    assert decode(frame, order_descs=ORDER_DESCS).args == (ObjectArg(2),)
