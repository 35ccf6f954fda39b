"""The numbers of the Thousand Parsec protocol, as enums (spec/protocol.md §1–§5, §7).

Every enum here is an ``IntEnum`` so it compares equal to the plain number on the wire. Where
the wire allows any u32/s32 (a Fail code, a feature id, a reference type, a parameter type), a
decoder must not fail on a number this module does not know: it keeps the int. ``coerce`` does
exactly that, and is what every decoder in this package uses.
"""

from __future__ import annotations

import enum
from typing import TypeVar

E = TypeVar("E", bound=enum.IntEnum)


def coerce(enum_type: type[E], value: int) -> E | int:
    """Return the member of ``enum_type`` with this value, or the int itself if there is none.

    Why not ``enum_type(value)``: that raises on unknown values, and the protocol lets peers send
    numbers newer than our tables (new features, fail codes, reference types).
    """
    return enum_type._value2member_map_.get(value, value)  # type: ignore[return-value]


class Version(enum.IntEnum):
    """The protocol version of a connection, fixed by its first frame (§1.2)."""

    TP03 = 3
    TP04 = 4


class FrameType(enum.IntEnum):
    """Frame types 0–77 (§2.2). 64–77 exist only in TP04; TP03 ends at 63 (FinishedTurn)."""

    OKAY = 0
    FAIL = 1
    SEQUENCE = 2
    CONNECT = 3
    LOGIN = 4
    GET_OBJECTS_BY_ID = 5
    GET_OBJECTS_BY_POS = 6
    OBJECT = 7
    GET_ORDER_DESC = 8
    ORDER_DESC = 9
    GET_ORDER = 10
    ORDER = 11
    INSERT_ORDER = 12
    REMOVE_ORDER = 13
    GET_TIME_REMAINING = 14
    TIME_REMAINING = 15
    GET_BOARDS = 16
    BOARD = 17
    GET_MESSAGE = 18
    MESSAGE = 19
    POST_MESSAGE = 20
    REMOVE_MESSAGE = 21
    GET_RESOURCE = 22
    RESOURCE = 23
    REDIRECT = 24
    GET_FEATURES = 25
    FEATURES = 26
    PING = 27
    GET_OBJECT_IDS = 28
    GET_OBJECT_IDS_BY_POS = 29
    GET_OBJECT_IDS_BY_CONTAINER = 30
    OBJECT_IDS = 31
    GET_ORDER_DESC_IDS = 32
    ORDER_DESC_IDS = 33
    PROBE_ORDER = 34
    GET_BOARD_IDS = 35
    BOARD_IDS = 36
    GET_RESOURCE_IDS = 37
    RESOURCE_IDS = 38
    GET_PLAYER = 39
    PLAYER = 40
    GET_CATEGORY = 41
    CATEGORY = 42
    ADD_CATEGORY = 43
    REMOVE_CATEGORY = 44
    GET_CATEGORY_IDS = 45
    CATEGORY_IDS = 46
    GET_DESIGN = 47
    DESIGN = 48
    ADD_DESIGN = 49
    MODIFY_DESIGN = 50
    REMOVE_DESIGN = 51
    GET_DESIGN_IDS = 52
    DESIGN_IDS = 53
    GET_COMPONENT = 54
    COMPONENT = 55
    GET_COMPONENT_IDS = 56
    COMPONENT_IDS = 57
    GET_PROPERTY = 58
    PROPERTY = 59
    GET_PROPERTY_IDS = 60
    PROPERTY_IDS = 61
    CREATE_ACCOUNT = 62
    FINISHED_TURN = 63
    SET_FILTERS = 64
    GET_GAMES = 65
    GAME = 66
    GET_OBJECT_DESC = 67
    OBJECT_DESC = 68
    GET_OBJECT_DESC_IDS = 69
    OBJECT_DESC_IDS = 70
    MODIFY_OBJECT = 71
    GET_PLAYER_IDS = 72
    PLAYER_IDS = 73
    GET_ORDER_QUEUE = 74
    ORDER_QUEUE = 75
    GET_ORDER_QUEUE_IDS = 76
    ORDER_QUEUE_IDS = 77


#: The highest frame type each version defines (SRV ``ft03_Max`` is 63, counting FinishedTurn).
LAST_FRAME_TYPE = {Version.TP03: FrameType.FINISHED_TURN, Version.TP04: FrameType.ORDER_QUEUE_IDS}


def is_defined(frame_type: int, version: Version) -> bool:
    """Whether ``version`` has a frame of this type. Never send a client a type its version lacks:
    the Python clients raise "Unknown packet type" and drop the connection (§9.1)."""
    return 0 <= frame_type <= LAST_FRAME_TYPE[version]


class Direction(enum.Flag):
    """Who sends a frame type (§2.2 "Dir" column). ``BOTH`` marks the bodies DOC lists as
    "both" (Order, Message, Category, Design): the server sends them, and the client's
    Insert/Post/Add frames reuse their layout."""

    CLIENT_TO_SERVER = 1
    SERVER_TO_CLIENT = 2
    BOTH = 3


_SERVER_TO_CLIENT = {
    0,
    1,
    2,
    7,
    9,
    15,
    17,
    23,
    24,
    26,
    31,
    33,
    36,
    38,
    40,
    46,
    53,
    55,
    57,
    59,
    61,
    66,
    68,
    70,
    73,
    75,
    77,
}
_BOTH = {11, 19, 42, 48}


def direction(frame_type: int) -> Direction | None:
    """The direction of a frame type, or None for a number outside 0–77."""
    if not 0 <= frame_type <= FrameType.ORDER_QUEUE_IDS:
        return None
    if frame_type in _BOTH:
        return Direction.BOTH
    if frame_type in _SERVER_TO_CLIENT:
        return Direction.SERVER_TO_CLIENT
    return Direction.CLIENT_TO_SERVER


def is_request(frame_type: int) -> bool:
    """True for the frames a client sends (and a server must answer)."""
    found = direction(frame_type)
    return found is not None and Direction.CLIENT_TO_SERVER in found


def is_response(frame_type: int) -> bool:
    """True for the frames a server sends: replies, and the asynchronous TimeRemaining."""
    found = direction(frame_type)
    return found is not None and Direction.SERVER_TO_CLIENT in found


class FailCode(enum.IntEnum):
    """Fail codes (§7.1). Only 0–5 exist in TP03; 6–8 are TP04 additions."""

    PROTOCOL = 0
    FRAME = 1
    UNAVAILABLE_PERMANENTLY = 2
    UNAVAILABLE_TEMPORARILY = 3
    NO_SUCH_THING = 4
    PERMISSION_DENIED = 5
    GONE = 6
    FRAME_VERSION_NOT_SUPPORTED = 7
    REQUEST_TOO_BIG = 8


class FeatureId(enum.IntEnum):
    """Feature ids of the Features frame (§2.3)."""

    SECURE_HERE = 0x1
    SECURE_THERE = 0x2
    HTTP_HERE = 0x3
    HTTP_THERE = 0x4
    KEEP_ALIVE = 0x5
    PROPERTY_CALC = 0x6
    ACCOUNT_CREATE = 0x3E8
    FILTER_SSL = 0x1000
    FILTER_PADDING = 0x1D00
    DESC_OBJECT_ID = 0x10000
    DESC_ORDER_ID = 0x10001
    DESC_BOARD_ID = 0x10002
    DESC_RESOURCE_ID = 0x10003
    DESC_CATEGORY_ID = 0x10004
    DESC_DESIGN_ID = 0x10005
    DESC_COMPONENT_ID = 0x10006
    DESC_PROPERTY_ID = 0x10007


class TimeRemainingReason(enum.IntEnum):
    """Why a TP04 TimeRemaining was sent (§5.6)."""

    REQUESTED = 0
    TIMER_STARTED = 1
    TIMER_WARNING = 2
    ALL_FINISHED = 3
    THRESHOLD_FINISHED_TIMER_STARTED = 4
    END_OF_TURN_STARTED = 5


class ReferenceType(enum.IntEnum):
    """Reference types (§7.2): what a (reftype, refid) pair in a Fail, a Message or a Reference
    parameter points at. Negative types are "actions"; their ids are the action codes."""

    SERVER_ACTION = -1000
    DESIGN_ACTION = -5
    PLAYER_ACTION = -4
    MESSAGE_ACTION = -3
    ORDER_ACTION = -2
    OBJECT_ACTION = -1
    MISC = 0
    OBJECT = 1
    ORDER_TYPE = 2
    ORDER_INSTANCE = 3
    BOARD = 4
    MESSAGE = 5
    RESOURCE = 6
    PLAYER = 7
    CATEGORY = 8
    DESIGN = 9
    COMPONENT = 10
    PROPERTY = 11
    OBJECT_TYPE = 12
    ORDER_QUEUE = 13


class ObjectParamType(enum.IntEnum):
    """TP04 object parameter types (§3.2)."""

    POSITION_3D = 0
    VELOCITY_3D = 1
    ACCELERATION_3D = 2
    BOUND_POSITION = 3
    ORDER_QUEUE = 4
    RESOURCE_LIST = 5
    REFERENCE = 6
    REFERENCE_QUANTITY_LIST = 7
    INTEGER = 8
    SIZE = 9
    MEDIA = 10
    INFLUENCE = 11


class OrderParamType(enum.IntEnum):
    """Order parameter (argument) types (§4.3). 10 and 11 exist only in TP04."""

    ABS_SPACE_COORDS = 0
    TIME = 1
    OBJECT = 2
    PLAYER = 3
    REL_SPACE_COORDS = 4
    RANGE = 5
    LIST = 6
    STRING = 7
    REFERENCE = 8
    REFERENCE_LIST = 9
    RESOURCE_LIST = 10
    GENERIC_REFERENCE_QUANTITY_LIST = 11


class GameParamId(enum.IntEnum):
    """Parameter ids of the TP04 Game frame (§2.2, frame 66), named after their metaserver keys."""

    PLAYERS = 1  # plys
    CONNECTIONS = 2  # cons
    OBJECTS = 3  # objs
    ADMIN = 4  # admin
    COMMENT = 5  # cmt
    NEXT_TURN = 6  # next
    LONG_NAME = 7  # ln
    SHORT_NAME = 8  # sn
    TURN = 9  # turn
    PERIOD = 10  # prd
