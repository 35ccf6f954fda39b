"""One admin connection's conversation (spec/admin-protocol.md §3): Connect, Login, then the
command list, the descriptions and the commands themselves.

The session does no I/O: `handle(frame)` returns the bytes to write, or a Deferred of them for
a command (commands run on the server's games and may wait for the store). It answers as
tpserver-cpp does where tpadmin-cpp depends on it (Okay "Welcome", Sequence(n) before the
descriptions, CommandResult with the request's sequence number) and where it does not, it
answers the clear Fail the reference's source gives. After a good login it calls `logged_in`,
which starts the stream of LogMessages to this connection.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from typing import Any

from twisted.internet import defer
from twisted.logger import Logger

from protocol.admin import (
    RESULT_FAILED,
    RESULT_OK,
    AdminFrameType,
    Command,
    CommandDesc,
    CommandResult,
    CommandTypesList,
    GetCommandDesc,
    GetCommandTypes,
    decode_admin,
    encode_admin,
    encode_admin_reply,
)
from protocol.enums import FailCode, FrameType
from protocol.errors import MissingDescriptionError, ProtocolError
from protocol.header import Frame
from protocol.messages import Connect, Fail, Login, Okay
from protocol.records import IdModtime
from server.admin.backend import CommandFailed, OperatorBackend
from server.admin.commands import BY_ID, AdminCommand
from server.game.passwords import PasswordHasher

log = Logger()

SERVER_NAME = "tpserver-tae"
#: After this many bad logins on one connection the server hangs up (a connection of a server,
#: which has a login guard, is closed by the guard instead: `server.admin.network`).
MAX_LOGIN_FAILURES = 5


_SECRET_PARAMS = frozenset({"password"})

BAD_LOGIN = "Admin Login Error - bad username or password"
NO_LOGIN = "Admin Login Error - no username or password"
WANTED_CONNECT = "Wrong type of frame in this state, wanted connect"
WANTED_LOGIN = "Wrong type of frame in this state, wanted login"
NOT_UNDERSTOOD = "Did not understand that frame type."
NO_SUCH_COMMAND = "Command type does not exist"
INTERNAL_ERROR = "internal error: the command was not carried out (see the server log)"


class State(enum.Enum):
    NEW = "new"
    CONNECTED = "connected"
    LOGGED_IN = "logged in"


class AdminSession:
    """The protocol state of one admin connection.

    `users` maps admin names to password hashes, checked by `hasher` (off the reactor thread
    on a server); `descriptions` are the CommandDescs offered (by id), `backend` carries the
    commands out; `logged_in(name)` is called after a good login; `close()` hangs up (after
    the bytes already returned are written) after `max_login_failures` bad logins (0: never,
    the connection's login guard decides).
    """

    def __init__(
        self,
        users: Mapping[str, str],
        descriptions: Mapping[int, CommandDesc],
        backend: OperatorBackend,
        hasher: PasswordHasher,
        *,
        server_version: str,
        peer: str = "?",
        logged_in: Callable[[str], None] = lambda name: None,
        close: Callable[[], None] = lambda: None,
        max_login_failures: int = MAX_LOGIN_FAILURES,
    ):
        self.users = users
        self.descriptions = descriptions
        self.backend = backend
        self.hasher = hasher
        self.server_version = server_version
        self.peer = peer
        self._logged_in = logged_in
        self._close = close
        self.max_login_failures = max_login_failures
        self.state = State.NEW
        self.user: str | None = None
        self.login_failures = 0
        self._sequence_key = 0

    # -- dispatch -------------------------------------------------------------------------

    def handle(self, frame: Frame) -> bytes | defer.Deferred:
        """The answer to one frame: bytes, or a Deferred firing with them."""
        try:
            if self.state is not State.LOGGED_IN:
                return self._before_login(frame)
            if frame.type == AdminFrameType.GET_COMMAND_TYPES:
                return self._command_types(self._decode(frame), frame.sequence)
            if frame.type == AdminFrameType.GET_COMMAND_DESC:
                return self._describe(self._decode(frame), frame.sequence)
            if frame.type == AdminFrameType.COMMAND:
                return self._command(frame)
            return self._fail(FailCode.PROTOCOL, NOT_UNDERSTOOD, frame.sequence)
        except ProtocolError as error:
            return self._fail(error.code, error.message, frame.sequence)

    def _decode(self, frame: Frame) -> Any:
        return decode_admin(frame, command_descs=self.descriptions)

    def _fail(self, code: int, text: str, sequence: int) -> bytes:
        return encode_admin(Fail(code, text), sequence)

    # -- before login ---------------------------------------------------------------------

    def _before_login(self, frame: Frame) -> bytes | defer.Deferred:
        if frame.type == FrameType.CONNECT:
            message = self._decode(frame)
            assert isinstance(message, Connect)
            if self.state is State.NEW:
                log.debug("admin connection from {peer}: {client}", peer=self.peer, client=message.client)
            self.state = State.CONNECTED
            welcome = f"Protocol check ok, continue! Welcome to {SERVER_NAME} {self.server_version} (admin)"
            return encode_admin(Okay(welcome), frame.sequence)
        if self.state is State.NEW:
            return self._fail(FailCode.FRAME, WANTED_CONNECT, frame.sequence)
        if frame.type != FrameType.LOGIN:
            return self._fail(FailCode.FRAME, WANTED_LOGIN, frame.sequence)
        message = self._decode(frame)
        assert isinstance(message, Login)
        return self._login(message, frame.sequence)

    def _login(self, message: Login, sequence: int) -> bytes | defer.Deferred:
        name = message.username.partition("@")[0]
        if not name or not message.password:
            return self._fail(FailCode.FRAME, NO_LOGIN, sequence)
        stored = self.users.get(name)
        # The hasher takes as long for a name it does not know as for a wrong password.
        checked = self.hasher.verify(message.password, stored)
        return checked.addCallback(self._checked, name, stored is not None, sequence)

    def _checked(self, good: bool, name: str, known: bool, sequence: int) -> bytes:
        if not (good and known):
            self.login_failures += 1
            # with a login guard (no limit here), the guard logs them, summed up when many
            (log.warn if self.max_login_failures else log.debug)(
                "admin login as {name!r} from {peer} failed ({count} on this connection)",
                name=name[:64],
                peer=self.peer,
                count=self.login_failures,
            )
            answer = self._fail(FailCode.FRAME, BAD_LOGIN, sequence)
            if self.max_login_failures and self.login_failures >= self.max_login_failures:
                self._close()
            return answer
        self.state = State.LOGGED_IN
        self.user = name
        log.info("admin {name} logged in from {peer}", name=name, peer=self.peer)
        answer = encode_admin(Okay("Welcome"), sequence)
        self._logged_in(name)
        return answer

    # -- the command list -----------------------------------------------------------------

    def _command_types(self, request: GetCommandTypes, sequence: int) -> bytes:
        if request.key != -1 and (request.key != self._sequence_key or self._sequence_key == 0):
            return self._fail(FailCode.UNAVAILABLE_TEMPORARILY, "Invalid Sequence Key", sequence)
        if request.key == -1:
            self._sequence_key += 1
        entries = [
            IdModtime(desc.id, desc.modtime)
            for desc in sorted(self.descriptions.values(), key=lambda d: d.id)
            if request.since == -1 or desc.modtime > request.since
        ]
        if request.start > len(entries):
            return self._fail(FailCode.FRAME, "Starting number too high", sequence)
        amount = len(entries) - request.start if request.amount == -1 else request.amount
        batch = tuple(entries[request.start : request.start + amount])
        remaining = len(entries) - request.start - len(batch)
        reply = CommandTypesList(self._sequence_key, remaining, batch, request.since)
        return encode_admin(reply, sequence)

    def _describe(self, request: GetCommandDesc, sequence: int) -> bytes:
        if not request.ids:
            return encode_admin_reply([], sequence) + self._fail(
                FailCode.NO_SUCH_THING, "You didn't ask for any command descriptions, try again", sequence
            )
        items: list[Any] = []
        for command_id in request.ids:
            desc = self.descriptions.get(command_id)
            items.append(desc if desc is not None else Fail(FailCode.NO_SUCH_THING, NO_SUCH_COMMAND))
        return encode_admin_reply(items, sequence)

    # -- commands ---------------------------------------------------------------------------

    def _command(self, frame: Frame) -> bytes | defer.Deferred:
        try:
            command = self._decode(frame)
        except MissingDescriptionError:
            return self._fail(FailCode.NO_SUCH_THING, NO_SUCH_COMMAND, frame.sequence)
        assert isinstance(command, Command)
        spec = BY_ID.get(command.id)
        if spec is None:
            return self._fail(FailCode.NO_SUCH_THING, NO_SUCH_COMMAND, frame.sequence)
        shown = " ".join(
            "***" if param.name in _SECRET_PARAMS else str(value)
            for param, value in zip(spec.params, command.arguments, strict=True)
        )
        log.info("admin {user}: {command} {arguments}", user=self.user, command=spec.name, arguments=shown)
        d: defer.Deferred = defer.ensureDeferred(self._run(spec, command.arguments))
        d.addCallbacks(
            lambda text: CommandResult(RESULT_OK, text),
            lambda failure: self._command_failed(failure, spec.name),
        )
        d.addCallback(lambda result: encode_admin(result, frame.sequence))
        return d

    async def _run(self, spec: AdminCommand, arguments: tuple[str | int, ...]) -> str:
        return await spec.run(self.backend, arguments)

    def _command_failed(self, failure, name: str) -> CommandResult:
        if failure.check(CommandFailed):
            text = str(failure.value)
            log.info("admin {user}: {command} failed: {text}", user=self.user, command=name, text=text)
            return CommandResult(RESULT_FAILED, text)
        log.failure("admin {user}: {command} failed", failure, user=self.user, command=name)
        return CommandResult(RESULT_FAILED, INTERNAL_ERROR)
