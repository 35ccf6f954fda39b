"""Every layout pinned against spec/protocol.md, byte for byte, with hand-written expected bytes.

Each case encodes a message for one version, compares with the bytes the spec prescribes, and
decodes those bytes back to the same message. Version differences (§9.1) get a case per version.
"""

from __future__ import annotations

import pytest

from protocol import (
    AbsSpaceCoordsArg,
    AccelerationParam,
    BoardMessage,
    BoundPositionParam,
    Deframer,
    Design,
    EncodingError,
    Fail,
    FailCode,
    Features,
    Frame,
    Game,
    GameConnection,
    GameParam,
    GameParamId,
    GenericReferenceQuantityListArg,
    GetFeatures,
    GetObjectIDs,
    GetObjectIDsByContainer,
    GetObjectIDsByPos,
    GetObjectsByID,
    GetObjectsByPos,
    InfluenceParam,
    InsertOrder,
    IntegerParam,
    ListArg,
    MediaParam,
    ObjectArg,
    ObjectDesc,
    ObjectIDs,
    ObjectParamDesc,
    ObjectParamGroupDesc,
    ObjectParamType,
    Okay,
    Order,
    OrderDesc,
    OrderParamDesc,
    OrderParamType,
    OrderQueue,
    OrderQueueParam,
    Ping,
    Player,
    PlayerArg,
    PositionParam,
    ProtocolError,
    RangeArg,
    Redirect,
    ReferenceArg,
    ReferenceListArg,
    ReferenceParam,
    ReferenceQuantityListParam,
    RelSpaceCoordsArg,
    RemoveOrder,
    ResourceListArg,
    ResourceListParam,
    Sequence,
    SetFilters,
    SizeParam,
    StringArg,
    TimeArg,
    TimeRemaining,
    Tp03Object,
    Tp04Object,
    Vec3,
    VelocityParam,
    Version,
    decode,
    encode,
    encode_body,
)
from protocol.header import TP03_HEADER, TP04_HEADER, encode_header
from protocol.objects import (
    FleetExtra,
    GalaxyExtra,
    PlanetExtra,
    StarSystemExtra,
    UniverseExtra,
    WormholeExtra,
)

from .tae import STAR_SYSTEM

TP03, TP04 = Version.TP03, Version.TP04


def h(text: str) -> bytes:
    """Hex with spaces and newlines for readability."""
    return bytes.fromhex(text)


def text(value: str) -> str:
    """A TP ``str`` in hex: u32 byte length, UTF-8 bytes."""
    data = value.encode("utf-8")
    return f"{len(data):08x}{data.hex()}"


def pin(message, version, expected: bytes, **descs) -> None:
    """``message`` encodes to ``expected`` for ``version`` and decodes back from it."""
    assert encode_body(message, version) == expected
    frame = Frame(version, 0, 17, message.TYPE, expected)
    assert decode(frame, **descs) == message


def refuses(version, message_type, body: bytes, **descs) -> ProtocolError:
    with pytest.raises(ProtocolError) as caught:
        decode(Frame(version, 0, 17, message_type, body), **descs)
    return caught.value


# --- §1.1 headers ---------------------------------------------------------------------------


def test_tp03_header():
    assert encode(Okay("ok"), TP03, 7) == h("54503033 00000007 00000000 00000006  00000002 6f6b")


def test_tp04_header():
    assert encode(Okay("ok"), TP04, 7) == h("5450 04 00 00000007 00000000 00000006  00000002 6f6b")


def test_the_p2_example_header():
    """P2 tests/testparser.py: 'TP' 04 00, seq 0, type 0, length 5."""
    data = h("5450 04 00 00000000 00000000 00000005") + h("00000001 41")
    (frame,) = Deframer().frames(data)
    assert (frame.version, frame.sequence, frame.type, frame.body) == (TP04, 0, 0, h("00000001 41"))
    assert decode(frame) == Okay("A")


def test_tp04_frame_version_byte_is_kept():
    (frame,) = Deframer().frames(h("5450 04 07 00000001 0000001b 00000000"))
    assert frame.frame_version == 7 and decode(frame) == Ping()
    assert frame.to_bytes() == h("5450 04 07 00000001 0000001b 00000000")


def test_construct_header_declarations_agree_with_encode_header():
    tp03 = TP03_HEADER.parse(encode_header(TP03, 1, 2, 3))
    assert (tp03.sequence, tp03.type, tp03.length) == (1, 2, 3)
    tp04 = TP04_HEADER.parse(encode_header(TP04, 1, 2, 3, frame_version=9))
    assert (tp04.frame_version, tp04.sequence, tp04.type, tp04.length) == (9, 1, 2, 3)
    assert TP04_HEADER.build(dict(frame_version=0, sequence=1, type=2, length=3)) == encode_header(
        TP04, 1, 2, 3
    )


# --- §0 primitives --------------------------------------------------------------------------


def test_strings_are_length_prefixed_utf8_without_nul():
    pin(Okay("héllo"), TP04, h("00000006 68c3a96c6c6f"))


def test_invalid_utf8_from_a_peer_is_replaced_not_fatal():
    message = decode(Frame(TP04, 0, 1, 0, h("00000002 ff41")))
    assert message == Okay("\ufffdA")


def test_j32_minus_one_is_all_ones():
    pin(GetObjectsByID((1, -1)), TP03, h("00000002 00000001 ffffffff"))


def test_empty_bodies():
    pin(GetFeatures(), TP03, b"")
    pin(Ping(), TP04, b"")
    assert refuses(TP04, 25, b"\0").code == FailCode.FRAME


def test_sequence_and_redirect():
    pin(Sequence(3), TP04, h("00000003"))
    pin(Redirect("tp://h/"), TP03, h("00000007 74703a2f2f682f"))


# --- §2.2 frames whose layout differs between versions -----------------------------------------


def test_fail_references_exist_only_in_tp04():
    fail = Fail(FailCode.NO_SUCH_THING, "No", ((13, 5), (-2, 4)))
    assert encode_body(fail, TP03) == h("00000004 00000002 4e6f")
    pin(fail, TP04, h("00000004 00000002 4e6f  00000002 0000000d 00000005 fffffffe 00000004"))
    pin(Fail(FailCode.FRAME, "x"), TP03, h("00000001 00000001 78"))
    # A TP03 Fail with a reference list is not a TP03 Fail.
    assert refuses(TP03, 1, h("00000001 00000001 78 00000000")).code == FailCode.FRAME


def test_player_modtime_exists_only_in_tp04():
    player = Player(8, "hank", "Human", modtime=9)
    assert encode_body(player, TP03) == h("00000008 00000004 68616e6b 00000005 48756d616e")
    pin(player, TP04, h("00000008 00000004 68616e6b 00000005 48756d616e 0000000000000009"))
    pin(Player(8, "hank", "Human"), TP03, h("00000008 00000004 68616e6b 00000005 48756d616e"))


def test_get_id_sequence_from_exists_only_in_tp04():
    request = GetObjectIDs(key=-1, start=0, amount=-1, since=5)
    assert encode_body(request, TP03) == h("ffffffff 00000000 ffffffff")
    pin(request, TP04, h("ffffffff 00000000 ffffffff 0000000000000005"))
    pin(GetObjectIDs(-1, 0, -1), TP04, h("ffffffff 00000000 ffffffff ffffffffffffffff"))
    pin(GetObjectIDs(-1, 0, -1), TP03, h("ffffffff 00000000 ffffffff"))
    # SRV requires exactly 12 bytes on TP03 and 20 on TP04.
    assert refuses(TP03, 28, h("ffffffff 00000000 ffffffff ffffffffffffffff")).code == 1
    assert refuses(TP04, 28, h("ffffffff 00000000 ffffffff")).code == 1


def test_id_sequence_from_exists_only_in_tp04():
    reply = ObjectIDs(key=0, remaining=2, ids=((1, 3),), since=-1)
    pin(reply, TP03, h("00000000 00000002 00000001 00000001 0000000000000003"))
    pin(reply, TP04, h("00000000 00000002 00000001 00000001 0000000000000003 ffffffffffffffff"))


def test_time_remaining_tp03_is_just_the_time():
    pin(TimeRemaining(-1), TP03, h("ffffffff"))
    full = TimeRemaining(70, 2, 1, "T1", (1, 2))
    assert encode_body(full, TP03) == h("00000046")
    pin(full, TP04, h("00000046 00000002 00000001 00000002 5431 00000002 00000001 00000002"))


def test_game_is_tp04_only_and_ends_with_ctime():
    game = Game(
        name="tp",
        key="",
        versions=("0.3", "0.4"),
        server_version="0.7.0",
        server_type="tpserver-cpp",
        rule="TaE",
        rule_version="0.01",
        connections=(GameConnection("tp", "host", "127.0.0.1", 6923),),
        params=(GameParam(GameParamId.TURN, "", 2),),
        media_base="http://m/",
        ctime=0x6B0C033E,
    )
    expected = h(
        text("tp")
        + text("")
        + "00000002"
        + text("0.3")
        + text("0.4")
        + text("0.7.0")
        + text("tpserver-cpp")
        + text("TaE")
        + text("0.01")
        + "00000001"
        + text("tp")
        + text("host")
        + text("127.0.0.1")
        + "00001b0b"
        + "00000001 00000009"
        + text("")
        + "00000002"
        + text("http://m/")
        + "000000006b0c033e"
    )
    pin(game, TP04, expected)
    with pytest.raises(EncodingError) as caught:
        encode_body(game, TP03)
    assert caught.value.code == FailCode.UNAVAILABLE_PERMANENTLY
    assert refuses(TP03, 66, expected).code == FailCode.PROTOCOL


def test_tp04_only_types_cannot_go_to_tp03():
    for message in (SetFilters((0x1D00,)), OrderQueue(1, 5, 0xFFFFFFFF, 2, (0, 1))):
        with pytest.raises(EncodingError):
            encode(message, TP03, 1)
    pin(SetFilters((0x1D00,)), TP04, h("00000001 00001d00"))
    pin(
        OrderQueue(1, 5, 0xFFFFFFFF, 2, (0, 1)),
        TP04,
        h("00000001 0000000000000005 ffffffff 00000002 00000002 00000000 00000001"),
    )


# --- positional and container queries (6, 29, 30) ----------------------------------------------


@pytest.mark.parametrize("version", [TP03, TP04])
def test_position_queries(version):
    sphere = "0000000000000001 0000000000000002 fffffffffffffffd 000000000000000a"
    pin(GetObjectsByPos(Vec3(1, 2, -3), 10), version, h(sphere))
    pin(GetObjectIDsByPos(Vec3(1, 2, -3), 10), version, h(sphere))


def test_objects_by_container_is_a_single_u32():
    pin(GetObjectIDsByContainer(7), TP03, h("00000007"))
    # PY's (unused) class would send a GetWithID list; SRV requires exactly 4 bytes.
    assert refuses(TP04, 30, h("00000001 00000007")).code == FailCode.FRAME


# --- other shared layouts -------------------------------------------------------------------


def test_slots_and_board_messages():
    pin(RemoveOrder(5, (10, 4, 1)), TP04, h("00000005 00000003 0000000a 00000004 00000001"))
    message = BoardMessage(board=1, slot=-1, subject="S", body="B", turn=3, references=((-2, 1),))
    pin(
        message,
        TP03,
        h("00000001 ffffffff 00000000 00000001 53 00000001 42 0000000300000001 fffffffe 00000001"),
    )


def test_design_and_features():
    design = Design(-1, 0, (1,), "D", "", -1, -1, ((3, 1),), "", ((2, "x"),))
    pin(
        design,
        TP04,
        h(
            "ffffffff 0000000000000000 00000001 00000001 00000001 44 00000000"
            "ffffffff ffffffff 00000001 00000003 00000001 00000000"
            "00000001 00000002 00000001 78"
        ),
    )
    pin(Features((5, 6, 1000)), TP03, h("00000003 00000005 00000006 000003e8"))


# --- §3.1 TP03 objects ----------------------------------------------------------------------

TP03_HEAD = (
    "00000005 {type:08x} 00000001 53 000000000000ea60"
    " 0000000000000001 fffffffffffffffe 0000000000000003"  # position
    " 0000000000000000 0000000000000000 ffffffffffffffff"  # velocity
    " 00000001 00000003"  # contains
    " 00000002 00000001 00000002"  # order types
    " 00000000 0000000000000003 0000000000000000"  # orders, modtime, 8 bytes of padding
)


@pytest.mark.parametrize(
    "extra, extra_hex",
    [
        (UniverseExtra(age=2), "00000002"),
        (GalaxyExtra(), ""),
        (StarSystemExtra(), ""),
        (
            PlanetExtra(owner=-1, resources=((3, 1, 0, 0),)),
            "ffffffff 00000001 00000003 00000001 00000000 00000000",
        ),
        (FleetExtra(owner=1, ships=((1, 1),), damage=0), "00000001 00000001 00000001 00000001 00000000"),
        (WormholeExtra(end=Vec3(1, 2, -3)), "0000000000000001 0000000000000002 fffffffffffffffd"),
    ],
)
def test_tp03_object_types(extra, extra_hex):
    obj = Tp03Object(
        id=5,
        name="S",
        size=60000,
        position=Vec3(1, -2, 3),
        velocity=Vec3(0, 0, -1),
        contains=(3,),
        order_types=(1, 2),
        orders=0,
        modtime=3,
        extra=extra,
    )
    pin(obj, TP03, h(TP03_HEAD.format(type=extra.OBJECT_TYPE) + extra_hex))
    assert obj.type == extra.OBJECT_TYPE


def test_tp03_object_types_beyond_5_do_not_exist():
    body = h(TP03_HEAD.format(type=6))
    assert refuses(TP03, 7, body).code == FailCode.FRAME


def test_objects_are_version_specific():
    tp03 = Tp03Object(0, "U", 1, Vec3(0, 0, 0), Vec3(0, 0, 0), (), (), 0, 1, UniverseExtra(0))
    tp04 = Tp04Object(0, 0, "U", "", 0, (), 1, ())
    with pytest.raises(EncodingError):
        encode(tp03, TP04, 1)
    with pytest.raises(EncodingError):
        encode(tp04, TP03, 1)


# --- §3.2 TP04 objects ----------------------------------------------------------------------


def test_tp04_star_system_as_tpserver_cpp_sends_it():
    """The 132-byte Star System frame of the java-tp04 capture, field by field."""
    star = Tp04Object(
        id=2,
        type=2,
        name="0, 0",
        description="",
        parent=1,
        contains=(3,),
        modtime=3,
        groups=(
            (PositionParam(1, 80001, 0), VelocityParam(0, 0, 0), SizeParam(60000)),
            (IntegerParam(1), IntegerParam(0), IntegerParam(0)),
        ),
    )
    expected = h(
        "00000002 00000002 00000004 302c2030 00000000 00000001 00000001 00000003"
        "0000000000000003 00000000000000000000000000000000"
        "0000000000000001 0000000000013881 0000000000000000 00000000"
        "0000000000000000 0000000000000000 0000000000000000 00000000"
        "000000000000ea60"
        "00000001 00000000 00000000"
    )
    assert len(expected) == 132
    pin(star, TP04, expected, object_descs={2: STAR_SYSTEM})


TP04_HEAD = "00000001 00000063 00000000 00000000 00000000 00000000 0000000000000000" + "00" * 16


@pytest.mark.parametrize(
    "param, param_hex",
    [
        (PositionParam(1, -1, 2, 7), "0000000000000001 ffffffffffffffff 0000000000000002 00000007"),
        (VelocityParam(0, 0, 5), "0000000000000000 0000000000000000 0000000000000005 00000000"),
        (AccelerationParam(-1, 0, 0, 3), "ffffffffffffffff 0000000000000000 0000000000000000 00000003"),
        (BoundPositionParam(-1), "ffffffff"),
        (OrderQueueParam(9), "00000009"),
        (ResourceListParam(((1, 2, 3, 4),)), "00000001 00000001 00000002 00000003 00000004"),
        (ReferenceParam(7, 3), "00000007 00000003"),
        (ReferenceParam(-2, 4), "fffffffe 00000004"),
        (ReferenceQuantityListParam(((9, 12, 1),)), "00000001 00000009 0000000c 00000001"),
        (IntegerParam(5), "00000005"),
        (SizeParam(2**40), "0000010000000000"),
        (MediaParam("a/b"), "00000003 612f62"),
        (InfluenceParam(3), "0000000000000003"),
    ],
)
def test_tp04_object_parameter_types(param, param_hex):
    desc = ObjectDesc(
        99, "Thing", "", 1, (ObjectParamGroupDesc(1, "G", "", (ObjectParamDesc("p", param.PARAM_TYPE, ""),)),)
    )
    obj = Tp04Object(1, 99, "", "", 0, (), 0, ((param,),))
    pin(obj, TP04, h(TP04_HEAD + param_hex), object_descs={99: desc})


def test_all_twelve_object_parameter_types_are_covered():
    assert {
        param.PARAM_TYPE
        for param in (
            PositionParam(0, 0, 0),
            VelocityParam(0, 0, 0),
            AccelerationParam(0, 0, 0),
            BoundPositionParam(0),
            OrderQueueParam(0),
            ResourceListParam(),
            ReferenceParam(0, 0),
            ReferenceQuantityListParam(),
            IntegerParam(0),
            SizeParam(0),
            MediaParam(""),
            InfluenceParam(0),
        )
    } == set(ObjectParamType)


def test_tp04_object_needs_its_description_and_no_bytes_more_or_less():
    desc = ObjectDesc(
        99,
        "Thing",
        "",
        1,
        (ObjectParamGroupDesc(1, "G", "", (ObjectParamDesc("p", ObjectParamType.INTEGER, ""),)),),
    )
    body = h(TP04_HEAD + "00000005")
    assert refuses(TP04, 7, body).code == FailCode.NO_SUCH_THING
    assert refuses(TP04, 7, body + b"\0", object_descs={99: desc}).code == FailCode.FRAME
    assert refuses(TP04, 7, body[:-1], object_descs={99: desc}).code == FailCode.FRAME


def test_object_desc():
    desc = ObjectDesc(
        1,
        "Galaxy",
        "G",
        3,
        (ObjectParamGroupDesc(1, "P", "p", (ObjectParamDesc("Size", ObjectParamType.SIZE, "s"),)),),
    )
    pin(
        desc,
        TP04,
        h(
            "00000001 00000006 47616c617879 00000001 47 0000000000000003"
            "00000001 00000001 00000001 50 00000001 70"
            "00000001 00000004 53697a65 00000009 00000001 73"
        ),
    )


# --- §4 orders ------------------------------------------------------------------------------


def test_order_desc():
    desc = OrderDesc(2, "Move", "M", (OrderParamDesc("Star System", OrderParamType.OBJECT, "S"),), 5)
    pin(
        desc,
        TP03,
        h(
            "00000002 00000004 4d6f7665 00000001 4d"
            "00000001 0000000b 537461722053797374656d 00000002 00000001 53"
            "0000000000000005"
        ),
    )


def _descs(*param_types):
    params = tuple(OrderParamDesc(f"p{n}", t, "") for n, t in enumerate(param_types))
    return {2: OrderDesc(2, "Test", "", params, 1)}


def test_order_head_with_read_only_turns_and_resources():
    order = Order(id=7, slot=-1, type=2, args=(), turns=3, resources=((1, 5),))
    pin(
        order, TP04, h("00000007 ffffffff 00000002 00000003 00000001 00000001 00000005"), order_descs=_descs()
    )


ORDER_HEAD = "00000007 ffffffff 00000002 00000000 00000000"

ARG_CASES = [
    (AbsSpaceCoordsArg(1, 2, -3), "0000000000000001 0000000000000002 fffffffffffffffd"),
    (TimeArg(3, 10), "00000003 0000000a"),
    (PlayerArg(4, 0x18), "00000004 00000018"),
    (RelSpaceCoordsArg(5, 1, 2, 3), "00000005 0000000000000001 0000000000000002 0000000000000003"),
    (RangeArg(5, 0, 10, 1), "00000005 00000000 0000000a 00000001"),
    (
        ListArg(selection=((1, 2),), options=((1, "A", 3),)),
        "00000001 00000001 00000001 41 00000003  00000001 00000001 00000002",
    ),
    (StringArg("hi", 1024), "00000400 00000002 6869"),
    (ReferenceArg(5, (1, 7)), "00000005 00000002 00000001 00000007"),
    (ReferenceListArg((5, 6), (1,)), "00000002 00000005 00000006 00000001 00000001"),
]

TP04_ONLY_ARG_CASES = [
    (ObjectArg(2, (2, 3)), "00000002 00000002 00000002 00000003"),
    (
        ResourceListArg(selected=((1, 2),), allowed=((1, 10),), max_mass=100, max_volume=50),
        "00000001 00000001 0000000a 00000064 00000032 00000001 00000001 00000002",
    ),
    (
        GenericReferenceQuantityListArg(
            selection=((1, 2),),
            weight_maximums=((10, ((9, 1),)),),
            options=((1, "B", -1, ((9, 1),), (2,)),),
        ),
        "00000001 0000000a 00000001 00000009 00000001"
        "00000001 00000001 00000001 42 ffffffff 00000001 00000009 00000001 00000001 00000002"
        "00000001 00000001 00000002",
    ),
]


@pytest.mark.parametrize("version", [TP03, TP04])
@pytest.mark.parametrize("arg, arg_hex", ARG_CASES)
def test_order_arguments_shared_by_both_versions(version, arg, arg_hex):
    order = InsertOrder(id=7, slot=-1, type=2, args=(arg,))
    pin(order, version, h(ORDER_HEAD + arg_hex), order_descs=_descs(arg.PARAM_TYPE))


@pytest.mark.parametrize("arg, arg_hex", TP04_ONLY_ARG_CASES)
def test_order_arguments_of_tp04(arg, arg_hex):
    order = InsertOrder(id=7, slot=-1, type=2, args=(arg,))
    pin(order, TP04, h(ORDER_HEAD + arg_hex), order_descs=_descs(arg.PARAM_TYPE))


def test_tp03_object_argument_is_only_the_object_id():
    pin(
        InsertOrder(7, -1, 2, (ObjectArg(2),)),
        TP03,
        h(ORDER_HEAD + "00000002"),
        order_descs=_descs(OrderParamType.OBJECT),
    )
    # valid_types is read-only TP04 data; it is not written for TP03.
    assert encode_body(InsertOrder(7, -1, 2, (ObjectArg(2, (3,)),)), TP03) == h(ORDER_HEAD + "00000002")


@pytest.mark.parametrize("arg, arg_hex", TP04_ONLY_ARG_CASES[1:])
def test_tp03_has_no_resource_list_or_generic_quantity_arguments(arg, arg_hex):
    with pytest.raises(EncodingError):
        encode_body(InsertOrder(7, -1, 2, (arg,)), TP03)
    error = refuses(TP03, 12, h(ORDER_HEAD + arg_hex), order_descs=_descs(arg.PARAM_TYPE))
    assert error.code == FailCode.FRAME


def test_all_twelve_order_argument_types_are_covered():
    covered = {arg.PARAM_TYPE for arg, _ in ARG_CASES + TP04_ONLY_ARG_CASES}
    assert covered == set(OrderParamType)


def test_the_package_exports_every_public_name():
    import types

    import protocol

    public = sorted(
        name
        for name, value in vars(protocol).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    )
    assert protocol.__all__ == public
