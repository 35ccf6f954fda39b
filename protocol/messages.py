"""Typed messages for every frame type except Object and Order (see ``objects``, ``orders``).

Each frame type is its own frozen, slotted dataclass, so a handler table can be keyed by class
and a handler never sees a construct container. Frames that share a body layout share a base
class (``GetWithID``, ``GetIDSequence``, ``IDSequence``, …) and the layout declared on it.

One class serves both versions wherever the wire meaning is the same. Fields that only one
version carries have defaults and are ignored when encoding for the other version:
``Fail.references``, ``Player.modtime``, ``GetIDSequence.since`` / ``IDSequence.since`` (TP04's
``from``) and the TP04 extras of ``TimeRemaining`` are written only for TP04. Classes with no
TP03 layout (``Game``, ``SetFilters``, ``OrderQueue`` …, types 64–77) cannot be encoded for TP03.

Field order in a dataclass follows the wire, except that fields with defaults come last; the
``@wire`` layouts hold the wire order. Lists are tuples; list items are the records of
``protocol.records``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import ClassVar

from .enums import (
    FailCode,
    FeatureId,
    FrameType,
    GameParamId,
    ReferenceType,
    TimeRemainingReason,
    Version,
    coerce,
)
from .records import GameConnection, GameParam, IdCount, IdModtime, IdText, Reference, Vec3
from .schema import (
    J32,
    J64,
    S32,
    S64,
    STRING,
    TIME,
    U32,
    U64,
    Field,
    List,
    Tuple,
    tuple_of,
    wire,
)


class Message:
    """Base of every typed message. ``TYPE`` is the frame type; ``LAYOUTS`` the body per version
    (empty for the classes whose codec is written by hand: objects and orders)."""

    __slots__ = ()
    TYPE: ClassVar[FrameType]
    LAYOUTS: ClassVar[dict[Version, tuple[Field, ...]]] = {}


# --------------------------------------------------------------------------------------------
# Field shortcuts
# --------------------------------------------------------------------------------------------


def reference(reftype: int, refid: int) -> Reference:
    """A ``Reference`` with its type as ``ReferenceType`` when known (negative types included)."""
    return Reference(coerce(ReferenceType, reftype), refid)


def _enum(enum_type: type[enum.IntEnum]) -> Callable[[int], int]:
    return lambda value: coerce(enum_type, value)


def _enum_tuple(enum_type: type[enum.IntEnum]) -> Callable[[Iterable[int]], tuple[int, ...]]:
    return lambda values: tuple([coerce(enum_type, value) for value in values])


def _vec3(values: Iterable[int]) -> Vec3:
    return Vec3(*values)


REFERENCES = List(Tuple(S32, U32))
U32_LIST = List(U32)
J32_LIST = List(J32)
VEC3 = Tuple(S64, S64, S64)


def references_field(name: str = "references") -> Field:
    return Field(name, REFERENCES, tuple_of(reference))


def u32_list(name: str) -> Field:
    return Field(name, U32_LIST, tuple)


# --------------------------------------------------------------------------------------------
# Replies every request can get
# --------------------------------------------------------------------------------------------


@wire(both=[Field("message", STRING)])
@dataclass(frozen=True, slots=True)
class Okay(Message):
    """0 Okay: the request worked; ``message`` is shown to the user."""

    TYPE: ClassVar[FrameType] = FrameType.OKAY
    message: str


@wire(
    tp03=[Field("code", U32, _enum(FailCode)), Field("message", STRING)],
    tp04=[Field("code", U32, _enum(FailCode)), Field("message", STRING), references_field()],
)
@dataclass(frozen=True, slots=True)
class Fail(Message):
    """1 Fail. ``references`` exist only in TP04; they are dropped when encoding for TP03,
    because PY3 rejects a TP03 Fail that carries them (§2.2). Use codes 0–5 on TP03."""

    TYPE: ClassVar[FrameType] = FrameType.FAIL
    code: FailCode | int
    message: str
    references: tuple[Reference, ...] = ()


@wire(both=[Field("number", U32)])
@dataclass(frozen=True, slots=True)
class Sequence(Message):
    """2 Sequence: ``number`` frames follow, all answering the same request (§6.2)."""

    TYPE: ClassVar[FrameType] = FrameType.SEQUENCE
    number: int


@wire(both=[Field("uri", STRING)])
@dataclass(frozen=True, slots=True)
class Redirect(Message):
    """24 Redirect: connect to ``uri`` instead (tp://, tps://, http://, https://)."""

    TYPE: ClassVar[FrameType] = FrameType.REDIRECT
    uri: str


# --------------------------------------------------------------------------------------------
# Connecting and accounts
# --------------------------------------------------------------------------------------------


@wire(both=[Field("client", STRING)])
@dataclass(frozen=True, slots=True)
class Connect(Message):
    """3 Connect: the first frame of every connection; ``client`` identifies the software."""

    TYPE: ClassVar[FrameType] = FrameType.CONNECT
    client: str


@wire(both=[Field("username", STRING), Field("password", STRING)])
@dataclass(frozen=True, slots=True)
class Login(Message):
    """4 Login. ``username`` may be ``user@game``; the server strips ``@game`` (§2.2)."""

    TYPE: ClassVar[FrameType] = FrameType.LOGIN
    username: str
    password: str


@wire(
    both=[
        Field("username", STRING),
        Field("password", STRING),
        Field("email", STRING),
        Field("comment", STRING),
    ]
)
@dataclass(frozen=True, slots=True)
class CreateAccount(Message):
    """62 CreateAccount; a Login must still follow."""

    TYPE: ClassVar[FrameType] = FrameType.CREATE_ACCOUNT
    username: str
    password: str
    email: str
    comment: str


@wire(both=[])
@dataclass(frozen=True, slots=True)
class GetFeatures(Message):
    """25 GetFeatures (empty)."""

    TYPE: ClassVar[FrameType] = FrameType.GET_FEATURES


@wire(both=[Field("features", U32_LIST, _enum_tuple(FeatureId))])
@dataclass(frozen=True, slots=True)
class Features(Message):
    """26 Features: ``FeatureId`` values (unknown ids stay ints)."""

    TYPE: ClassVar[FrameType] = FrameType.FEATURES
    features: tuple[FeatureId | int, ...]


@wire(both=[])
@dataclass(frozen=True, slots=True)
class Ping(Message):
    """27 Ping (empty); always answered with Okay."""

    TYPE: ClassVar[FrameType] = FrameType.PING


@wire(tp04=[Field("filters", U32_LIST, _enum_tuple(FeatureId))])
@dataclass(frozen=True, slots=True)
class SetFilters(Message):
    """64 SetFilters (TP04): the filters the client wants (0x1000 SSL, 0x1D00 padding, §1.7)."""

    TYPE: ClassVar[FrameType] = FrameType.SET_FILTERS
    filters: tuple[FeatureId | int, ...]


@wire(tp04=[])
@dataclass(frozen=True, slots=True)
class GetGames(Message):
    """65 GetGames (TP04, empty). On TP03 the type does not exist; a TP03 client's request is
    answered with Fail by the server (§2.2)."""

    TYPE: ClassVar[FrameType] = FrameType.GET_GAMES


@wire(
    tp04=[
        Field("name", STRING),
        Field("key", STRING),
        Field("versions", List(STRING), tuple),
        Field("server_version", STRING),
        Field("server_type", STRING),
        Field("rule", STRING),
        Field("rule_version", STRING),
        Field("connections", List(Tuple(STRING, STRING, STRING, U32)), tuple_of(GameConnection)),
        Field(
            "params",
            List(Tuple(U32, STRING, U32)),
            tuple_of(lambda pid, text, number: GameParam(coerce(GameParamId, pid), text, number)),
        ),
        Field("media_base", STRING),
        Field("ctime", TIME),
    ]
)
@dataclass(frozen=True, slots=True)
class Game(Message):
    """66 Game (TP04 only). ``versions`` are the protocol versions offered ("0.3", "0.4");
    ``ctime`` (not in DOC4, but in PY4 and SRV) is part of the client's cache key, so a new game
    needs a new one (§5.5)."""

    TYPE: ClassVar[FrameType] = FrameType.GAME
    name: str
    key: str
    versions: tuple[str, ...]
    server_version: str
    server_type: str
    rule: str
    rule_version: str
    connections: tuple[GameConnection, ...]
    params: tuple[GameParam, ...]
    media_base: str
    ctime: int


# --------------------------------------------------------------------------------------------
# Shared request bodies
# --------------------------------------------------------------------------------------------


@wire(both=[Field("ids", J32_LIST, tuple)])
@dataclass(frozen=True, slots=True)
class GetWithID(Message):
    """Body of every "get these ids" request: ``list<j32> ids``. Not a frame by itself."""

    ids: tuple[int, ...]


@wire(both=[Field("id", U32), Field("slots", J32_LIST, tuple)])
@dataclass(frozen=True, slots=True)
class GetWithIDSlot(Message):
    """Body of the slot requests: a container id and ``list<j32> slots`` (in decreasing order
    for removals)."""

    id: int
    slots: tuple[int, ...]


@wire(
    tp03=[Field("key", J32), Field("start", U32), Field("amount", J32)],
    tp04=[Field("key", J32), Field("start", U32), Field("amount", J32), Field("since", J64)],
)
@dataclass(frozen=True, slots=True)
class GetIDSequence(Message):
    """Body of the "Get…IDs" requests (§2.1, §6.3). Start with ``key=-1``; ``amount=-1`` means
    all. ``since`` is TP04's ``from``: -1 (everything) or only ids modified after it; it is not
    on the TP03 wire and decodes as -1 there."""

    key: int
    start: int
    amount: int
    since: int = -1


@wire(
    tp03=[
        Field("key", J32),
        Field("remaining", J32),
        Field("ids", List(Tuple(U32, TIME)), tuple_of(IdModtime)),
    ],
    tp04=[
        Field("key", J32),
        Field("remaining", J32),
        Field("ids", List(Tuple(U32, TIME)), tuple_of(IdModtime)),
        Field("since", J64),
    ],
)
@dataclass(frozen=True, slots=True)
class IDSequence(Message):
    """Body of the "…IDs" replies: ``remaining`` ids follow after this batch; each entry is
    (id, modtime). TP04 echoes the request's ``from`` as ``since``."""

    key: int
    remaining: int
    ids: tuple[IdModtime, ...]
    since: int = -1


# --------------------------------------------------------------------------------------------
# Objects (the Object frames themselves are in protocol.objects)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GetObjectsByID(GetWithID):
    """5 GetObjectsByID → Sequence + Object/Fail per id."""

    TYPE: ClassVar[FrameType] = FrameType.GET_OBJECTS_BY_ID


@wire(both=[Field("position", VEC3, _vec3), Field("radius", U64)])
@dataclass(frozen=True, slots=True)
class GetObjectsByPos(Message):
    """6 GetObjectsByPos: objects within ``radius`` of ``position``. DOC4 calls it deprecated and
    gives no body; we use the TP03 body in both versions, as SRV still does."""

    TYPE: ClassVar[FrameType] = FrameType.GET_OBJECTS_BY_POS
    position: Vec3
    radius: int


@dataclass(frozen=True, slots=True)
class GetObjectIDs(GetIDSequence):
    """28 GetObjectIDs."""

    TYPE: ClassVar[FrameType] = FrameType.GET_OBJECT_IDS


@wire(both=[Field("position", VEC3, _vec3), Field("radius", U64)])
@dataclass(frozen=True, slots=True)
class GetObjectIDsByPos(Message):
    """29 GetObjectIDsByPos: ids of the objects inside the sphere → ObjectIDs."""

    TYPE: ClassVar[FrameType] = FrameType.GET_OBJECT_IDS_BY_POS
    position: Vec3
    radius: int


@wire(both=[Field("id", U32)])
@dataclass(frozen=True, slots=True)
class GetObjectIDsByContainer(Message):
    """30 GetObjectIDsByContainer: a single u32 (SRV requires 4 bytes) → ObjectIDs."""

    TYPE: ClassVar[FrameType] = FrameType.GET_OBJECT_IDS_BY_CONTAINER
    id: int


@dataclass(frozen=True, slots=True)
class ObjectIDs(IDSequence):
    """31 ObjectIDs."""

    TYPE: ClassVar[FrameType] = FrameType.OBJECT_IDS


@dataclass(frozen=True, slots=True)
class GetObjectDesc(GetWithID):
    """67 GetObjectDesc (TP04): object type ids."""

    TYPE: ClassVar[FrameType] = FrameType.GET_OBJECT_DESC
    LAYOUTS: ClassVar = {Version.TP04: GetWithID.LAYOUTS[Version.TP04]}


@dataclass(frozen=True, slots=True)
class GetObjectDescIDs(GetIDSequence):
    """69 GetObjectDescIDs (TP04)."""

    TYPE: ClassVar[FrameType] = FrameType.GET_OBJECT_DESC_IDS
    LAYOUTS: ClassVar = {Version.TP04: GetIDSequence.LAYOUTS[Version.TP04]}


@dataclass(frozen=True, slots=True)
class ObjectDescIDs(IDSequence):
    """70 ObjectDescIDs (TP04)."""

    TYPE: ClassVar[FrameType] = FrameType.OBJECT_DESC_IDS
    LAYOUTS: ClassVar = {Version.TP04: IDSequence.LAYOUTS[Version.TP04]}


# --------------------------------------------------------------------------------------------
# Orders (Order, InsertOrder, ProbeOrder and OrderDesc are in protocol.orders)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GetOrderDesc(GetWithID):
    """8 GetOrderDesc."""

    TYPE: ClassVar[FrameType] = FrameType.GET_ORDER_DESC


@dataclass(frozen=True, slots=True)
class GetOrder(GetWithIDSlot):
    """10 GetOrder: ``id`` is the object id in TP03 and the order-queue id in TP04."""

    TYPE: ClassVar[FrameType] = FrameType.GET_ORDER


@dataclass(frozen=True, slots=True)
class RemoveOrder(GetWithIDSlot):
    """13 RemoveOrder → Sequence + Okay/Fail per slot."""

    TYPE: ClassVar[FrameType] = FrameType.REMOVE_ORDER


@dataclass(frozen=True, slots=True)
class GetOrderDescIDs(GetIDSequence):
    """32 GetOrderDescIDs."""

    TYPE: ClassVar[FrameType] = FrameType.GET_ORDER_DESC_IDS


@dataclass(frozen=True, slots=True)
class OrderDescIDs(IDSequence):
    """33 OrderDescIDs."""

    TYPE: ClassVar[FrameType] = FrameType.ORDER_DESC_IDS


@dataclass(frozen=True, slots=True)
class GetOrderQueue(GetWithID):
    """74 GetOrderQueue (TP04)."""

    TYPE: ClassVar[FrameType] = FrameType.GET_ORDER_QUEUE
    LAYOUTS: ClassVar = {Version.TP04: GetWithID.LAYOUTS[Version.TP04]}


@wire(
    tp04=[
        Field("id", U32),
        Field("modtime", U64),
        Field("max_slots", U32),
        Field("num_orders", U32),
        u32_list("order_types"),
    ]
)
@dataclass(frozen=True, slots=True)
class OrderQueue(Message):
    """75 OrderQueue (TP04). ``modtime`` is the queue's serial; ``max_slots`` 0xFFFFFFFF means
    unlimited; ``num_orders`` drives the client's GetOrder range (§4.5)."""

    TYPE: ClassVar[FrameType] = FrameType.ORDER_QUEUE
    id: int
    modtime: int
    max_slots: int
    num_orders: int
    order_types: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class GetOrderQueueIDs(GetIDSequence):
    """76 GetOrderQueueIDs (TP04)."""

    TYPE: ClassVar[FrameType] = FrameType.GET_ORDER_QUEUE_IDS
    LAYOUTS: ClassVar = {Version.TP04: GetIDSequence.LAYOUTS[Version.TP04]}


@dataclass(frozen=True, slots=True)
class OrderQueueIDs(IDSequence):
    """77 OrderQueueIDs (TP04)."""

    TYPE: ClassVar[FrameType] = FrameType.ORDER_QUEUE_IDS
    LAYOUTS: ClassVar = {Version.TP04: IDSequence.LAYOUTS[Version.TP04]}


# --------------------------------------------------------------------------------------------
# Turns
# --------------------------------------------------------------------------------------------


@wire(both=[])
@dataclass(frozen=True, slots=True)
class GetTimeRemaining(Message):
    """14 GetTimeRemaining (empty)."""

    TYPE: ClassVar[FrameType] = FrameType.GET_TIME_REMAINING


@wire(
    tp03=[Field("time", J32)],
    tp04=[
        Field("time", J32),
        Field("reason", U32, _enum(TimeRemainingReason)),
        Field("turn", U32),
        Field("turn_name", STRING),
        u32_list("waiting"),
    ],
)
@dataclass(frozen=True, slots=True)
class TimeRemaining(Message):
    """15 TimeRemaining: seconds to the end of turn (0: it has just started; -1: no timer).

    TP03 carries only ``time``; the other fields are TP04's and are ignored for TP03. ``time``
    is j32 in both versions (PY4 reads ``j``; SRV sends 0xFFFFFFFF for "no timer"). Pushed with
    sequence 0 when the turn ends (§5.6).
    """

    TYPE: ClassVar[FrameType] = FrameType.TIME_REMAINING
    time: int
    reason: TimeRemainingReason | int = TimeRemainingReason.REQUESTED
    turn: int = 0
    turn_name: str = ""
    waiting: tuple[int, ...] = ()


@wire(both=[])
@dataclass(frozen=True, slots=True)
class FinishedTurn(Message):
    """63 FinishedTurn (empty; TP03 clients send it too)."""

    TYPE: ClassVar[FrameType] = FrameType.FINISHED_TURN


# --------------------------------------------------------------------------------------------
# Boards and messages
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GetBoards(GetWithID):
    """16 GetBoards (id 0 is the player's own board)."""

    TYPE: ClassVar[FrameType] = FrameType.GET_BOARDS


@wire(
    both=[
        Field("id", U32),
        Field("name", STRING),
        Field("description", STRING),
        Field("messages", U32),
        Field("modtime", TIME),
    ]
)
@dataclass(frozen=True, slots=True)
class Board(Message):
    """17 Board; ``modtime`` must change whenever a message on it changes."""

    TYPE: ClassVar[FrameType] = FrameType.BOARD
    id: int
    name: str
    description: str
    messages: int
    modtime: int


@dataclass(frozen=True, slots=True)
class GetMessage(GetWithIDSlot):
    """18 GetMessage: board id and slots."""

    TYPE: ClassVar[FrameType] = FrameType.GET_MESSAGE


@wire(
    both=[
        Field("board", U32),
        Field("slot", J32),
        u32_list("message_types"),
        Field("subject", STRING),
        Field("body", STRING),
        Field("turn", U32),
        references_field(),
    ]
)
@dataclass(frozen=True, slots=True)
class BoardMessage(Message):
    """19 Message (named ``BoardMessage`` here, since every class is a message).

    ``message_types`` is deprecated (send empty). Keep ``references`` within types −1000, −5…9:
    PY's reference printer raises KeyError on 10–13 (§7.2).
    """

    TYPE: ClassVar[FrameType] = FrameType.MESSAGE
    board: int
    slot: int
    subject: str
    body: str
    turn: int
    references: tuple[Reference, ...] = ()
    message_types: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class PostMessage(BoardMessage):
    """20 PostMessage: a Message body, answered with Okay."""

    TYPE: ClassVar[FrameType] = FrameType.POST_MESSAGE


@dataclass(frozen=True, slots=True)
class RemoveMessage(GetWithIDSlot):
    """21 RemoveMessage."""

    TYPE: ClassVar[FrameType] = FrameType.REMOVE_MESSAGE


@dataclass(frozen=True, slots=True)
class GetBoardIDs(GetIDSequence):
    """35 GetBoardIDs."""

    TYPE: ClassVar[FrameType] = FrameType.GET_BOARD_IDS


@dataclass(frozen=True, slots=True)
class BoardIDs(IDSequence):
    """36 BoardIDs."""

    TYPE: ClassVar[FrameType] = FrameType.BOARD_IDS


# --------------------------------------------------------------------------------------------
# Resources and players
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GetResource(GetWithID):
    """22 GetResource."""

    TYPE: ClassVar[FrameType] = FrameType.GET_RESOURCE


@wire(
    both=[
        Field("id", U32),
        Field("singular_name", STRING),
        Field("plural_name", STRING),
        Field("singular_unit", STRING),
        Field("plural_unit", STRING),
        Field("description", STRING),
        Field("weight", U32),
        Field("size", U32),
        Field("modtime", TIME),
    ]
)
@dataclass(frozen=True, slots=True)
class Resource(Message):
    """23 Resource (a resource description)."""

    TYPE: ClassVar[FrameType] = FrameType.RESOURCE
    id: int
    singular_name: str
    plural_name: str
    singular_unit: str
    plural_unit: str
    description: str
    weight: int
    size: int
    modtime: int


@dataclass(frozen=True, slots=True)
class GetResourceIDs(GetIDSequence):
    """37 GetResourceIDs."""

    TYPE: ClassVar[FrameType] = FrameType.GET_RESOURCE_IDS


@dataclass(frozen=True, slots=True)
class ResourceIDs(IDSequence):
    """38 ResourceIDs."""

    TYPE: ClassVar[FrameType] = FrameType.RESOURCE_IDS


@dataclass(frozen=True, slots=True)
class GetPlayer(GetWithID):
    """39 GetPlayer; id 0 means the logged-in player."""

    TYPE: ClassVar[FrameType] = FrameType.GET_PLAYER


@wire(
    tp03=[Field("id", U32), Field("name", STRING), Field("race", STRING)],
    tp04=[Field("id", U32), Field("name", STRING), Field("race", STRING), Field("modtime", TIME)],
)
@dataclass(frozen=True, slots=True)
class Player(Message):
    """40 Player. ``modtime`` is TP04 only: PY3 rejects a TP03 Player that has it (SRV's bug,
    Appendix A.1), so it is written only for TP04."""

    TYPE: ClassVar[FrameType] = FrameType.PLAYER
    id: int
    name: str
    race: str
    modtime: int = 0


@dataclass(frozen=True, slots=True)
class GetPlayerIDs(GetIDSequence):
    """72 GetPlayerIDs (TP04; TP03 clients probe GetPlayer 1, 2, … instead)."""

    TYPE: ClassVar[FrameType] = FrameType.GET_PLAYER_IDS
    LAYOUTS: ClassVar = {Version.TP04: GetIDSequence.LAYOUTS[Version.TP04]}


@dataclass(frozen=True, slots=True)
class PlayerIDs(IDSequence):
    """73 PlayerIDs (TP04)."""

    TYPE: ClassVar[FrameType] = FrameType.PLAYER_IDS
    LAYOUTS: ClassVar = {Version.TP04: IDSequence.LAYOUTS[Version.TP04]}


# --------------------------------------------------------------------------------------------
# Designs: categories, designs, components, properties
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GetCategory(GetWithID):
    """41 GetCategory."""

    TYPE: ClassVar[FrameType] = FrameType.GET_CATEGORY


@wire(
    both=[
        Field("id", S32),
        Field("modtime", TIME),
        Field("name", STRING),
        Field("description", STRING),
    ]
)
@dataclass(frozen=True, slots=True)
class Category(Message):
    """42 Category (s32 id: -1 in AddCategory)."""

    TYPE: ClassVar[FrameType] = FrameType.CATEGORY
    id: int
    modtime: int
    name: str
    description: str


@dataclass(frozen=True, slots=True)
class AddCategory(Category):
    """43 AddCategory: a Category body with id -1."""

    TYPE: ClassVar[FrameType] = FrameType.ADD_CATEGORY


@dataclass(frozen=True, slots=True)
class RemoveCategory(GetWithID):
    """44 RemoveCategory."""

    TYPE: ClassVar[FrameType] = FrameType.REMOVE_CATEGORY


@dataclass(frozen=True, slots=True)
class GetCategoryIDs(GetIDSequence):
    """45 GetCategoryIDs."""

    TYPE: ClassVar[FrameType] = FrameType.GET_CATEGORY_IDS


@dataclass(frozen=True, slots=True)
class CategoryIDs(IDSequence):
    """46 CategoryIDs."""

    TYPE: ClassVar[FrameType] = FrameType.CATEGORY_IDS


@dataclass(frozen=True, slots=True)
class GetDesign(GetWithID):
    """47 GetDesign."""

    TYPE: ClassVar[FrameType] = FrameType.GET_DESIGN


@wire(
    both=[
        Field("id", S32),
        Field("modtime", TIME),
        u32_list("categories"),
        Field("name", STRING),
        Field("description", STRING),
        Field("in_use", S32),
        Field("owner", S32),
        Field("components", List(Tuple(U32, U32)), tuple_of(IdCount)),
        Field("feedback", STRING),
        Field("properties", List(Tuple(U32, STRING)), tuple_of(IdText)),
    ]
)
@dataclass(frozen=True, slots=True)
class Design(Message):
    """48 Design. ``in_use`` -1 means unusable, ``owner`` -1 unknown; ``components`` are
    (component id, count), ``properties`` (property id, display string)."""

    TYPE: ClassVar[FrameType] = FrameType.DESIGN
    id: int
    modtime: int
    categories: tuple[int, ...]
    name: str
    description: str
    in_use: int
    owner: int
    components: tuple[IdCount, ...]
    feedback: str
    properties: tuple[IdText, ...]


@dataclass(frozen=True, slots=True)
class AddDesign(Design):
    """49 AddDesign: answered with a single Design frame carrying the new id (no Sequence)."""

    TYPE: ClassVar[FrameType] = FrameType.ADD_DESIGN


@dataclass(frozen=True, slots=True)
class ModifyDesign(Design):
    """50 ModifyDesign."""

    TYPE: ClassVar[FrameType] = FrameType.MODIFY_DESIGN


@dataclass(frozen=True, slots=True)
class RemoveDesign(GetWithID):
    """51 RemoveDesign."""

    TYPE: ClassVar[FrameType] = FrameType.REMOVE_DESIGN


@dataclass(frozen=True, slots=True)
class GetDesignIDs(GetIDSequence):
    """52 GetDesignIDs."""

    TYPE: ClassVar[FrameType] = FrameType.GET_DESIGN_IDS


@dataclass(frozen=True, slots=True)
class DesignIDs(IDSequence):
    """53 DesignIDs."""

    TYPE: ClassVar[FrameType] = FrameType.DESIGN_IDS


@dataclass(frozen=True, slots=True)
class GetComponent(GetWithID):
    """54 GetComponent."""

    TYPE: ClassVar[FrameType] = FrameType.GET_COMPONENT


@wire(
    both=[
        Field("id", U32),
        Field("modtime", TIME),
        u32_list("categories"),
        Field("name", STRING),
        Field("description", STRING),
        Field("requirements", STRING),
        Field("properties", List(Tuple(U32, STRING)), tuple_of(IdText)),
    ]
)
@dataclass(frozen=True, slots=True)
class Component(Message):
    """55 Component: ``requirements`` is a TPCL function; ``properties`` are
    (property id, value function)."""

    TYPE: ClassVar[FrameType] = FrameType.COMPONENT
    id: int
    modtime: int
    categories: tuple[int, ...]
    name: str
    description: str
    requirements: str
    properties: tuple[IdText, ...]


@dataclass(frozen=True, slots=True)
class GetComponentIDs(GetIDSequence):
    """56 GetComponentIDs."""

    TYPE: ClassVar[FrameType] = FrameType.GET_COMPONENT_IDS


@dataclass(frozen=True, slots=True)
class ComponentIDs(IDSequence):
    """57 ComponentIDs."""

    TYPE: ClassVar[FrameType] = FrameType.COMPONENT_IDS


@dataclass(frozen=True, slots=True)
class GetProperty(GetWithID):
    """58 GetProperty."""

    TYPE: ClassVar[FrameType] = FrameType.GET_PROPERTY


@wire(
    both=[
        Field("id", U32),
        Field("modtime", TIME),
        u32_list("categories"),
        Field("rank", U32),
        Field("name", STRING),
        Field("display_name", STRING),
        Field("description", STRING),
        Field("calculate", STRING),
        Field("requirements", STRING),
    ]
)
@dataclass(frozen=True, slots=True)
class Property(Message):
    """59 Property: ``calculate`` and ``requirements`` are TPCL functions."""

    TYPE: ClassVar[FrameType] = FrameType.PROPERTY
    id: int
    modtime: int
    categories: tuple[int, ...]
    rank: int
    name: str
    display_name: str
    description: str
    calculate: str
    requirements: str


@dataclass(frozen=True, slots=True)
class GetPropertyIDs(GetIDSequence):
    """60 GetPropertyIDs."""

    TYPE: ClassVar[FrameType] = FrameType.GET_PROPERTY_IDS


@dataclass(frozen=True, slots=True)
class PropertyIDs(IDSequence):
    """61 PropertyIDs."""

    TYPE: ClassVar[FrameType] = FrameType.PROPERTY_IDS
