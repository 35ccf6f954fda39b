"""Which answer each request gets: one frame, or Sequence(N) and N frames (spec §6.2).

Declared once, here, for both ends: the server's dispatch encodes each handler's answer in the
request's form, and the client session uses it to know when a request is complete and what its
result looks like:

* ``ReplyForm.SINGLE``: exactly one frame, no Sequence (Connect, Login, GetFeatures,
  GetTimeRemaining, every Get…IDs, InsertOrder, ProbeOrder, AddDesign …). The result is that
  message. We still accept Sequence(1) + the frame, as PY4's ``_get_header`` does.
* ``ReplyForm.LIST``: Sequence(N) then N frames, each an item or a Fail for that item, in request
  order (GetObjectsByID, GetOrder, RemoveOrder, GetPlayer …). A lone item without Sequence is
  also accepted (tpserver-cpp before 2010 did that). The result is a tuple of the N messages.

In both forms, a lone Fail answers the whole request: the session raises ``RequestFailed``.
``accepts`` lists the message classes a successful item may have; anything else is an
``UnexpectedReply``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .enums import (
    Version,
)
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
    SetFilters,
    TimeRemaining,
)
from .objects import (
    ObjectDesc,
    Tp03Object,
    Tp04Object,
)
from .orders import (
    InsertOrder,
    Order,
    OrderDesc,
    ProbeOrder,
)


class ReplyForm(enum.Enum):
    SINGLE = "single"
    LIST = "list"


@dataclass(frozen=True, slots=True)
class ReplySpec:
    """How a request is answered: its ``form`` and the classes a successful item may have.

    ``lone_when_one``: a LIST answer of exactly one item is sent as that frame alone, without
    Sequence (GetGames: tpserver-cpp sends its one Game so, §2 table, type 65).
    """

    form: ReplyForm
    accepts: tuple[type[Message], ...]
    lone_when_one: bool = False


def _single(*classes: type[Message]) -> ReplySpec:
    return ReplySpec(ReplyForm.SINGLE, classes)


def _list(*classes: type[Message]) -> ReplySpec:
    return ReplySpec(ReplyForm.LIST, classes)


_OBJECTS = {Version.TP03: _list(Tp03Object), Version.TP04: _list(Tp04Object)}

#: Request class → answer, the same in both versions (objects and InsertOrder differ: below).
REPLIES: dict[type[Message], ReplySpec] = {
    Connect: _single(Okay, Redirect),
    Login: _single(Okay, Redirect),
    CreateAccount: _single(Okay),
    Ping: _single(Okay),
    FinishedTurn: _single(Okay),
    SetFilters: _single(Okay),
    PostMessage: _single(Okay),
    GetFeatures: _single(Features),
    GetTimeRemaining: _single(TimeRemaining),
    ProbeOrder: _single(Order),
    AddDesign: _single(Design),
    ModifyDesign: _single(Design),
    AddCategory: _single(Category),
    GetObjectIDs: _single(ObjectIDs),
    GetObjectIDsByPos: _single(ObjectIDs),
    GetObjectIDsByContainer: _single(ObjectIDs),
    GetOrderDescIDs: _single(OrderDescIDs),
    GetBoardIDs: _single(BoardIDs),
    GetResourceIDs: _single(ResourceIDs),
    GetCategoryIDs: _single(CategoryIDs),
    GetDesignIDs: _single(DesignIDs),
    GetComponentIDs: _single(ComponentIDs),
    GetPropertyIDs: _single(PropertyIDs),
    GetObjectDescIDs: _single(ObjectDescIDs),
    GetPlayerIDs: _single(PlayerIDs),
    GetOrderQueueIDs: _single(OrderQueueIDs),
    GetGames: ReplySpec(ReplyForm.LIST, (Game,), lone_when_one=True),
    GetOrderDesc: _list(OrderDesc),
    GetOrder: _list(Order),
    RemoveOrder: _list(Okay),
    GetBoards: _list(Board),
    GetMessage: _list(BoardMessage),
    RemoveMessage: _list(Okay),
    GetResource: _list(Resource),
    GetPlayer: _list(Player),
    GetCategory: _list(Category),
    RemoveCategory: _list(Okay),
    GetDesign: _list(Design),
    RemoveDesign: _list(Okay),
    GetComponent: _list(Component),
    GetProperty: _list(Property),
    GetObjectDesc: _list(ObjectDesc),
    GetOrderQueue: _list(OrderQueue),
}


def reply_spec(request: Message, version: Version) -> ReplySpec:
    """How ``request`` is answered on a ``version`` connection; ValueError for a frame that is
    not a request we know how to match (an Order, a reply type …)."""
    cls = type(request)
    if cls in (GetObjectsByID, GetObjectsByPos):
        return _OBJECTS[version]
    if cls is InsertOrder:
        # TP03: Okay "Order Added"; TP04: the Order frame of the new order (§4.4).
        return _single(Okay) if version == Version.TP03 else _single(Order)
    spec = REPLIES.get(cls)
    if spec is None:
        raise ValueError(f"{cls.__name__} is not a request this client knows how to send")
    return spec
