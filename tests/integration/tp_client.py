"""A minimal blocking Thousand Parsec client over a socket, built on protocol/ alone: enough to
create accounts, log in, give orders, read queues and finish turns in integration tests.

Requests are answered in order; frames with sequence 0 (TimeRemaining pushes) are set aside.
Every read has a timeout; a closed or broken connection raises ConnectionError.
"""

from __future__ import annotations

import socket

import protocol as tp
from protocol import Deframer, Version
from protocol.orders import ObjectArg
from server.views.tp import catalogue


class TPClient:
    def __init__(
        self,
        port: int,
        version: Version = Version.TP04,
        timeout: float = 20.0,
        host: str = "127.0.0.1",
        source: str | None = None,
    ):
        self.version = version
        source_address = (source, 0) if source else None
        self.sock = socket.create_connection((host, port), timeout=timeout, source_address=source_address)
        self.sock.settimeout(timeout)
        self.deframer = Deframer()
        self.sequence = 0
        self.pushed: list = []

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    # -- frames ---------------------------------------------------------------------------

    def send(self, message) -> int:
        """Send a request without waiting; its sequence number."""
        self.sequence += 1
        try:
            self.sock.sendall(tp.encode(message, self.version, self.sequence))
        except OSError as error:
            raise ConnectionError(f"send failed: {error}") from error
        return self.sequence

    def _next_frame(self):
        while True:
            frame = self.deframer.next_frame()
            if frame is not None:
                return tp.decode(
                    frame, object_descs=catalogue.OBJECT_DESCS, order_descs=catalogue.ORDER_DESCS
                ), frame.sequence
            try:
                data = self.sock.recv(65536)
            except (TimeoutError, OSError) as error:
                raise ConnectionError(f"receive failed: {error}") from error
            if not data:
                raise ConnectionError("the server closed the connection")
            self.deframer.feed(data)

    def receive(self, sequence: int) -> list:
        """The reply to request `sequence`: one frame, or a Sequence's frames (Sequence first)."""
        replies = []
        expected = None
        while expected is None or len(replies) < expected:
            message, seq = self._next_frame()
            if seq == 0 or seq != sequence:
                self.pushed.append(message)
                continue
            replies.append(message)
            if expected is None:
                expected = 1 + (message.number if isinstance(message, tp.Sequence) else 0)
        return replies

    def request(self, message) -> list:
        return self.receive(self.send(message))

    def one(self, message):
        replies = self.request(message)
        assert len(replies) == 1, replies
        return replies[0]

    def items(self, message) -> list:
        replies = self.request(message)
        assert isinstance(replies[0], tp.Sequence), replies
        return replies[1:]

    # -- conversations --------------------------------------------------------------------

    def connect(self) -> None:
        assert isinstance(self.one(tp.Connect("tae integration test")), tp.Okay)

    def create_account(self, name: str, password: str) -> object:
        return self.one(tp.CreateAccount(name, password, "", ""))

    def login(self, name: str, password: str) -> None:
        reply = self.one(tp.Login(name, password))
        assert isinstance(reply, tp.Okay), reply

    def time_remaining(self) -> tp.TimeRemaining:
        return self.one(tp.GetTimeRemaining())

    def insert_order(self, object_id: int, order_type: int, target: int):
        return tp.InsertOrder(object_id, -1, order_type, self.order_args(order_type, target))

    @staticmethod
    def order_args(order_type: int, target: int) -> tuple:
        params = catalogue.ORDER_DESCS[order_type].params
        return (ObjectArg(target),) if params else ()

    def queue(self, object_id: int) -> list[tuple[int, int]]:
        """(type, target) of every order in an object's queue, in slot order."""
        queue = self.items(tp.GetOrderQueue((object_id,)))[0]
        if isinstance(queue, tp.Fail):
            return []
        if queue.num_orders == 0:
            return []
        orders = self.items(tp.GetOrder(object_id, tuple(range(queue.num_orders))))
        out = []
        for order in orders:
            assert isinstance(order, tp.Order), order
            target = next((a.object_id for a in order.args if isinstance(a, ObjectArg)), 0)
            out.append((order.type, target))
        return out
