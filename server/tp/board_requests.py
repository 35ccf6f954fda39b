"""The requests about the player's board and its messages."""

from __future__ import annotations

from twisted.internet import defer

import protocol as tp
from protocol import FailCode, ReferenceType
from protocol.records import IdModtime
from server.tp.errors import TPRefusal, fail, fail_for, internal_error
from server.tp.session_base import Item, SessionBase
from server.views.tp import frames as tp_frames

MESSAGE_REMOVED = "Message removed"  # the Okay of each slot of a RemoveMessage


class BoardRequests(SessionBase):
    """The requests about the player's board and its messages."""

    # -- boards and messages -------------------------------------------------------------

    def _require_board(self, board_id: int) -> int:
        """Board 0 and the player's own id name the player's board; no other is visible."""
        assert self.player is not None
        if board_id not in (0, self.player):
            raise TPRefusal(FailCode.NO_SUCH_THING, "No such board", [(ReferenceType.BOARD, board_id)])
        return self.player

    def on_get_board_ids(self, message: tp.GetBoardIDs) -> tp.Message:
        snapshot, player = self.snapshot, self.player
        assert player is not None
        return self._id_list(
            "boards",
            message,
            tp.BoardIDs,
            lambda: [IdModtime(player, tp_frames.board_modtime(snapshot, player))],
        )

    def on_get_boards(self, message: tp.GetBoards) -> list[Item]:
        snapshot = self.snapshot

        player = self.player
        assert player is not None

        def one(board_id: int) -> Item:
            if board_id not in (0, player):
                return fail(FailCode.NO_SUCH_THING, "No such board", [(ReferenceType.BOARD, board_id)])
            return tp_frames.board_frame(snapshot, player)

        return self._each(message.ids, one)

    def on_get_message(self, message: tp.GetMessage) -> list[Item]:
        player = self._require_board(message.id)
        snapshot = self.snapshot

        def one(slot: int) -> Item:
            frame = tp_frames.board_message_frame(snapshot, player, slot)
            if frame is None:
                return fail(
                    FailCode.NO_SUCH_THING,
                    "No such message",
                    [(ReferenceType.BOARD, message.id), (ReferenceType.MESSAGE, slot)],
                )
            return frame

        return self._each(message.slots, one)

    def on_remove_message(self, message: tp.RemoveMessage) -> defer.Deferred:
        assert self.game is not None
        player = self._require_board(message.id)
        if not message.slots:
            raise TPRefusal(FailCode.NO_SUCH_THING, "You didn't ask for any data, try again")
        game = self.game
        results: list[Item] = []

        def remove(_: object, slot: int) -> defer.Deferred:
            d = game.remove_message(player, slot)
            d.addCallbacks(
                lambda _: results.append(tp.Okay(MESSAGE_REMOVED)),
                lambda failure: results.append(fail_for(failure.value) or internal_error()),
            )
            return d

        d: defer.Deferred = defer.succeed(None)
        for slot in message.slots:
            d.addCallback(remove, slot)
        return d.addCallback(lambda _: results)

    def on_post_message(self, message: tp.PostMessage) -> tp.Message:
        raise TPRefusal(FailCode.UNAVAILABLE_PERMANENTLY, "Posting messages is not supported by TaE")
