"""The admin listener's part of the fuzzer (`python -m tests.fuzz_web`): one attack at a time
on the server's admin port, from the worker's loopback address.

Each worker keeps one logged-in admin connection and sends it commands with arguments of every
kind (unknown commands, missing and extra arguments, integers for texts, odd texts, unknown
games and players, a game's pool filled by add-player), command-list and description requests
with any numbers, frames of unknown types and bodies that do not decode; and it opens fresh
connections that guess passwords, log in rightly, send malformed bytes (huge lengths, TP03,
HTTP, truncated frames, invalid UTF-8) or nothing at all. The frames of one attack are sent
together and followed by a sentinel (a frame answered by exactly one frame): the answers come
in order, so every answer before the sentinel's belongs to the attack.

Before the run (`prepare`), the fuzzer's game `fz` is made and filled until its colonist pool
can deal no more hands; during the run every create-game names a game that exists or a name
that cannot be one, so the games do not grow while the memory is measured (a full game, with
25 players, is some 25 MiB), and every add-player meets a full game, an unknown one or a bad
argument.

An answer is wrong when it is an internal error (a Fail "Internal server error", a
CommandResult "internal error…"), a Fail without a text, or not decodable. Player commands
never touch the witnesses' game `tae` (they go to `fz` or to games that do not exist).
"""

from __future__ import annotations

import random
import socket
import time

from protocol import Connect, Deframer, Fail, Login, Version, decode, encode_header
from protocol.admin import (
    AdminFrameType,
    Command,
    CommandResult,
    GetCommandTypes,
    LogMessage,
    decode_admin,
    encode_admin,
)
from protocol.errors import EncodingError
from tests.fuzz_tally import Exchange

ADMIN_USER, ADMIN_PASSWORD = "tpadm", "fuzz-admin-7"
#: Another admin account, only ever guessed at (so that the guesses do not put the fuzzer's own
#: account over its budget).
GUESSED_USER, GUESSED_PASSWORD = "guessed", "never-sent-1"
#: A failed login's answer waits up to `login_failure_delay_max` (16 s by default).
ANSWER_TIMEOUT_S = 25.0
SILENCE_S = 0.5
INTERNAL = ("Internal server error", "internal error")
NOT_TP = b"You are not running the correct protocol"

TEXTS = ["", "fz", "tae", "nope", "ann", "x" * 300, "é" * 40, "<b>", "a b", "\u202e", "1", "-1", "zz@fz"]
NUMBERS = [0, 1, -1, 7, 2**31 - 1, -(2**31)]
PLAYER_GAMES = ["fz", "fz", "nope", "", "x" * 300, "é"]
#: Names create-game is given: taken, or not a game name (too long, empty, with '@').
CREATE_GAMES = ["fz", "tae", "", "x" * 300, "zz@fz"]
ANY_GAMES = PLAYER_GAMES + ["tae"]
#: Commands (admin ids) that act on a game's players or settings: never on `tae`.
PLAYER_COMMANDS = {3, 4, 5, 10, 11}
#: Commands that do real work when they succeed (a new game, a turn resolved): rarer, as an
#: operator's are; the witnesses measure the listener, not the game's turn.
HEAVY_COMMANDS = {2, 6}
#: Commands whose argument is only a game: any game, `tae` included (status, pause, resume…).
GAME_COMMANDS = {1, 6, 7, 8, 9}


class AdminLink:
    """A blocking admin connection from `source`."""

    def __init__(self, port: int, source: str, timeout: float = ANSWER_TIMEOUT_S):
        self.sock = socket.socket()
        self.sock.settimeout(timeout)
        try:
            self.sock.bind((source, 0))
            self.sock.connect(("127.0.0.1", port))
        except OSError:
            self.sock.close()
            raise
        self.deframer = Deframer()
        self.sequence = 0
        self.closed = False
        self.raw = b""

    def close(self) -> None:
        self.closed = True
        self.sock.close()

    def frame(self, message) -> bytes:
        self.sequence += 1
        return encode_admin(message, self.sequence)

    def send(self, data: bytes) -> bool:
        try:
            self.sock.sendall(data)
            return True
        except OSError:
            self.closed = True
            return False

    def answers(self, until: int | None, exchange: Exchange, silence: float | None = None) -> bool:
        """Read answers into `exchange` up to the one for sequence `until` (None: until closed or
        `silence` seconds without a byte); whether the sentinel's answer came."""
        if silence is not None:
            self.sock.settimeout(silence)
        deadline = time.monotonic() + ANSWER_TIMEOUT_S
        while time.monotonic() < deadline:
            while True:
                try:
                    frame = self.deframer.next_frame()
                except Exception as error:
                    exchange.server_errors.append(f"an answer that does not deframe: {error}")
                    self.close()
                    return False
                if frame is None:
                    break
                try:
                    # a TP03 frame is answered in TP03, as TP would (then closed)
                    message = decode_admin(frame) if frame.version == Version.TP04 else decode(frame)
                except Exception as error:
                    exchange.server_errors.append(f"an answer that does not decode: {error}")
                    continue
                judge(message, exchange)
                if until is not None and frame.sequence == until and not _is_sequence(message):
                    return True
            try:
                data = self.sock.recv(65536)
            except (TimeoutError, OSError):
                if silence is None:
                    exchange.labels.append("timeout")
                    exchange.unanswered = "admin: no answer within the timeout"
                self.close()
                return False
            if not data:
                exchange.labels.append("closed")
                self.close()
                return False
            if not self.raw:
                self.raw = data[:64]
                if data.startswith(NOT_TP):
                    exchange.labels.append("not-TP text")
                    continue
            self.deframer.feed(data)
        return False


def _is_sequence(message) -> bool:
    return type(message).__name__ == "Sequence"


def judge(message, exchange: Exchange) -> None:
    """Label one answer; note what is wrong with it."""
    if isinstance(message, LogMessage):
        return
    if isinstance(message, Fail):
        exchange.labels.append(f"Fail {int(message.code)}")
        if not message.message:
            exchange.server_errors.append("a Fail without a text")
        elif message.message.startswith(INTERNAL):
            exchange.server_errors.append(f"Fail {message.message!r}")
    elif isinstance(message, CommandResult):
        exchange.labels.append(f"result {message.status}")
        if message.text.startswith(INTERNAL):
            exchange.server_errors.append(f"CommandResult {message.text!r}")
    else:
        exchange.labels.append(type(message).__name__)


class AdminFuzzer:
    """One worker's attacks on the admin listener at `port`, from `source`."""

    def __init__(self, port: int, source: str, rng: random.Random):
        self.port = port
        self.source = source
        self.rng = rng
        self.session: AdminLink | None = None

    def attack(self) -> Exchange:
        exchange = Exchange("admin")
        kind = self.rng.choices(
            [self._commands, self._guess, self._right, self._malformed, self._drop], [12, 2, 1, 3, 1]
        )[0]
        try:
            kind(exchange)
        except OSError as error:
            exchange.labels.append(f"refused ({type(error).__name__})")
        return exchange

    # -- a logged-in connection ---------------------------------------------------------------

    def _logged_in(self, exchange: Exchange) -> AdminLink | None:
        if self.session is not None and not self.session.closed:
            return self.session
        link = AdminLink(self.port, self.source)
        link.send(link.frame(Connect("fuzz_admin")) + link.frame(Login(ADMIN_USER, ADMIN_PASSWORD)))
        exchange.requests += 2
        before = len(exchange.labels)
        if not link.answers(link.sequence, exchange) or exchange.labels[before:][-1:] != ["Okay"]:
            link.close()
            return None
        self.session = link
        return link

    def _commands(self, exchange: Exchange) -> None:
        link = self._logged_in(exchange)
        if link is None:
            return
        frames = [self._command_frame(link) for _ in range(self.rng.randrange(1, 7))]
        frames.append(link.frame(GetCommandTypes(-1, 0, 0, -1)))  # the sentinel: one answer
        exchange.requests += len(frames)
        if link.send(b"".join(frames)):
            link.answers(link.sequence, exchange)

    def _command_frame(self, link: AdminLink) -> bytes:
        rng = self.rng
        roll = rng.random()
        if roll < 0.6:
            command = rng.randrange(0, 15)
            if command in HEAVY_COMMANDS and rng.random() < 0.9:
                command = 1  # status: what an operator runs most
            if command in PLAYER_COMMANDS:
                arguments: list[str | int] = [rng.choice(PLAYER_GAMES)]
            elif command in GAME_COMMANDS or command == 2:
                arguments = [rng.choice(ANY_GAMES if command != 2 else CREATE_GAMES)]
            else:
                arguments = []
            for _ in range(rng.choice([0, 1, 2, 2, 3])):
                arguments.append(rng.choice(TEXTS) if rng.random() < 0.85 else rng.choice(NUMBERS))
            if rng.random() < 0.1:
                arguments = [rng.choice(NUMBERS + TEXTS) for _ in range(rng.randrange(6))]
            if rng.random() < 0.05 and command == 3:
                arguments = ["fz", f"p{rng.randrange(10**6)}", "fuzz-password"]  # fz's pool is empty
            try:
                return link.frame(Command(command, tuple(arguments)))
            except EncodingError:  # a number the wire cannot carry: as raw bytes
                return self._raw(link, AdminFrameType.COMMAND, command.to_bytes(4, "big") + b"\xff" * 8)
        if roll < 0.7:
            numbers = [rng.choice(NUMBERS) for _ in range(4)]
            try:
                return link.frame(GetCommandTypes(*numbers))
            except EncodingError:  # as the wire has them: any 32 bits
                body = b"".join((n & 0xFFFFFFFF).to_bytes(4, "big") for n in numbers)
                return self._raw(link, AdminFrameType.GET_COMMAND_TYPES, body)
        if roll < 0.8:  # ids as the wire has them: unsigned, any of them
            ids = [rng.choice(NUMBERS + [3, 11, 99]) & 0xFFFFFFFF for _ in range(rng.randrange(40))]
            body = len(ids).to_bytes(4, "big") + b"".join(i.to_bytes(4, "big") for i in ids)
            return self._raw(link, AdminFrameType.GET_COMMAND_DESC, body)
        if roll < 0.85:
            return link.frame(rng.choice([Connect("again"), Login(ADMIN_USER, ADMIN_PASSWORD)]))
        frame_type = rng.choice([0, 1, 2, 5, 7, 99, *range(1000, 1010), 2**31 - 1])
        body = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 64)))
        if rng.random() < 0.3 and frame_type == AdminFrameType.COMMAND:
            body = rng.randrange(12).to_bytes(4, "big") + body
        return self._raw(link, frame_type, body)

    @staticmethod
    def _raw(link: AdminLink, frame_type: int, body: bytes) -> bytes:
        link.sequence += 1
        return encode_header(Version.TP04, link.sequence, frame_type, len(body)) + body

    # -- fresh connections --------------------------------------------------------------------

    def _guess(self, exchange: Exchange) -> None:
        link = AdminLink(self.port, self.source)
        try:
            name = self.rng.choice([GUESSED_USER, "root", "admin", "x" * 300, "é", "@", "guessed@x"])
            password = self.rng.choice(["guess", "x" * 2000, "é", "tpadm", "\u202e"])
            data = link.frame(Connect("guesser")) + link.frame(Login(name, password))
            data += link.frame(Connect("sentinel"))
            exchange.requests += 3
            if link.send(data):
                link.answers(link.sequence, exchange)
        finally:
            link.close()

    def _right(self, exchange: Exchange) -> None:
        link = AdminLink(self.port, self.source)
        try:
            data = link.frame(Connect("fuzz_admin")) + link.frame(Login(ADMIN_USER, ADMIN_PASSWORD))
            data += link.frame(Command(0, ()))
            exchange.requests += 3
            if link.send(data):
                link.answers(link.sequence, exchange)
        finally:
            link.close()

    def _malformed(self, exchange: Exchange) -> None:
        rng = self.rng
        link = AdminLink(self.port, self.source)
        try:
            choice = rng.randrange(9)
            connect = link.frame(Connect("fuzz"))
            if choice == 0:  # a huge length
                data = encode_header(
                    Version.TP04, 1, rng.choice([3, 4, 1006]), rng.choice([2**31 - 1, 2**32 - 1])
                )
            elif choice == 1:
                data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300)))
            elif choice == 2:  # TP03
                data = (
                    b"TP03"
                    + (1).to_bytes(4, "big")
                    + (3).to_bytes(4, "big")
                    + (4).to_bytes(4, "big")
                    + b"\0" * 4
                )
            elif choice == 3:
                data = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
            elif choice == 4:  # truncated
                data = connect[: rng.randrange(1, len(connect))]
            elif choice == 5:  # Login whose texts are not UTF-8
                body = b"\x00\x00\x00\x03\xed\xa0\x80" + b"\x00\x00\x00\x02\xff\xfe"
                data = connect + encode_header(Version.TP04, 9, 4, len(body)) + body
            elif choice == 6:  # lengths inside the body that lie
                body = b"\x7f\xff\xff\xff" + b"ab"
                data = connect + encode_header(Version.TP04, 9, rng.choice([3, 4]), len(body)) + body
            elif choice == 7:  # a body larger than any frame should be
                body = b"\x00" * rng.choice([70_000, 2**20 + 1])
                data = connect + encode_header(Version.TP04, 9, 3, len(body)) + body
            else:  # a command before logging in
                data = connect + link.frame(Command(2, ("fz",)))
            exchange.requests += 1 + (data.startswith(connect) and len(data) > len(connect))
            if link.send(data):
                link.answers(None, exchange, silence=SILENCE_S)
        finally:
            link.close()

    def _drop(self, exchange: Exchange) -> None:
        link = AdminLink(self.port, self.source)
        if self.rng.random() < 0.5:
            link.send(b"TP\x04\x00\x00")
        link.close()
        exchange.labels.append("dropped")

    def stop(self) -> None:
        if self.session is not None:
            self.session.close()


def prepare(port: int) -> int:
    """Make the game `fz` and add players until its pool can deal no more hands; how many."""
    link = AdminLink(port, "127.0.0.1")
    exchange = Exchange("admin")
    try:
        link.send(link.frame(Connect("fuzz_admin")) + link.frame(Login(ADMIN_USER, ADMIN_PASSWORD)))
        link.send(link.frame(Command(2, ("fz",))))
        assert link.answers(link.sequence, exchange), exchange
        for n in range(40):
            link.send(link.frame(Command(3, ("fz", f"p{n}", "fuzz-password"))))
            before = len(exchange.labels)
            assert link.answers(link.sequence, exchange), exchange
            if exchange.labels[before:] == ["result 1"]:
                return n
        raise AssertionError("the pool of fz never ran out")
    finally:
        link.close()


def admin_users(hash_password) -> str:
    """The `[admin.users]` lines of the fuzzed server (`hash_password` makes the hashes)."""
    return "".join(
        f'{name} = "{hash_password(password, n=2**10)}"\n'
        for name, password in ((ADMIN_USER, ADMIN_PASSWORD), (GUESSED_USER, GUESSED_PASSWORD))
    )
