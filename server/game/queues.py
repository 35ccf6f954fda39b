"""The players' order queues and boards of one game: giving, checking and taking back orders,
posting and removing board messages.

`OrdersAndBoards` is the part of the write side (`server.game.game.Game`) that changes the
queues and the boards; every change is checked by the ruleset, stored with its change record
(`OrderGiven`, `OrderRemoved`, `MessageRemoved`) and applied once the store has it.
"""

from __future__ import annotations

from twisted.internet import defer

from ruleset import Message, Order, Phase, Problem, check_order
from ruleset.orders import NO_SUCH_QUEUE, owns_queue
from server.game.write_side import GameWriteSide
from server.model.attendance import Presence, attendance_of
from server.model.changes import MessageRemoved, OrderGiven, OrderRemoved
from server.model.refusals import (
    BAD_SLOT,
    NO_SUCH_MESSAGE,
    REMOVED,
    RESIGNED,
    refuse,
)
from server.model.snapshot import BoardMessage, QueuedOrder
from server.model.store import (
    OrderEntry,
)
from server.model.writes import (
    StoreOrder,
    TakeBackOrder,
    TakeDownMessage,
)


class OrdersAndBoards(GameWriteSide):
    """The orders-and-boards part of `Game` (see the module docstring)."""

    # -- orders --------------------------------------------------------------------------

    def check_order(self, player: int, object_id: int, order_type: int, target: int) -> Problem | None:
        """What Probe Order answers: the ruleset's verdict on the order, nothing stored."""
        snapshot = self.snapshot
        return check_order(
            snapshot.state, Order(player, object_id, order_type, target), snapshot.orders_of(player)
        )

    def insert_order(
        self, player: int, object_id: int, slot: int, order_type: int, target: int
    ) -> defer.Deferred:
        """Check, store, then queue a player's order; fires with its slot (slot -1 appends).
        An absent player who gives an order plays their own seat again."""
        return self._lock.run(self._player_inserts, player, object_id, slot, order_type, target)

    def _player_inserts(
        self, player: int, object_id: int, slot: int, order_type: int, target: int
    ) -> defer.Deferred:
        presence = attendance_of(self._attendance, player).presence
        if presence is Presence.RESIGNED:
            return refuse(RESIGNED)
        d = self._insert_order(player, object_id, slot, order_type, target)
        if presence is Presence.ABSENT:
            d.addCallback(lambda position: self._back_quietly(player).addCallback(lambda _: position))
        return d

    def _insert_order(
        self, player: int, object_id: int, slot: int, order_type: int, target: int
    ) -> defer.Deferred:
        if player in self._removed:
            return refuse(REMOVED)
        order = Order(player, object_id, order_type, target)
        problem = check_order(self._state, order, self.snapshot.orders_of(player))
        queue = self._queues.get(object_id, ())
        if problem is None and not (slot == -1 or 0 <= slot <= len(queue)):
            problem = BAD_SLOT
        if problem is not None:
            return refuse(problem)
        self.order_serial += 1
        position = len(queue) if slot == -1 else slot
        entry = OrderEntry(
            self.order_serial, self._state.turn + 1, player, object_id, position, order_type, target
        )
        change = OrderGiven(entry.turn, player, object_id, position, order_type, target, entry.seq)

        def stored() -> int:
            current = self._queues.get(object_id, ())
            self._queues[object_id] = current[:position] + (QueuedOrder(entry, order),) + current[position:]
            self._publish(touched=(object_id,))
            return position

        return self._write(change, (StoreOrder(entry),), stored)

    def remove_order(self, player: int, object_id: int, slot: int) -> defer.Deferred:
        """Take back one order of the coming turn; fails with Refused when there is none."""
        return self._lock.run(self._remove_order, player, object_id, slot)

    def _remove_order(self, player: int, object_id: int, slot: int) -> defer.Deferred:
        if self._state.phase is Phase.OVER or not owns_queue(self._state, player, object_id):
            return refuse(NO_SUCH_QUEUE)
        queue = self._queues.get(object_id, ())
        if not 0 <= slot < len(queue):
            return refuse(BAD_SLOT)
        queued = queue[slot]
        change = OrderRemoved(queued.entry.turn, player, object_id, queued.entry.seq)

        def stored() -> None:
            remaining = tuple(q for q in self._queues.get(object_id, ()) if q is not queued)
            if remaining:
                self._queues[object_id] = remaining
            else:
                self._queues.pop(object_id, None)
            self._publish(touched=(object_id,))

        return self._write(change, (TakeBackOrder(queued.entry.seq),), stored)

    # -- boards --------------------------------------------------------------------------

    def _post(self, message: Message) -> None:
        index = self._posted.get(message.player, 0)
        self._posted[message.player] = index + 1
        self._boards[message.player] = (*self._boards.get(message.player, ()), BoardMessage(index, message))

    def remove_message(self, player: int, slot: int) -> defer.Deferred:
        """Remove one message from a player's board; fails with Refused(NO_SUCH_MESSAGE)."""
        return self._lock.run(self._remove_message, player, slot)

    def _remove_message(self, player: int, slot: int) -> defer.Deferred:
        board = self._boards.get(player, ())
        if not 0 <= slot < len(board):
            return refuse(NO_SUCH_MESSAGE)
        item = board[slot]

        def stored() -> None:
            self._boards[player] = tuple(m for m in self._boards.get(player, ()) if m is not item)
            self._publish()

        change = MessageRemoved(player, item.index)
        return self._write(change, (TakeDownMessage(player, item.index),), stored)
