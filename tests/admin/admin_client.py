"""A blocking admin client that behaves on the wire as tpadmin-cpp does (spec/admin-protocol.md):
TP04 frames, header and body written with separate sends, the description requests pipelined,
LogMessages (sequence 0) set aside as they come. Every read has a timeout."""

from __future__ import annotations

import socket
import ssl
import time

from protocol import Connect, Deframer, Login
from protocol.admin import (
    Command,
    CommandDesc,
    GetCommandDesc,
    GetCommandTypes,
    LogMessage,
    decode_admin,
    encode_admin,
)


class AdminClient:
    def __init__(self, port: int, *, tls: bool = False, timeout: float = 20.0, source: str | None = None):
        source_address = (source, 0) if source else None  # another loopback address: 127.0.0.N
        sock = socket.create_connection(("127.0.0.1", port), timeout=timeout, source_address=source_address)
        if tls:
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE  # the test server's certificate is self-signed
            sock = context.wrap_socket(sock)
        sock.settimeout(timeout)
        self.sock = sock
        self.deframer = Deframer()
        self.sequence = 0
        self.logs: list[LogMessage] = []
        self.descs: dict[int, CommandDesc] = {}
        self.commands: dict[str, CommandDesc] = {}

    def close(self) -> None:
        self.sock.close()

    def send(self, message, *, split: bool = True) -> int:
        self.sequence += 1
        data = encode_admin(message, self.sequence)
        if split:  # libtpproto-cpp's two send() calls
            self.sock.sendall(data[:16])
            time.sleep(0.01)
            self.sock.sendall(data[16:])
        else:
            self.sock.sendall(data)
        return self.sequence

    def _next(self):
        while True:
            frame = self.deframer.next_frame()
            if frame is not None:
                return frame.sequence, decode_admin(frame, command_descs=self.descs)
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionError("the server closed the connection")
            self.deframer.feed(data)

    def receive(self, sequence: int) -> object:
        """The next frame answering `sequence` (LogMessages kept in `logs`)."""
        while True:
            got, message = self._next()
            if isinstance(message, LogMessage):
                assert got == 0
                self.logs.append(message)
                continue
            assert got == sequence, (got, sequence, message)
            return message

    def request(self, message) -> object:
        return self.receive(self.send(message))

    def wait_for_log(self, predicate, timeout: float = 20.0) -> LogMessage:
        deadline = time.monotonic() + timeout
        while True:
            for message in self.logs:
                if predicate(message.text):
                    return message
            if time.monotonic() > deadline:
                raise TimeoutError(f"no such log line; got {[m.text for m in self.logs[-5:]]}")
            self.sock.settimeout(max(0.1, deadline - time.monotonic()))
            got, message = self._next()
            assert isinstance(message, LogMessage) and got == 0, message
            self.logs.append(message)

    def start(self, user: str, password: str) -> object:
        """Connect, log in and fetch the command table, as tpadmin-cpp does; the Login answer."""
        self.request(Connect("libtpproto-cpp/0.1.9 tpadmin-cpp/0.1.0 (admin)"))
        answer = self.request(Login(user, password))
        if type(answer).__name__ != "Okay":
            return answer
        types = self.request(GetCommandTypes(-1, 0, 8737, -1))
        first = self.sequence + 1
        self.sequence += len(types.ids)
        self.sock.sendall(
            b"".join(
                encode_admin(GetCommandDesc((entry.id,)), first + i) for i, entry in enumerate(types.ids)
            )
        )
        for index in range(len(types.ids)):
            assert type(self.receive(first + index)).__name__ == "Sequence"
            desc = self.receive(first + index)
            assert isinstance(desc, CommandDesc)
            self.descs[desc.id] = desc
            self.commands[desc.name] = desc
        return answer

    def run(self, name: str, *arguments):
        """Run a command by name; its CommandResult."""
        return self.request(Command(self.commands[name].id, tuple(arguments)))
