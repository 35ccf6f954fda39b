"""The Thousand Parsec wire format, TP03 and TP04: a sans-IO deframer and typed messages.

Pure encode/decode, no I/O, no clock; depends on the standard library and construct only.
The byte-level reference is ../shared/spec/protocol.md ("§" below).

Reading: bytes → frames → messages
----------------------------------
``Deframer`` cuts a byte stream (any chunking) into ``Frame(version, frame_version, sequence,
type, body)``. The version is fixed by the connection's first four bytes (§1.2); bodies of
1 MiB or more, bad headers and frames of another version raise ``ProtocolError``, whose
``answer`` says what tpserver-cpp would reply (``Answer``) and ``encode_error`` builds those
bytes. The read loop of a server (a client's is the same)::

    deframer.feed(data)                                # once per chunk received
    while True:
        try:
            frame = deframer.next_frame()              # None: wait for more bytes
        except ProtocolError as error:                 # the stream itself is broken
            transport.write(encode_error(error, deframer.version))
            if error.answer not in (Answer.FAIL, Answer.FAIL_AND_REDETECT):
                return transport.loseConnection()
            deframer.recover()                         # as SRV: keep the connection
            continue
        if frame is None:
            break
        try:
            message = decode(frame, order_descs=order_descs)
        except ProtocolError as error:                 # a bad body: answer, carry on
            transport.write(encode_error(error, deframer.version))
            continue
        dispatch(message)                              # e.g. handlers[type(message)]

``decode(frame, *, object_descs=None, order_descs=None)`` works for both directions: the server
decodes client frames, the client library decodes server frames. It raises only
``ProtocolError``: code 0 for a type the version lacks, code 1 for a short/long/malformed body
(the Python clients are strict, and so are we), ``MissingDescriptionError`` (code 4) when a TP04
Object or an Order needs a description the mappings do not have.
``is_request(type)`` / ``is_response(type)`` / ``direction(type)`` tell the two kinds apart.

Writing: messages → bytes
-------------------------
``encode(message, version, sequence) -> bytes`` is header plus body; ``encode_body`` and
``frame_bytes`` split the two for caching bodies; ``encode_reply(items, version, sequence)``
is Sequence(N) + N frames in one string. Encoding a type the version lacks (Game on TP03,
a TP03 object on TP04, an order argument of type 10 on TP03) or a value that does not fit
raises ``EncodingError`` (a ``ProtocolError`` and a ``ValueError``): a client is never sent
bytes it would choke on.

Messages
--------
One frozen, slotted dataclass per frame type (``Okay``, ``Fail``, ``Login``, ``GetObjectsByID``,
``ObjectIDs``, ``TimeRemaining``, ``Game``, …; frame 19 is ``BoardMessage``); lists are tuples of
the records in ``protocol.records``. The same class serves TP03 and TP04 where the wire meaning
is the same; version-only fields have defaults and are skipped for the other version
(``Fail.references``, ``Player.modtime``, ``GetIDSequence.since`` = TP04 ``from``, the TP04 fields
of ``TimeRemaining``). Unknown enum values (fail codes, features, reference types, parameter
types) decode to plain ints.

Objects: ``Tp03Object`` (fixed fields; ``extra`` is ``UniverseExtra`` … ``WormholeExtra``, which
fixes the type 0–5) and ``Tp04Object`` (``groups`` of parameter values, laid out by the type's
``ObjectDesc``) are distinct classes, ``AnyObject`` their union. Encoding a TP04 object from
parameter values needs no description::

    fleet = Tp04Object(
        id=42, type=4, name="Colonist Fleet", description="", parent=7, contains=(), modtime=9,
        groups=(
            (PositionParam(x, y, z), VelocityParam(0, 0, 0), SizeParam(2)),   # Positional
            (ReferenceParam(ReferenceType.PLAYER, owner),),                 # Ownership
            (OrderQueueParam(queue_id),),                                    # Orders
            (ReferenceQuantityListParam(((ReferenceType.DESIGN, design, 1),)),
             IntegerParam(0)),                                               # Ships
        ),
    )
    data = encode(fleet, Version.TP04, sequence)
    ObjectDesc(...).check(fleet)        # optional: does the view match the published type?

Decoding one needs ``object_descs={type_id: ObjectDesc}``; a client that gets
``MissingDescriptionError`` fetches the description (GetObjectDesc) and decodes again.

Orders: ``Order``/``InsertOrder``/``ProbeOrder`` carry ``args``, one typed value per parameter of
the order type (``ObjectArg``, ``ListArg``, … including the read-only fields clients echo).
A server decodes an InsertOrder with the descriptions it publishes::

    # my_order_descs: OrderDesc(id, name, description, params, modtime) for each order type
    descs = {d.id: d for d in my_order_descs}
    insert = decode(frame, order_descs=descs)   # InsertOrder(id, slot, type, args, …);
                                                # id: TP04 queue id, TP03 object id
    target = insert.args[0].object_id           # the ObjectArg of a "Star System" parameter

An unknown order type raises ``MissingDescriptionError`` with the references SRV puts in its
Fail(4) "No such order type". In TP03 ``ObjectArg`` is only the object id.

Modules: ``enums``, ``errors``, ``header`` (Frame, headers), ``deframer``, ``schema`` (construct
primitives and the layout binding), ``records``, ``messages``, ``objects``, ``orders``,
``packing`` (struct fast paths for objects), ``codec`` (decode/encode).
"""

from .codec import (
    decode,
    encode,
    encode_body,
    encode_error,
    encode_reply,
    fit_fail,
    frame_bytes,
    message_class,
)
from .deframer import MAX_BODY_LENGTH, Deframer, detect_version
from .enums import (
    Direction,
    FailCode,
    FeatureId,
    FrameType,
    GameParamId,
    ObjectParamType,
    OrderParamType,
    ReferenceType,
    TimeRemainingReason,
    Version,
    coerce,
    direction,
    is_defined,
    is_request,
    is_response,
)
from .errors import Answer, EncodingError, MissingDescriptionError, ProtocolError
from .header import HEADER_SIZE, Frame, encode_header
from .messages import (
    AddCategory,
    AddDesign,
    Board,
    BoardIDs,
    BoardMessage,
    Category,
    CategoryIDs,
    Component,
    ComponentIDs,
    Connect,
    CreateAccount,
    Design,
    DesignIDs,
    Fail,
    Features,
    FinishedTurn,
    Game,
    GetBoardIDs,
    GetBoards,
    GetCategory,
    GetCategoryIDs,
    GetComponent,
    GetComponentIDs,
    GetDesign,
    GetDesignIDs,
    GetFeatures,
    GetGames,
    GetIDSequence,
    GetMessage,
    GetObjectDesc,
    GetObjectDescIDs,
    GetObjectIDs,
    GetObjectIDsByContainer,
    GetObjectIDsByPos,
    GetObjectsByID,
    GetObjectsByPos,
    GetOrder,
    GetOrderDesc,
    GetOrderDescIDs,
    GetOrderQueue,
    GetOrderQueueIDs,
    GetPlayer,
    GetPlayerIDs,
    GetProperty,
    GetPropertyIDs,
    GetResource,
    GetResourceIDs,
    GetTimeRemaining,
    GetWithID,
    GetWithIDSlot,
    IDSequence,
    Login,
    Message,
    ModifyDesign,
    ObjectDescIDs,
    ObjectIDs,
    Okay,
    OrderDescIDs,
    OrderQueue,
    OrderQueueIDs,
    Ping,
    Player,
    PlayerIDs,
    PostMessage,
    Property,
    PropertyIDs,
    Redirect,
    RemoveCategory,
    RemoveDesign,
    RemoveMessage,
    RemoveOrder,
    Resource,
    ResourceIDs,
    Sequence,
    SetFilters,
    TimeRemaining,
)
from .objects import (
    AccelerationParam,
    AnyObject,
    BoundPositionParam,
    FleetExtra,
    GalaxyExtra,
    InfluenceParam,
    IntegerParam,
    MediaParam,
    ModifyObject,
    ObjectDesc,
    ObjectParam,
    ObjectParamDesc,
    ObjectParamGroupDesc,
    OrderQueueParam,
    PlanetExtra,
    PositionParam,
    ReferenceParam,
    ReferenceQuantityListParam,
    ResourceListParam,
    SizeParam,
    StarSystemExtra,
    Tp03Extra,
    Tp03Object,
    Tp04Object,
    UniverseExtra,
    VelocityParam,
    WormholeExtra,
)
from .orders import (
    AbsSpaceCoordsArg,
    GenericReferenceQuantityListArg,
    InsertOrder,
    ListArg,
    ListOption,
    ObjectArg,
    Order,
    OrderArg,
    OrderDesc,
    OrderParamDesc,
    PlayerArg,
    ProbeOrder,
    QuantityOption,
    RangeArg,
    ReferenceArg,
    ReferenceListArg,
    RelSpaceCoordsArg,
    ResourceListArg,
    StringArg,
    TimeArg,
    WeightMaximum,
)
from .records import (
    GameConnection,
    GameParam,
    IdCount,
    IdModtime,
    IdText,
    Reference,
    ReferenceQuantity,
    ResourceAmount,
    ShipCount,
    Vec3,
)

#: Every name above except the submodules (tests/protocol/test_layouts.py checks the list).
__all__ = [
    "AbsSpaceCoordsArg",
    "AccelerationParam",
    "AddCategory",
    "AddDesign",
    "Answer",
    "AnyObject",
    "Board",
    "BoardIDs",
    "BoardMessage",
    "BoundPositionParam",
    "Category",
    "CategoryIDs",
    "Component",
    "ComponentIDs",
    "Connect",
    "CreateAccount",
    "Deframer",
    "Design",
    "DesignIDs",
    "Direction",
    "EncodingError",
    "Fail",
    "FailCode",
    "FeatureId",
    "Features",
    "FinishedTurn",
    "FleetExtra",
    "Frame",
    "FrameType",
    "GalaxyExtra",
    "Game",
    "GameConnection",
    "GameParam",
    "GameParamId",
    "GenericReferenceQuantityListArg",
    "GetBoardIDs",
    "GetBoards",
    "GetCategory",
    "GetCategoryIDs",
    "GetComponent",
    "GetComponentIDs",
    "GetDesign",
    "GetDesignIDs",
    "GetFeatures",
    "GetGames",
    "GetIDSequence",
    "GetMessage",
    "GetObjectDesc",
    "GetObjectDescIDs",
    "GetObjectIDs",
    "GetObjectIDsByContainer",
    "GetObjectIDsByPos",
    "GetObjectsByID",
    "GetObjectsByPos",
    "GetOrder",
    "GetOrderDesc",
    "GetOrderDescIDs",
    "GetOrderQueue",
    "GetOrderQueueIDs",
    "GetPlayer",
    "GetPlayerIDs",
    "GetProperty",
    "GetPropertyIDs",
    "GetResource",
    "GetResourceIDs",
    "GetTimeRemaining",
    "GetWithID",
    "GetWithIDSlot",
    "HEADER_SIZE",
    "IDSequence",
    "IdCount",
    "IdModtime",
    "IdText",
    "InfluenceParam",
    "InsertOrder",
    "IntegerParam",
    "ListArg",
    "ListOption",
    "Login",
    "MAX_BODY_LENGTH",
    "MediaParam",
    "Message",
    "MissingDescriptionError",
    "ModifyDesign",
    "ModifyObject",
    "ObjectArg",
    "ObjectDesc",
    "ObjectDescIDs",
    "ObjectIDs",
    "ObjectParam",
    "ObjectParamDesc",
    "ObjectParamGroupDesc",
    "ObjectParamType",
    "Okay",
    "Order",
    "OrderArg",
    "OrderDesc",
    "OrderDescIDs",
    "OrderParamDesc",
    "OrderParamType",
    "OrderQueue",
    "OrderQueueIDs",
    "OrderQueueParam",
    "Ping",
    "PlanetExtra",
    "Player",
    "PlayerArg",
    "PlayerIDs",
    "PositionParam",
    "PostMessage",
    "ProbeOrder",
    "Property",
    "PropertyIDs",
    "ProtocolError",
    "QuantityOption",
    "RangeArg",
    "Redirect",
    "Reference",
    "ReferenceArg",
    "ReferenceListArg",
    "ReferenceParam",
    "ReferenceQuantity",
    "ReferenceQuantityListParam",
    "ReferenceType",
    "RelSpaceCoordsArg",
    "RemoveCategory",
    "RemoveDesign",
    "RemoveMessage",
    "RemoveOrder",
    "Resource",
    "ResourceAmount",
    "ResourceIDs",
    "ResourceListArg",
    "ResourceListParam",
    "Sequence",
    "SetFilters",
    "ShipCount",
    "SizeParam",
    "StarSystemExtra",
    "StringArg",
    "TimeArg",
    "TimeRemaining",
    "TimeRemainingReason",
    "Tp03Extra",
    "Tp03Object",
    "Tp04Object",
    "UniverseExtra",
    "Vec3",
    "VelocityParam",
    "Version",
    "WeightMaximum",
    "WormholeExtra",
    "coerce",
    "decode",
    "detect_version",
    "direction",
    "encode",
    "encode_body",
    "encode_error",
    "encode_header",
    "encode_reply",
    "fit_fail",
    "frame_bytes",
    "is_defined",
    "is_request",
    "is_response",
    "message_class",
]
