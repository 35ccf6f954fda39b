"""The Thousand Parsec remote-admin protocol, as tpadmin-cpp and tpserver-cpp speak it.

The byte-level reference is ../shared/spec/admin-protocol.md. Every admin frame uses the TP04
header (``54 50 04 00``, sequence, type, length), in both directions, and the TP04 body of the
frames it shares with the game protocol: Okay (0), Fail (1, with its reference list), Sequence
(2), Connect (3) and Login (4) are ``protocol.messages`` classes. The admin frames are::

    1000 LogMessage        S→C, unasked, sequence 0   u64 time, u32 level, str text
    1002 GetCommandDesc    C→S                        list<u32> ids (tpadmin-cpp sends one id)
    1003 CommandDesc       S→C, after Sequence(n)     u32 id, str name, str help,
                                                      list<(str name, u32 type, str help)> params,
                                                      u64 modtime
    1004 GetCommandTypes   C→S                        j32 key, u32 start, j32 amount, j64 from
    1005 CommandTypesList  S→C                        j32 key, u32 remaining,
                                                      list<(u32 id, u64 modtime)>, j64 from
    1006 Command           C→S                        u32 id, then one value per parameter of
                                                      the command's description, in order:
                                                      str for type 0, u32 for type 1
    1007 CommandResult     S→C                        u32 status (0 = success), str text

(1001 CommandUpdate exists in libtpproto-cpp's table but no server sends it, so it has no
class here.) ``Command`` has no self-describing layout: like an Order, it is decoded with the
descriptions the server published (``command_descs``), and an id without one raises
``MissingDescriptionError`` (code 4, "Command type does not exist", as tpserver-cpp answers).

``decode_admin(frame, command_descs=...)`` and ``encode_admin(message, sequence)`` are the
admin counterparts of ``protocol.decode``/``protocol.encode``; they raise only
``ProtocolError`` (``EncodingError`` for a message that cannot be encoded).
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from io import BytesIO
from typing import Any, ClassVar, NamedTuple

from construct import Construct, ConstructError, Struct

from . import codec
from .enums import FailCode, FrameType, Version, coerce
from .errors import EncodingError, MissingDescriptionError, ProtocolError
from .header import Frame, encode_header
from .messages import Connect, Fail, Login, Message, Okay, Sequence
from .records import IdModtime
from .schema import (
    J32,
    J64,
    STRING,
    TIME,
    U32,
    Field,
    LeftoverBytes,
    List,
    StructCodec,
    TruncatedBody,
    Tuple,
    tuple_of,
    wire,
)

#: The admin protocol is TP04 framing only (tpadmin-cpp never sends TP03).
ADMIN_VERSION = Version.TP04

#: The port tpserver-cpp's admin listener uses by default (``admin_tcp_port``).
DEFAULT_ADMIN_PORT = 6925


class AdminFrameType(enum.IntEnum):
    """The frame types of the admin protocol (libtpproto-cpp ``ftad_*``)."""

    LOG_MESSAGE = 1000
    COMMAND_UPDATE = 1001
    GET_COMMAND_DESC = 1002
    COMMAND_DESC = 1003
    GET_COMMAND_TYPES = 1004
    COMMAND_TYPES_LIST = 1005
    COMMAND = 1006
    COMMAND_RESULT = 1007


class CommandParamType(enum.IntEnum):
    """The type of a command parameter: how tpadmin-cpp reads and sends its value."""

    STRING = 0
    INTEGER = 1


class AdminLogLevel(enum.IntEnum):
    """LogMessage levels; tpadmin-cpp shows DEBUG only after the user types ``debug``."""

    DEBUG = 0
    INFO = 1
    WARNING = 2
    ERROR = 3


#: CommandResult status for success; any other value is shown as an error.
RESULT_OK = 0
RESULT_FAILED = 1


class CommandParam(NamedTuple):
    """One parameter of a command description: its name, ``CommandParamType`` and help text.
    The wire has nothing else (no default, no length limit)."""

    name: str
    type: CommandParamType | int
    help: str


class AdminMessage:
    """Base of the admin frames (1000–1007). ``TYPE`` is the frame type, ``LAYOUTS`` the body."""

    __slots__ = ()
    TYPE: ClassVar[AdminFrameType]
    LAYOUTS: ClassVar[dict[Version, tuple[Field, ...]]] = {}


@wire(
    tp04=[Field("time", TIME), Field("level", U32, lambda v: coerce(AdminLogLevel, v)), Field("text", STRING)]
)
@dataclass(frozen=True, slots=True)
class LogMessage(AdminMessage):
    """1000: one line of the server's log, sent unasked (sequence 0) to logged-in admins.
    ``time`` is Unix seconds."""

    TYPE: ClassVar[AdminFrameType] = AdminFrameType.LOG_MESSAGE
    time: int
    level: AdminLogLevel | int
    text: str


@wire(tp04=[Field("ids", List(U32), tuple)])
@dataclass(frozen=True, slots=True)
class GetCommandDesc(AdminMessage):
    """1002 (libtpproto-cpp ``CommandDesc_Get``): describe these command ids. Answered with
    Sequence(n), then a CommandDesc (or a Fail) per id."""

    TYPE: ClassVar[AdminFrameType] = AdminFrameType.GET_COMMAND_DESC
    ids: tuple[int, ...]


def _params(items: Any) -> tuple[CommandParam, ...]:
    return tuple(CommandParam(name, coerce(CommandParamType, kind), text) for name, kind, text in items)


@wire(
    tp04=[
        Field("id", U32),
        Field("name", STRING),
        Field("help", STRING),
        Field("params", List(Tuple(STRING, U32, STRING)), _params),
        Field("modtime", TIME),
    ]
)
@dataclass(frozen=True, slots=True)
class CommandDesc(AdminMessage):
    """1003: a command the server offers. tpadmin-cpp lower-cases what the user types, so a
    ``name`` the user can call is lower case without spaces."""

    TYPE: ClassVar[AdminFrameType] = AdminFrameType.COMMAND_DESC
    id: int
    name: str
    help: str
    params: tuple[CommandParam, ...]
    modtime: int


@wire(tp04=[Field("key", J32), Field("start", U32), Field("amount", J32), Field("since", J64)])
@dataclass(frozen=True, slots=True)
class GetCommandTypes(AdminMessage):
    """1004 (``CommandTypes_Get``, "GetCommandDescIDs"): the GetIDSequence body of TP04.
    tpadmin-cpp sends key -1 (a new sequence), start 0, amount 8737 and since -1."""

    TYPE: ClassVar[AdminFrameType] = AdminFrameType.GET_COMMAND_TYPES
    key: int
    start: int
    amount: int
    since: int = -1


@wire(
    tp04=[
        Field("key", J32),
        Field("remaining", J32),
        Field("ids", List(Tuple(U32, TIME)), tuple_of(IdModtime)),
        Field("since", J64),
    ]
)
@dataclass(frozen=True, slots=True)
class CommandTypesList(AdminMessage):
    """1005 (``CommandTypes_List``, "CommandDescIDs"): the TP04 IDSequence body."""

    TYPE: ClassVar[AdminFrameType] = AdminFrameType.COMMAND_TYPES_LIST
    key: int
    remaining: int
    ids: tuple[IdModtime, ...]
    since: int = -1


@dataclass(frozen=True, slots=True)
class Command(AdminMessage):
    """1006: run a command. ``arguments`` hold one value per parameter of its description: a
    ``str`` for a string parameter, an ``int`` (u32) for an integer one. The wire carries no
    count and no type tags, so decoding needs the description."""

    TYPE: ClassVar[AdminFrameType] = AdminFrameType.COMMAND
    id: int
    arguments: tuple[str | int, ...] = ()


@wire(tp04=[Field("status", U32), Field("text", STRING)])
@dataclass(frozen=True, slots=True)
class CommandResult(AdminMessage):
    """1007: the answer to a Command; ``status`` 0 is success, anything else an error. The
    text may hold several lines."""

    TYPE: ClassVar[AdminFrameType] = AdminFrameType.COMMAND_RESULT
    status: int
    text: str


#: Every frame an admin connection carries, as decoded.
AnyAdminMessage = (
    Okay
    | Fail
    | Sequence
    | Connect
    | Login
    | LogMessage
    | GetCommandDesc
    | CommandDesc
    | GetCommandTypes
    | CommandTypesList
    | Command
    | CommandResult
)

#: Frames the game protocol defines that the admin protocol uses too, by type.
SHARED_TYPES: Mapping[int, type[Message]] = {
    FrameType.OKAY: Okay,
    FrameType.FAIL: Fail,
    FrameType.SEQUENCE: Sequence,
    FrameType.CONNECT: Connect,
    FrameType.LOGIN: Login,
}

_LAID_OUT: tuple[type[AdminMessage], ...] = (
    LogMessage,
    GetCommandDesc,
    CommandDesc,
    GetCommandTypes,
    CommandTypesList,
    CommandResult,
)
_CODECS: dict[int, StructCodec] = {
    cls.TYPE: StructCodec(cls, cls.LAYOUTS[ADMIN_VERSION]) for cls in _LAID_OUT
}

#: Frames a client sends (the server decodes these).
REQUEST_TYPES = frozenset(
    {
        FrameType.CONNECT,
        FrameType.LOGIN,
        AdminFrameType.GET_COMMAND_DESC,
        AdminFrameType.GET_COMMAND_TYPES,
        AdminFrameType.COMMAND,
    }
)


def is_admin_request(frame_type: int) -> bool:
    """Whether ``frame_type`` is one a client sends on an admin connection."""
    return frame_type in REQUEST_TYPES


# --------------------------------------------------------------------------------------------
# Command: the arguments laid out by the description
# --------------------------------------------------------------------------------------------

_ID = struct.Struct(">I")
_ARGUMENT_CONSTRUCTS: dict[int, Construct] = {CommandParamType.STRING: STRING, CommandParamType.INTEGER: U32}
_ARGUMENT_STRUCTS: dict[tuple[int, ...], Struct] = {}


def _argument_struct(kinds: tuple[int, ...]) -> Struct:
    """The construct of a Command body's arguments for these parameter types (cached)."""
    found = _ARGUMENT_STRUCTS.get(kinds)
    if found is None:
        found = Struct(*(f"a{i}" / _ARGUMENT_CONSTRUCTS[kind] for i, kind in enumerate(kinds)))
        _ARGUMENT_STRUCTS[kinds] = found
    return found


def _decode_command(body: bytes, descs: Mapping[int, CommandDesc] | None) -> Command:
    if len(body) < 4:
        raise TruncatedBody("a Command needs at least its id")
    (command_id,) = _ID.unpack_from(body)
    desc = (descs or {}).get(command_id)
    if desc is None:
        raise MissingDescriptionError("command", command_id, "Command type does not exist")
    kinds = tuple(int(param.type) for param in desc.params)
    unknown = [kind for kind in kinds if kind not in _ARGUMENT_CONSTRUCTS]
    if unknown:
        raise ProtocolError(
            FailCode.FRAME, f"command {command_id} has a parameter of unknown type {unknown[0]}"
        )
    stream = BytesIO(body)
    stream.seek(4)
    parsed = _argument_struct(kinds).parse_stream(stream)
    if stream.tell() != len(body):
        raise LeftoverBytes(len(body) - stream.tell())
    return Command(command_id, tuple(parsed[f"a{i}"] for i in range(len(kinds))))


def _encode_command(message: Command) -> bytes:
    kinds = []
    for value in message.arguments:
        if isinstance(value, str):
            kinds.append(CommandParamType.STRING)
        elif isinstance(value, int) and not isinstance(value, bool):
            kinds.append(CommandParamType.INTEGER)
        else:
            raise EncodingError(f"a Command argument must be str or int, not {value!r}")
    values = {f"a{i}": value for i, value in enumerate(message.arguments)}
    return _ID.pack(message.id) + bytes(_argument_struct(tuple(kinds)).build(values))


# --------------------------------------------------------------------------------------------
# decode / encode
# --------------------------------------------------------------------------------------------


def decode_admin(frame: Frame, *, command_descs: Mapping[int, CommandDesc] | None = None) -> AnyAdminMessage:
    """The typed message in an admin ``frame``, in either direction.

    ``command_descs`` (command id → CommandDesc) is needed to decode a Command. Raises
    ``ProtocolError``: code 0 for a TP03 frame or a type the admin protocol lacks, code 1 for a
    short, long or malformed body, ``MissingDescriptionError`` (code 4) for a Command whose id
    has no description. The error's ``sequence`` is the frame's.
    """
    if frame.version != ADMIN_VERSION:
        raise ProtocolError(
            FailCode.PROTOCOL, "The admin protocol uses TP04 frames only", sequence=frame.sequence
        )
    shared = SHARED_TYPES.get(frame.type)
    if shared is not None:
        return codec.decode(frame)  # type: ignore[return-value]
    name = _type_name(frame.type)
    try:
        if frame.type == AdminFrameType.COMMAND:
            return _decode_command(frame.body, command_descs)
        struct_codec = _CODECS.get(frame.type)
        if struct_codec is None:
            raise ProtocolError(FailCode.PROTOCOL, "Did not understand that frame type.")
        message: AnyAdminMessage = struct_codec.decode(frame.body)
        return message
    except ProtocolError as error:
        if error.sequence is None:
            error.sequence = frame.sequence
        raise
    except LeftoverBytes as error:
        problem = f"{error.count} bytes left over"
    except (ConstructError, struct.error, TruncatedBody, UnicodeError, OverflowError) as error:
        problem = f"malformed body ({error})" if str(error) else "malformed body"
    raise ProtocolError(
        FailCode.FRAME, f"Unable to unpack Frame: {name}: {problem}", sequence=frame.sequence
    ) from None


def _type_name(frame_type: int) -> str:
    try:
        return AdminFrameType(frame_type).name
    except ValueError:
        return str(frame_type)


def encode_admin_body(message: AnyAdminMessage) -> bytes:
    """The body bytes of ``message`` on an admin connection, without a header."""
    if isinstance(message, Message):
        return codec.encode_body(message, ADMIN_VERSION)
    try:
        if isinstance(message, Command):
            return _encode_command(message)
        return bytes(_CODECS[message.TYPE].encode(message))
    except EncodingError:
        raise
    except (ConstructError, struct.error, TypeError, ValueError, AttributeError, KeyError) as error:
        raise EncodingError(f"cannot encode {type(message).__name__}: {error!r}") from error


def encode_admin(message: AnyAdminMessage, sequence: int) -> bytes:
    """The complete frame (TP04 header and body) of ``message`` with ``sequence``."""
    body = encode_admin_body(message)
    try:
        return encode_header(ADMIN_VERSION, sequence, message.TYPE, len(body)) + body
    except struct.error as error:
        raise EncodingError(f"bad header field: {error}") from error


def encode_admin_reply(items: list[AnyAdminMessage], sequence: int) -> bytes:
    """Sequence(N) and the N messages, all with ``sequence``: the answer to GetCommandDesc."""
    return encode_admin(Sequence(len(items)), sequence) + b"".join(
        encode_admin(item, sequence) for item in items
    )
