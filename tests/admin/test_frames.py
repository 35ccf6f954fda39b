"""protocol.admin against the bytes recorded between tpadmin-cpp and tpserver-cpp
(spec/admin-protocol.md §4): every frame encodes to the recorded bytes and decodes back."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol import Connect, Deframer, Fail, FailCode, Frame, Login, Okay, ProtocolError, Sequence, Version
from protocol.admin import (
    AdminFrameType,
    AdminLogLevel,
    Command,
    CommandDesc,
    CommandParam,
    CommandParamType,
    CommandResult,
    CommandTypesList,
    GetCommandDesc,
    GetCommandTypes,
    LogMessage,
    decode_admin,
    encode_admin,
    encode_admin_reply,
    is_admin_request,
)
from protocol.records import IdModtime


def h(text: str) -> bytes:
    """Bytes from the spec's hex dumps (spaces and line breaks ignored)."""
    return bytes.fromhex("".join(text.split()))


def text_frame(header: str, text: str) -> bytes:
    data = text.encode()
    return h(header) + len(data).to_bytes(4, "big") + data


GET_SETTING = CommandDesc(
    8,
    "get-setting",
    "Gets a setting.",
    (CommandParam("setting", CommandParamType.STRING, "Setting to get."),),
    0x6B0E88E2,
)
SET_SETTING = CommandDesc(
    7,
    "set-setting",
    "Sets a setting.",
    (
        CommandParam("setting", CommandParamType.STRING, "Setting to set."),
        CommandParam("value", CommandParamType.STRING, "Value to set."),
    ),
    0x6B0E88E2,
)
STATUS = CommandDesc(19, "status", "Server status.", (), 0x6B0E88E2)
NUKE = CommandDesc(
    21,
    "nuke-object",
    "Removes an object.",
    (CommandParam("objectid", 1, "The object to remote."),),
    0x6B0E88E2,
)
DESCS = {d.id: d for d in (GET_SETTING, SET_SETTING, STATUS, NUKE)}

CONNECT = h("""
    54 50 04 00 00 00 00 01 00 00 00 03 00 00 00 32   00 00 00 2e 6c 69 62 74 70 70 72 6f 74 6f 2d 63
    70 70 2f 30 2e 31 2e 39 20 74 70 61 64 6d 69 6e   2d 63 70 70 2f 30 2e 31 2e 30 20 28 61 64 6d 69  6e 29
""")
LOGIN = h("""
    54 50 04 00 00 00 00 02 00 00 00 04 00 00 00 14   00 00 00 05 74 70 61 64 6d 00 00 00 07 73 65 63
    72 65 74 37
""")
BAD_LOGIN = h("""
    54 50 04 00 00 00 00 02 00 00 00 01 00 00 00 38   00 00 00 01 00 00 00 2c 41 64 6d 69 6e 20 4c 6f
    67 69 6e 20 45 72 72 6f 72 20 2d 20 62 61 64 20   75 73 65 72 6e 61 6d 65 20 6f 72 20 70 61 73 73
    77 6f 72 64 00 00 00 00
""")
WELCOME = h("54 50 04 00 00 00 00 02 00 00 00 00 00 00 00 0b  00 00 00 07 57 65 6c 63 6f 6d 65")
GET_TYPES = h("""
    54 50 04 00 00 00 00 03 00 00 03 ec 00 00 00 14   ff ff ff ff 00 00 00 00 00 00 22 21 ff ff ff ff
    ff ff ff ff
""")
GET_DESC = h("54 50 04 00 00 00 00 04 00 00 03 ea 00 00 00 08   00 00 00 01 00 00 00 00")
SEQUENCE = h("54 50 04 00 00 00 00 04 00 00 00 02 00 00 00 04   00 00 00 01")
DESC_8 = h("""
    54 50 04 00 00 00 00 0c 00 00 03 eb 00 00 00 54   00 00 00 08 00 00 00 0b 67 65 74 2d 73 65 74 74
    69 6e 67 00 00 00 0f 47 65 74 73 20 61 20 73 65   74 74 69 6e 67 2e 00 00 00 01 00 00 00 07 73 65
    74 74 69 6e 67 00 00 00 00 00 00 00 0f 53 65 74   74 69 6e 67 20 74 6f 20 67 65 74 2e 00 00 00 00
    6b 0e 88 e2
""")
COMMAND_STATUS = h("54 50 04 00 00 00 00 1a 00 00 03 ee 00 00 00 04  00 00 00 13")
COMMAND_GET = h("""
    54 50 04 00 00 00 00 1c 00 00 03 ee 00 00 00 0f   00 00 00 08 00 00 00 07 74 70 5f 70 6f 72 74
""")
COMMAND_SET = h("""
    54 50 04 00 00 00 00 1d 00 00 03 ee 00 00 00 1a   00 00 00 07 00 00 00 0d 74 70 61 64 6d 69 6e 5f
    70 72 6f 62 65 00 00 00 01 31
""")
RESULT_OK = h("""
    54 50 04 00 00 00 00 20 00 00 03 ef 00 00 00 25   00 00 00 00 00 00 00 1d 54 68 65 20 63 75 72 72
    65 6e 74 20 74 75 72 6e 20 6e 75 6d 62 65 72 20   69 73 20 30 2e
""")
LOG_INFO = h("""
    54 50 04 00 00 00 00 00 00 00 03 e8 00 00 00 38   00 00 00 00 6b 0e 88 e5 00 00 00 01 00 00 00 28
    53 65 74 74 69 6e 67 20 76 61 6c 75 65 20 6f 66   20 22 74 70 61 64 6d 69 6e 5f 70 72 6f 62 65 22
    20 74 6f 20 22 31 22 2e
""")

RECORDED = [
    pytest.param(CONNECT, 1, Connect("libtpproto-cpp/0.1.9 tpadmin-cpp/0.1.0 (admin)"), id="connect"),
    pytest.param(
        text_frame(
            "54 50 04 00 00 00 00 01 00 00 00 00 00 00 00 3e",
            "Protocol check ok, continue! Welcome to tpserver-cpp 0.7.0",
        ),
        1,
        Okay("Protocol check ok, continue! Welcome to tpserver-cpp 0.7.0"),
        id="okay-connect",
    ),
    pytest.param(LOGIN, 2, Login("tpadm", "secret7"), id="login"),
    pytest.param(WELCOME, 2, Okay("Welcome"), id="okay-login"),
    pytest.param(
        BAD_LOGIN, 2, Fail(FailCode.FRAME, "Admin Login Error - bad username or password"), id="fail-login"
    ),
    pytest.param(GET_TYPES, 3, GetCommandTypes(-1, 0, 8737, -1), id="get-command-types"),
    pytest.param(GET_DESC, 4, GetCommandDesc((0,)), id="get-command-desc"),
    pytest.param(SEQUENCE, 4, Sequence(1), id="sequence"),
    pytest.param(DESC_8, 12, GET_SETTING, id="command-desc"),
    pytest.param(COMMAND_STATUS, 26, Command(19), id="command-no-params"),
    pytest.param(COMMAND_GET, 28, Command(8, ("tp_port",)), id="command-one-string"),
    pytest.param(COMMAND_SET, 29, Command(7, ("tpadmin_probe", "1")), id="command-two-strings"),
    pytest.param(RESULT_OK, 32, CommandResult(0, "The current turn number is 0."), id="command-result"),
    pytest.param(
        LOG_INFO,
        0,
        LogMessage(0x6B0E88E5, AdminLogLevel.INFO, 'Setting value of "tpadmin_probe" to "1".'),
        id="log",
    ),
]


def frame_of(data: bytes) -> Frame:
    deframer = Deframer()
    deframer.feed(data)
    frame = deframer.next_frame()
    assert frame is not None and deframer.next_frame() is None and deframer.buffered == 0
    return frame


@pytest.mark.parametrize(("data", "sequence", "message"), RECORDED)
def test_recorded_frames_encode_and_decode(data, sequence, message):
    assert encode_admin(message, sequence) == data
    frame = frame_of(data)
    assert frame.sequence == sequence
    assert decode_admin(frame, command_descs=DESCS) == message


def test_the_failed_result_of_game_load():
    data = encode_admin(CommandResult(1, "Loading game failed, see log."), 0x1A)
    assert data[:28] == h(
        "54 50 04 00 00 00 00 1a 00 00 03 ef 00 00 00 25   00 00 00 01 00 00 00 1d 4c 6f 61 64"
    )


def test_the_recorded_command_types_list():
    """22 ids, each with the same modtime, remaining 0, the junk seqkey and from -1: 284 bytes."""
    ids = tuple(IdModtime(i, 0x6B0E88E2) for i in range(22))
    data = encode_admin(CommandTypesList(0x6465677D, 0, ids, -1), 3)
    assert len(data) == 16 + 284
    assert data[:52] == h("""
        54 50 04 00 00 00 00 03 00 00 03 ed 00 00 01 1c   64 65 67 7d 00 00 00 00 00 00 00 16 00 00 00 00
        00 00 00 00 6b 0e 88 e2 00 00 00 01 00 00 00 00   6b 0e 88 e2
    """)
    assert data[-20:] == h("00 00 00 15 00 00 00 00 6b 0e 88 e2 ff ff ff ff ff ff ff ff")
    assert decode_admin(frame_of(data)) == CommandTypesList(0x6465677D, 0, ids, -1)


def test_an_integer_parameter_is_a_u32():
    desc_bytes = encode_admin(NUKE, 5)
    assert (
        h("00 00 00 01 00 00 00 08") + b"objectid" + h("00 00 00 01 00 00 00 15") + b"The object to remote."
        in desc_bytes
    )
    data = encode_admin(Command(21, (4_000_000_000,)), 9)
    assert data[16:] == h("00 00 00 15 ee 6b 28 00")
    assert decode_admin(frame_of(data), command_descs=DESCS) == Command(21, (4_000_000_000,))


def test_the_log_level_zero_example():
    data = encode_admin(LogMessage(0x6B0E88E3, AdminLogLevel.DEBUG, "doing command frame"), 0)
    assert data.startswith(
        h(
            "54 50 04 00 00 00 00 00 00 00 03 e8 00 00 00 23"
            "00 00 00 00 6b 0e 88 e3 00 00 00 00 00 00 00 13 64 6f"
        )
    )


def test_a_reply_of_descriptions_is_one_sequence_then_the_items():
    data = encode_admin_reply([GET_SETTING], 12)
    assert data == encode_admin(Sequence(1), 12) + DESC_8


def test_header_and_body_in_separate_reads_make_one_frame():
    """libtpproto-cpp writes the header and the body with two send() calls."""
    deframer = Deframer()
    deframer.feed(LOGIN[:16])
    assert deframer.next_frame() is None
    deframer.feed(LOGIN[16:])
    assert decode_admin(deframer.next_frame()) == Login("tpadm", "secret7")


def test_a_command_without_its_description_is_fail_4():
    with pytest.raises(ProtocolError) as caught:
        decode_admin(frame_of(COMMAND_GET), command_descs={})
    assert caught.value.code == FailCode.NO_SUCH_THING
    assert caught.value.message == "Command type does not exist"
    assert caught.value.sequence == 28


@pytest.mark.parametrize(
    "body",
    [
        h("00 00 00 08"),  # the string argument is missing
        h("00 00 00 08 00 00 00 09 74 70"),  # a string cut short
        h("00 00 00 13 00"),  # a byte after a command without parameters
        h("00 00"),  # not even an id
    ],
)
def test_bad_command_bodies_are_fail_1(body):
    frame = Frame(Version.TP04, 0, 7, AdminFrameType.COMMAND, body)
    with pytest.raises(ProtocolError) as caught:
        decode_admin(frame, command_descs=DESCS)
    assert caught.value.code == FailCode.FRAME
    assert caught.value.sequence == 7


def test_unknown_types_and_tp03_frames_are_fail_0():
    for frame in (
        Frame(Version.TP04, 0, 3, AdminFrameType.COMMAND_UPDATE, b""),
        Frame(Version.TP04, 0, 3, 5, h("00 00 00 00")),
        Frame(Version.TP03, 0, 3, 3, h("00 00 00 00")),
    ):
        with pytest.raises(ProtocolError) as caught:
            decode_admin(frame)
        assert caught.value.code == FailCode.PROTOCOL


def test_requests_and_replies_are_told_apart():
    assert all(is_admin_request(t) for t in (3, 4, 1002, 1004, 1006))
    assert not any(is_admin_request(t) for t in (0, 1, 2, 1000, 1003, 1005, 1007))


@given(
    st.integers(0, 2**32 - 1),
    st.lists(st.one_of(st.text(max_size=30), st.integers(0, 2**32 - 1)), max_size=6),
)
def test_any_command_round_trips_through_its_description(command_id, arguments):
    desc = CommandDesc(
        command_id,
        "c",
        "",
        tuple(
            CommandParam(
                f"p{i}", CommandParamType.STRING if isinstance(a, str) else CommandParamType.INTEGER, ""
            )
            for i, a in enumerate(arguments)
        ),
        1,
    )
    message = Command(command_id, tuple(arguments))
    assert decode_admin(frame_of(encode_admin(message, 1)), command_descs={command_id: desc}) == message


@given(st.binary(max_size=64), st.sampled_from([1000, 1002, 1003, 1004, 1005, 1006, 1007]))
def test_any_body_decodes_or_raises_protocol_error(body, frame_type):
    try:
        decode_admin(Frame(Version.TP04, 0, 1, frame_type, body), command_descs=DESCS)
    except ProtocolError:
        pass
