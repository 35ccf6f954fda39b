"""Carrying a cluster node's TP session over when its game moves to another node.

When the game leaves (handed over, its node died, this node lost its claim) the session finds
the new owner (claim rounds, `ClusterNode.placement`), logs in there again with the client's
credentials and goes on; the client keeps its connection, and a request under way then is
held and answered as if nothing had happened:

* a read is sent again to the new owner; a list the client was paging through with a key the
  old owner gave is started again at the new owner, whose key the session puts in its place
  (`_listed`);
* an order inserted, an order or a message removed whose answer was lost is looked up in the
  change records once the game has a new owner (`server.cluster.write_outcome`): stored, it is
  answered as the owner would have; not stored, it is sent again (when the owner found is the
  same, after a request it refuses behind the write). Only when that cannot be told (the
  database does not answer in time, the same owner cannot be asked) is it answered Fail
  "temporarily unavailable ... may or may not have been done";
* FinishedTurn is answered from the database: done when the turn it was sent in has ended or
  its finished flag is stored, else sent again;
* an account created while logged in keeps the "may or may not" Fail; one created before
  login (routed by `server.cluster.routing`) whose answer was lost is sent again, and answered
  Okay when refused because the first one made it (`_created_after_all`).

A session relayed here from another node is closed instead: the relaying node carries its
client over.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import sqlalchemy as sa
from twisted.internet import defer
from twisted.logger import Logger
from twisted.python.failure import Failure

import protocol as tp
from protocol import FailCode, Frame
from protocol.records import Reference
from server.cluster import write_outcome
from server.cluster.relay import UpstreamLost, decode_answer
from server.cluster.session_state import NOT_HERE, SessionState
from server.cluster.write_outcome import Ledger
from server.database.schema import accounts, finished_turns, games
from server.tp.login_requests import ACCOUNT_CREATED
from server.tp.session import State

log = Logger()

MOVED_TEXT = (
    "The game moved to another server while this request was carried out; it may or may not "
    "have been done: look again."
)
# Requests whose repetition could do twice what the client asked once.
WRITES = (tp.InsertOrder, tp.RemoveOrder, tp.RemoveMessage, tp.CreateAccount)


@dataclass
class PagedList:
    """A Get…IDs list the client started (key -1): its `since` and the carry-over it was
    started in; once started again at a new owner, the new owner's key and the keys the
    client may still page with (the first owner's, and any owner's before the newest)."""

    since: int
    generation: int
    owner_key: int | None = None
    keys: set[int] = field(default_factory=set)


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
            settled = await self._settle_write(message, frame)
            if settled is not None:
                return settled
        if isinstance(message, tp.FinishedTurn) and self.game_id is not None and self.credentials:
            last, finished = await self.node.store.read(
                _finished_state, self.game_id, self.credentials[0], turn
            )
            if last >= turn or finished:
                return self._encode(tp.Okay("Turn finished"), frame.sequence)
        again: bytes = await defer.maybeDeferred(self.handle_frame, message, frame)  # type: ignore[call-overload]
        return again

    def _moved_fail(self, message: tp.Message, sequence: int) -> bytes:
        refs: tuple[tuple[tp.ReferenceType, int], ...] = ()
        if isinstance(message, tp.InsertOrder):
            refs = ((tp.ReferenceType.ORDER_QUEUE, message.id),)
        fail = tp.Fail(
            FailCode.UNAVAILABLE_TEMPORARILY,
            MOVED_TEXT,
            tuple(Reference(kind, ref) for kind, ref in refs),
        )
        return self._encode(fail, sequence)

    # -- a write whose answer was lost (server.cluster.write_outcome) -----------------------

    async def _open_ledger(self) -> None:
        """Just logged in: note the player and the game's newest change record, from which a
        write under way when the game leaves is looked up. Without them (the database does not
        answer) such a write is answered "may or may not". A session relayed here needs none:
        the relaying node carries its client over."""
        self.ledger = None
        if self.game_id is None or self.credentials is None or self.relayed:
            return
        try:
            player, mark = await self._in_time(
                self.node.store.read(write_outcome.thd_open_ledger, self.game_id, self.credentials[0])
            )
        except Exception as error:
            log.info(
                "game {game}: a session's writes cannot be looked up ({error})",
                game=self.game_name,
                error=error,
            )
            return
        if player is not None:
            self.ledger = Ledger(player, mark)

    def _note_answer(self, message: tp.Message, answer: Any) -> None:
        """Count the records a write's answer says were made (see `write_outcome`)."""
        if self.ledger is None or not isinstance(answer, bytes):
            return
        key = write_outcome.request_key(message, self.ledger.player)
        if key is not None:
            self.ledger.told[key] += write_outcome.made_by(message, answer)

    def _in_time(self, d: defer.Deferred) -> defer.Deferred:
        return d.addTimeout(self.node.settings.relay_answer_timeout, self.node.reactor)

    async def _settle_write(self, message: tp.Message, frame: Frame) -> bytes | None:
        """The answer to a write under way when the game left: the owner's answer when it is
        stored (the rest sent again when only part of it is), None when it is not (the caller
        sends it again), Fail "may or may not" while that cannot be told."""
        ledger, game_id = self.ledger, self.game_id
        key = None if ledger is None else write_outcome.request_key(message, ledger.player)
        if ledger is None or key is None or game_id is None:
            return self._moved_fail(message, frame.sequence)

        async def found() -> list:
            return await self._in_time(
                self.node.store.read(write_outcome.thd_records, game_id, key, ledger.mark)
            )

        try:
            records = await found()
            if len(records) <= ledger.told[key] and not self.owner_changed:
                # The same owner (it was slow, not gone): the write may still be on its way.
                if not await self._behind_the_write(message, frame.sequence):
                    return self._moved_fail(message, frame.sequence)
                records = await found()
        except Exception as error:
            log.info(
                "game {game}: whether a {request} under way is stored cannot be told ({error})",
                game=self.game_name,
                request=type(message).__name__,
                error=error,
            )
            return self._moved_fail(message, frame.sequence)
        made = max(0, len(records) - ledger.told[key])
        wanted = write_outcome.slots_of(message)
        log.info(
            "game {game}: a {request} under way when the game left is {how}",
            game=self.game_name,
            request=type(message).__name__,
            how="stored"
            if made >= wanted
            else f"stored in part ({made} of {wanted})"
            if made
            else "not stored",
        )
        if made == 0:
            return None
        if made >= wanted:
            ledger.told[key] += wanted
            items = write_outcome.answer_stored(self.version, message, records[-1])
            return self.local._answer(message, items, frame.sequence)
        # Part of a removal of several slots: the rest, sent again, completes the answer.
        assert isinstance(message, (tp.RemoveOrder, tp.RemoveMessage))
        ledger.told[key] += made
        rest = replace(message, slots=message.slots[made:])
        again = await self._send_again(rest, frame.sequence)
        done = write_outcome.answer_stored(
            self.version, replace(message, slots=message.slots[:made]), records[-1]
        )
        parts = done + [(item.type, item.body) for item in write_outcome.items_of(again)]
        return self.local._answer(message, parts, frame.sequence)

    async def _behind_the_write(self, message: tp.Message, sequence: int) -> bool:
        """Whether a request refused after the game's write lock (`write_outcome.behind`) was
        answered by the owner this session is relayed to (the same as before the carry-over)."""
        upstream = self.upstream
        if self.mode != "remote" or upstream is None:
            return False
        barrier = write_outcome.behind(message)
        frame = Frame(self.version, 0, sequence, barrier.TYPE, tp.encode_body(barrier, self.version))
        try:
            await self._exchange(upstream, frame)
        except UpstreamLost:
            return False
        return True

    async def _account_exists(self, game_id: int, username: str) -> bool | None:
        """Whether the game has an account of that name (None: the database cannot tell now)."""
        try:
            player, _ = await self._in_time(
                self.node.store.read(write_outcome.thd_open_ledger, game_id, username)
            )
        except Exception:
            return None
        return player is not None

    async def _created_after_all(
        self, message: tp.Message, game_id: int, username: str, existed: bool | None, answer: bytes
    ) -> bytes:
        """The answer to a CreateAccount sent again because the first one's answer was lost:
        refused, yet the account exists now and did not before it was first sent, the first
        one made it: Okay, as its owner answered."""
        frames = write_outcome.frames_of(answer)
        if (
            not isinstance(message, tp.CreateAccount)
            or existed is not False
            or not frames
            or frames[0].type != tp.FrameType.FAIL
            or not await self._account_exists(game_id, username)
        ):
            return answer
        log.info("game {game}: an account whose creation's answer was lost was created", game=game_id)
        return self._encode(tp.Okay(ACCOUNT_CREATED), frames[0].sequence)

    async def _send_again(self, message: tp.Message, sequence: int) -> bytes:
        """`message` handled as if the client had sent it now."""
        frame = Frame(self.version, 0, sequence, message.TYPE, tp.encode_body(message, self.version))
        again: bytes = await defer.maybeDeferred(self.handle_frame, message, frame)  # type: ignore[call-overload]
        return again

    # -- a list paged through with the old owner's key ---------------------------------------

    async def _listed(self, message: tp.GetIDSequence, frame: Frame) -> bytes:
        """A Get…IDs request. Its key is the one the owner gave when the list was started;
        after a carry-over the new owner knows no such key: the list is started again there,
        and the new owner's key put in the place of the client's, both ways."""
        kind = type(message)
        if message.key == -1:
            self._lists[kind] = PagedList(message.since, self.generation)
            return await self._send_on(message, frame.sequence, frame)
        entry = self._lists.get(kind)
        if entry is None:
            return await self._send_on(message, frame.sequence, frame)
        if entry.generation != self.generation:
            start = replace(message, key=-1, start=0, amount=0, since=entry.since)
            started = decode_answer(write_outcome.frames_of(await self._send_on(start, frame.sequence)))
            if not isinstance(started, tp.IDSequence):
                return await self._send_on(message, frame.sequence, frame)
            entry.keys.add(message.key)
            if entry.owner_key is not None:
                entry.keys.add(entry.owner_key)
            entry.owner_key, entry.generation = started.key, self.generation
            self._lists[kind] = entry
        if entry.owner_key is None or message.key not in entry.keys:
            return await self._send_on(message, frame.sequence, frame)
        answer = await self._send_on(replace(message, key=entry.owner_key), frame.sequence)
        reply = decode_answer(write_outcome.frames_of(answer))
        if isinstance(reply, tp.IDSequence) and (reply.key == entry.owner_key or reply.key in entry.keys):
            return self._encode(replace(reply, key=message.key), frame.sequence)
        return answer

    async def _send_on(self, message: tp.Message, sequence: int, frame: Frame | None = None) -> bytes:
        """`message` sent to the game's owner (or served here), not through `_listed` again;
        `frame` is the client's, when `message` is what it decodes to."""
        if frame is None:
            frame = Frame(self.version, 0, sequence, message.TYPE, tp.encode_body(message, self.version))
        answer: bytes = await defer.maybeDeferred(self._serve, message, frame)  # type: ignore[call-overload]
        return answer

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
                if verdict:
                    self.generation += 1
                    self.owner_changed = (placement.node, placement.epoch) != failed
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
