"""One client connection's conversation (spec/protocol.md §5, §10): a state machine and a
dispatch table from request class to command.

The session does no I/O. `handle(message, sequence)` returns the bytes to write (or a Deferred
of them); `push` is how it sends asynchronous frames (TimeRemaining, sequence 0). Before login
only the frames of §5.4 (and Ping) are accepted.

Like AMP's responders, the pieces are apart: `COMMANDS` says, per request class, which handler
answers it, whether it is allowed before login and which references a refusal carries; the
handler returns its answer as a message (or a list of items, for requests answered with
Sequence + N, as `protocol.replies` declares for both ends) or raises; the encoding and the
error map (`server.tp.errors`) are shared by all. Handlers read the game from one snapshot
(`self.snapshot`) and write through the game service. Handlers for one game wait while that
game is resolving a turn, so after TimeRemaining(0) a client sees only the new turn.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from twisted.internet import defer
from twisted.logger import Logger
from twisted.python.failure import Failure

import protocol as tp
from protocol import FailCode, fit_fail
from protocol.replies import ReplyForm, reply_spec
from server.tp.board_requests import BoardRequests
from server.tp.errors import fail, fail_for, internal_error
from server.tp.login_requests import LoginRequests
from server.tp.order_requests import OrderRequests
from server.tp.session_base import Item, Refs, State, queue_ref
from server.tp.universe_requests import UniverseRequests

log = Logger()


@dataclass(frozen=True, slots=True)
class Command:
    """How one request class is served (AMP's Command, for TP requests)."""

    handler: Callable[..., Any]
    before_login: bool = False
    refs: Callable[[Any], Refs] = lambda message: ()


class Session(LoginRequests, UniverseRequests, OrderRequests, BoardRequests):
    """The protocol state of one connection: dispatch, encoding, and the handlers it joins."""

    # -- entry points --------------------------------------------------------------------

    def handle(self, message: tp.Message, sequence: int) -> bytes | defer.Deferred:
        """Answer one decoded request: bytes, or a Deferred firing with bytes."""
        command = COMMANDS.get(type(message))
        if self.state is State.NEW and not isinstance(message, tp.Connect):
            return self._encode(
                fail(FailCode.PROTOCOL, "First frame wasn't Connect, please try again"), sequence
            )
        if command is None:
            return self._encode(fail(FailCode.PROTOCOL, "Did not understand that frame type."), sequence)
        if self.state is not State.PLAYING and not command.before_login:
            return self._encode(
                fail(FailCode.FRAME, "Wrong type of frame in this state, please login first"), sequence
            )
        game = self.game if self.state is State.PLAYING else None
        if game is not None and game.busy and not isinstance(message, tp.Ping):
            # Wait for the new turn; while the store cannot keep it, answer "try again" at once.
            d = game.ready_or_refused()
            if isinstance(message, tp.FinishedTurn):
                # Sent while the turn was ending: it was meant for that turn, not the next one.
                d.addCallback(lambda _: self._encode(tp.Okay("Turn finished"), sequence))
            else:
                d.addCallback(lambda _: self._run(command, message, sequence))
            d.addErrback(
                lambda failure: self._encode(self._failure(failure.value, command, message), sequence)
            )
            return d
        return self._run(command, message, sequence)

    # -- running a command ---------------------------------------------------------------

    def _run(self, command: Command, message: tp.Message, sequence: int) -> bytes | defer.Deferred:
        try:
            answer = command.handler(self, message)
        except Exception as error:
            return self._encode(self._failure(error, command, message), sequence)
        if isinstance(answer, defer.Deferred):
            answer.addCallbacks(
                lambda result: self._answer(message, result, sequence),
                lambda failure: self._encode(self._failure(failure.value, command, message), sequence),
            )
            return answer
        return self._answer(message, answer, sequence)

    def _failure(self, error: BaseException, command: Command, message: tp.Message) -> tp.Fail:
        answer = fail_for(error, command.refs(message))
        if answer is None:
            log.failure("handler failed for {message}", Failure(error), message=type(message).__name__)
            return internal_error()
        return answer

    def _answer(self, request: tp.Message, answer: tp.Message | list[Item], sequence: int) -> bytes:
        """Encode a handler's answer in the form `protocol.replies` declares for the request."""
        if isinstance(answer, list):
            spec = reply_spec(request, self.version)
            if spec.form is ReplyForm.LIST and spec.lone_when_one and len(answer) == 1:
                return self._encode(answer[0], sequence)
            return self._sequence(answer, sequence)
        return self._encode(answer, sequence)

    # -- encoding ------------------------------------------------------------------------

    def _encode(self, item: Item, sequence: int) -> bytes:
        if isinstance(item, tuple):
            return tp.frame_bytes(self.version, sequence, item[0], item[1])
        if isinstance(item, tp.Fail):
            item = fit_fail(item, self.version)
        return tp.encode(item, self.version, sequence)

    def _sequence(self, items: list[Item], sequence: int) -> bytes:
        """Sequence(N) and N frames, in one write."""
        parts = [tp.encode(tp.Sequence(len(items)), self.version, sequence)]
        parts.extend(self._encode(item, sequence) for item in items)
        return b"".join(parts)


COMMANDS: dict[type, Command] = {
    tp.Connect: Command(Session.on_connect, before_login=True),
    tp.Login: Command(Session.on_login, before_login=True),
    tp.Ping: Command(Session.on_ping, before_login=True),
    tp.GetFeatures: Command(Session.on_get_features, before_login=True),
    tp.SetFilters: Command(Session.on_set_filters, before_login=True),
    tp.GetGames: Command(Session.on_get_games, before_login=True),
    tp.GetTimeRemaining: Command(Session.on_get_time_remaining, before_login=True),
    tp.CreateAccount: Command(Session.on_create_account, before_login=True),
    tp.GetObjectIDs: Command(Session.on_get_object_ids),
    tp.GetObjectsByID: Command(Session.on_get_objects_by_id),
    tp.GetObjectsByPos: Command(Session.on_get_objects_by_pos),
    tp.GetObjectIDsByPos: Command(Session.on_get_object_ids_by_pos),
    tp.GetObjectIDsByContainer: Command(Session.on_get_object_ids_by_container),
    tp.GetObjectDesc: Command(Session.on_get_object_desc),
    tp.GetObjectDescIDs: Command(Session.on_get_object_desc_ids),
    tp.ModifyObject: Command(Session.on_modify_object),
    tp.GetOrderDesc: Command(Session.on_get_order_desc),
    tp.GetOrderDescIDs: Command(Session.on_get_order_desc_ids),
    tp.GetOrder: Command(Session.on_get_order),
    tp.InsertOrder: Command(Session.on_insert_order, refs=queue_ref),
    tp.ProbeOrder: Command(Session.on_probe_order, refs=queue_ref),
    tp.RemoveOrder: Command(Session.on_remove_order),
    tp.GetOrderQueueIDs: Command(Session.on_get_order_queue_ids),
    tp.GetOrderQueue: Command(Session.on_get_order_queue),
    tp.FinishedTurn: Command(Session.on_finished_turn),
    tp.GetBoardIDs: Command(Session.on_get_board_ids),
    tp.GetBoards: Command(Session.on_get_boards),
    tp.GetMessage: Command(Session.on_get_message),
    tp.RemoveMessage: Command(Session.on_remove_message),
    tp.PostMessage: Command(Session.on_post_message),
    tp.GetResourceIDs: Command(Session.on_get_resource_ids),
    tp.GetResource: Command(Session.on_get_resource),
    tp.GetCategoryIDs: Command(Session.on_get_category_ids),
    tp.GetCategory: Command(Session.on_get_category),
    tp.AddCategory: Command(Session.on_refused_edit),
    tp.RemoveCategory: Command(Session.on_refused_edit),
    tp.GetComponentIDs: Command(Session.on_get_component_ids),
    tp.GetComponent: Command(Session.on_get_component),
    tp.GetPropertyIDs: Command(Session.on_get_property_ids),
    tp.GetProperty: Command(Session.on_get_property),
    tp.GetDesignIDs: Command(Session.on_get_design_ids),
    tp.GetDesign: Command(Session.on_get_design),
    tp.AddDesign: Command(Session.on_refused_edit),
    tp.ModifyDesign: Command(Session.on_refused_edit),
    tp.RemoveDesign: Command(Session.on_refused_edit),
    tp.GetPlayerIDs: Command(Session.on_get_player_ids),
    tp.GetPlayer: Command(Session.on_get_player),
}
