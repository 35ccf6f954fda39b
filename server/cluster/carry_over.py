"""Carrying a cluster node's TP session over when its game moves to another node.

When the game leaves (handed over, its node died, this node lost its claim) the session finds
the new owner (claim rounds, `ClusterNode.placement`), logs in there again with the client's
credentials and goes on; the client keeps its connection. A request that was under way then is
sent again if it changes nothing; an order, a removal or an account (which may or may not
have been stored) is answered with Fail "temporarily unavailable" (nothing acknowledged was
lost, and the client looks again); FinishedTurn is answered from the database: done when the
turn it was sent in has ended or its finished flag is stored, else sent again. A session
relayed here from another node is closed instead: the relaying node carries its client over.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from twisted.internet import defer
from twisted.logger import Logger
from twisted.python.failure import Failure

import protocol as tp
from protocol import FailCode, Frame
from protocol.records import Reference
from server.cluster.relay import decode_answer
from server.cluster.session_state import NOT_HERE, SessionState
from server.database.schema import accounts, finished_turns, games
from server.tp.session import State

log = Logger()

MOVED_TEXT = (
    "The game moved to another server while this request was carried out; it may or may not "
    "have been done: look again."
)
# Requests whose repetition could do twice what the client asked once.
WRITES = (tp.InsertOrder, tp.RemoveOrder, tp.RemoveMessage, tp.CreateAccount)


def _finished_state(conn, game_id: int, username: str, turn: int) -> tuple[int, bool]:
    last = conn.execute(sa.select(games.c.last_turn).where(games.c.id == game_id)).scalar() or 0
    player = conn.execute(
        sa.select(accounts.c.player_id).where(accounts.c.game_id == game_id, accounts.c.username == username)
    ).scalar()
    flag = player is not None and (
        conn.execute(
            sa.select(finished_turns.c.player).where(
                finished_turns.c.game_id == game_id,
                finished_turns.c.turn == turn,
                finished_turns.c.player == player,
            )
        ).first()
        is not None
    )
    return int(last), bool(flag)


class CarryOver(SessionState):
    """Carrying `server.cluster.routing.ClusterSession` over (see the module docstring)."""

    async def _carry_over_request(self, message, frame: Frame, turn: int) -> bytes:
        if not await self._recover():
            return b""
        return await self._repeat(message, frame, turn)

    async def _repeat(self, message: tp.Message, frame: Frame, turn: int) -> bytes:
        """The request under way when the game left, now that the new owner serves us."""
        if isinstance(message, WRITES):
            refs: tuple[tuple[tp.ReferenceType, int], ...] = ()
            if isinstance(message, tp.InsertOrder):
                refs = ((tp.ReferenceType.ORDER_QUEUE, message.id),)
            fail = tp.Fail(
                FailCode.UNAVAILABLE_TEMPORARILY,
                MOVED_TEXT,
                tuple(Reference(kind, ref) for kind, ref in refs),
            )
            return self._encode(fail, frame.sequence)
        if isinstance(message, tp.FinishedTurn) and self.game_id is not None and self.credentials:
            last, finished = await self.node.store.read(
                _finished_state, self.game_id, self.credentials[0], turn
            )
            if last >= turn or finished:
                return self._encode(tp.Okay("Turn finished"), frame.sequence)
        again: bytes = await defer.maybeDeferred(self.handle_frame, message, frame)  # type: ignore[call-overload]
        return again

    # -- carrying the session over ---------------------------------------------------------

    def _departed(self, game_id: int) -> None:
        if game_id != self.game_id or self.mode != "local" or self.closed:
            return
        if self.relayed:
            self.mode = "moving"
            if self.close is not None:
                self.close()
            return
        if self._abandon is not None:
            self._abandon()
        else:
            self._recover()

    def _recover(self) -> defer.Deferred:
        """Fires True once the session is logged in at the game's new owner; False (and the
        client's connection closed) when that cannot be done within `relay_timeout`. Every
        caller while a recovery runs waits for that one (`_after_recovery`); a recovery that
        finishes at once answers at once."""
        d: defer.Deferred = defer.Deferred()
        self._after_recovery.append(d)
        if self._recovery is not None:
            return d

        def done(result: Any) -> None:
            ok = result is True
            self._recovery = None
            if isinstance(result, Failure):
                log.failure("game {game}: carrying a session over failed", result, game=self.game_name)
            if not ok and not self.closed:
                log.info(
                    "game {game}: a session could not be carried over to the new owner; closing it",
                    game=self.game_name,
                )
                if self.close is not None:
                    self.close()
            waiting, self._after_recovery = self._after_recovery, []
            for waiter in waiting:
                waiter.callback(ok)

        recovery = defer.ensureDeferred(self._find_new_owner())
        if not recovery.called:
            self._recovery = recovery
        recovery.addBoth(done)
        return d

    async def _find_new_owner(self) -> bool:
        failed = (
            (self.upstream_node, self.upstream_epoch)
            if self.mode == "remote"
            else (self.node.name, self.node.store.claims.get(self.game_id or -1))
        )
        self.mode = "moving"
        self.local.connection_lost()
        self._drop_upstream()
        reactor = self.node.reactor
        deadline = reactor.seconds() + self.node.settings.relay_timeout
        tried_same = False
        while not self.closed and reactor.seconds() < deadline:
            await self.node.refresh()
            placement = self.node.placement(self.game_name)
            if placement is None:
                return False  # the game is gone
            same = (placement.node, placement.epoch) == failed
            if not placement.owned or (same and tried_same):
                await sleep(reactor, min(0.2, max(0.0, deadline - reactor.seconds())))
                continue
            tried_same = tried_same or same
            if placement.node == self.node.name:
                if await self.node.arrival(placement.name, max(0.1, deadline - reactor.seconds())) is None:
                    continue
                verdict = await self._log_in_locally()
            else:
                verdict = await self._log_in_remotely(placement)
            if verdict is not None:
                return verdict
        return False

    async def _log_in_locally(self) -> bool | None:
        assert self.credentials is not None and self.game_name is not None
        user, password = self.credentials
        session = self._make_local()
        session.handle(tp.Connect(self.client or "tpserver-tae-cluster"), 1)
        await defer.maybeDeferred(session.handle, tp.Login(f"{user}@{self.game_name}", password), 2)
        if session.state is State.PLAYING and session.game is not None and not session.game.closed:
            self.local, self.mode, self.game_id = session, "local", session.game.id
            return True
        if session.game is not None and session.game.closed:  # it left while we logged in
            session.connection_lost()
            return None
        session.connection_lost()
        return None if self.node.local(self.game_name) is None else False

    async def _log_in_remotely(self, placement) -> bool | None:
        assert self.credentials is not None
        user, password = self.credentials
        answer = await self._via_owner(placement, tp.Login(f"{user}@{placement.name}", password))
        if answer is None:
            return None
        reply = decode_answer(answer)
        if isinstance(reply, tp.Okay):
            self.mode, self.game_id = "remote", placement.game_id
            return True
        if isinstance(reply, tp.Fail) and reply.message == NOT_HERE:
            self._drop_upstream()
            return None
        return False


def sleep(reactor, seconds: float) -> defer.Deferred:
    d: defer.Deferred = defer.Deferred()
    reactor.callLater(max(0.0, seconds), d.callback, None)
    return d
