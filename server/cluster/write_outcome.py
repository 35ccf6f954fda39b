"""What became of a write a cluster node's TP session had under way when its game left.

A session relayed to a game's owner (or served by this node, which then lost the game) may
have a write under way when the owner dies, freezes or lets the game go: an order inserted, an
order or a board message removed. Its answer never came, so whether it was stored is unknown.
Once the game has a new owner (a new claim, `server.cluster.carry_over`), the old owner's
transaction is settled: its write held the game's claim row, which the new claim had to take
over, and its database sessions are gone (its lock was freed, or its peers ended them). So the
change records tell, read with the lookup the writer itself uses after a lost COMMIT
(`server.database.changes.thd_find_changes`).

A record is a request's when it has what the relaying node knows of the request: the player,
the object, the order type and the target (an order inserted), the player and the object (an
order removed), the player (a board message removed). Only records numbered after the
session's login count (`Ledger.mark`), less the ones the session was already told were made
(`Ledger.told`): what is left was made by the request under way. That is exact unless another
connection of the same player makes the same write in the same moment.

Stored, the request is answered as the owner would have answered it (`answer_stored`); not
stored, it is sent again to the new owner; part of a removal of several slots stored, the rest
is sent again.

A relay that gave up an owner that was only slow finds the same owner again (same node, same
claim): the write may still be on its way there. Then a request the owner refuses after taking
the game's write lock (`behind`) is sent first: once it is answered, the write before it has
been carried out or never will be, and the change records tell.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

import sqlalchemy as sa

import protocol as tp
from protocol import Deframer, Frame, FrameType, ProtocolError, Version
from server.database import changes as changes_q
from server.database.schema import accounts
from server.model.changes import KINDS, ChangeRecord, MessageRemoved, OrderGiven, OrderRemoved
from server.tp.board_requests import MESSAGE_REMOVED
from server.tp.order_requests import ORDER_REMOVED, order_inserted, order_target

# The writes of a logged-in session whose outcome is looked up; an account created while
# logged in is not (its record does not name the account): it keeps "may or may not".
LOOKED_UP = (tp.InsertOrder, tp.RemoveOrder, tp.RemoveMessage)

Key = tuple[Any, ...]


@dataclass
class Ledger:
    """A session's writes as far as looking one up goes: the player, the game's newest change
    record when the session logged in, and how many records of each key it was told it made."""

    player: int
    mark: int
    told: Counter[Key] = field(default_factory=Counter)


def thd_open_ledger(conn, game_id: int, username: str) -> tuple[int | None, int]:
    """(the account's player, the game's newest change record), on the database thread."""
    player = conn.execute(
        sa.select(accounts.c.player_id).where(accounts.c.game_id == game_id, accounts.c.username == username)
    ).scalar()
    return (None if player is None else int(player)), changes_q.thd_last_sequence(conn, game_id)


def request_key(message: tp.Message, player: int) -> Key | None:
    """The key of the records `message` makes (None: not a write looked up)."""
    if isinstance(message, tp.InsertOrder):
        return (KINDS[OrderGiven], player, message.id, message.type, order_target(message))
    if isinstance(message, tp.RemoveOrder):
        return (KINDS[OrderRemoved], player, message.id)
    if isinstance(message, tp.RemoveMessage):
        return (KINDS[MessageRemoved], player)
    return None


def change_key(change: Any) -> Key | None:
    """The key of a stored change, as `request_key` makes it."""
    if isinstance(change, OrderGiven):
        return (KINDS[OrderGiven], change.player, change.object_id, change.order_type, change.target)
    if isinstance(change, OrderRemoved):
        return (KINDS[OrderRemoved], change.player, change.object_id)
    if isinstance(change, MessageRemoved):
        return (KINDS[MessageRemoved], change.player)
    return None


def thd_records(conn, game_id: int, key: Key, after: int) -> list[ChangeRecord]:
    """The game's records of `key` numbered above `after`, oldest first."""
    return changes_q.thd_find_changes(
        conn, game_id, key[0], lambda change: change_key(change) == key, after=after
    )


def slots_of(message: tp.Message) -> int:
    """How many records the request makes when every part of it succeeds."""
    if isinstance(message, (tp.RemoveOrder, tp.RemoveMessage)):
        return len(message.slots)
    return 1


def frames_of(data: bytes) -> list[Frame]:
    """The frames of an answer (bytes, as a session gives them)."""
    deframer = Deframer()
    deframer.feed(data)
    frames = []
    try:
        while (frame := deframer.next_frame()) is not None:
            frames.append(frame)
    except ProtocolError:
        pass
    return frames


def items_of(data: bytes) -> list[Frame]:
    """The items of an answer: the frames after its Sequence, or its one frame."""
    frames = frames_of(data)
    if frames and frames[0].type == FrameType.SEQUENCE:
        return frames[1:]
    return frames


def made_by(message: tp.Message, answer: bytes) -> int:
    """How many records the answer to a write says were made (one per item not a Fail)."""
    return sum(1 for frame in items_of(answer) if frame.type != FrameType.FAIL)


#: A slot no queue or board has: a write of it is refused, with nothing changed.
NO_SLOT = 0x7FFFFFFF


def behind(message: tp.Message) -> tp.Message:
    """A request like `message` that the owner refuses, changing nothing, after taking the
    game's write lock (an order slot or a message slot that does not exist): answered, it says
    that every write sent before it has been carried out."""
    if isinstance(message, tp.InsertOrder):
        return replace(message, slot=NO_SLOT)
    assert isinstance(message, (tp.RemoveOrder, tp.RemoveMessage))
    return replace(message, slots=(NO_SLOT,))


def answer_stored(version: Version, message: tp.Message, record: ChangeRecord) -> Any:
    """What the owner answers a request with whose every part was stored (`record`: the last
    record it made): the message, or the items of a list answer."""
    if isinstance(message, tp.InsertOrder):
        assert isinstance(record.change, OrderGiven)
        return order_inserted(version, message, record.change.slot, record.change.target)
    text = ORDER_REMOVED if isinstance(message, tp.RemoveOrder) else MESSAGE_REMOVED
    return [tp.Okay(text)] * slots_of(message)
