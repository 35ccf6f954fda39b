"""A TCP proxy of the tests' own between a server and PostgreSQL, to make the network fail.

`PostgresProxy` passes bytes both ways, and on demand:

* `cut()` / `mend()`: stops passing bytes (a cut cable: nothing is closed, bytes sent meanwhile
  wait in the sockets), then passes them again;
* `lose_commit_answer()`: the next COMMIT a client sends reaches PostgreSQL, which commits, but
  its answer is thrown away and the connection closed (the client cannot tell whether it
  committed); with `then_down=True` the proxy then goes `down()` at once; with `on`, only on a
  connection whose first bytes (the startup message: user, database, application_name)
  hold `on`;
* `drop_commit()`: the next COMMIT never reaches PostgreSQL; the connection is closed;
* `down()` / `up()`: every connection is closed and new ones are refused, until `up()`.

A COMMIT is recognised in the frontend's simple Query message (psycopg sends `COMMIT` so).
"""

from __future__ import annotations

import socket
import threading

COMMIT_QUERY = b"Q\x00\x00\x00\x0bCOMMIT\x00"


class PostgresProxy:
    """127.0.0.1:port → target (see the module docstring)."""

    def __init__(self, target: tuple[str, int]):
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.2)
        self.port = self.listener.getsockname()[1]
        self.flowing = threading.Event()
        self.flowing.set()
        self.stopped = threading.Event()
        self.refusing = False
        self.commit_fault: str | None = None  # "lose answer" | "lose answer, down" | "drop"
        self.commit_on = b""
        self.commits_faulted = 0
        self._lock = threading.Lock()
        self.pairs: list[tuple[socket.socket, socket.socket]] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def url_of(self, url) -> str:
        """`url` (a SQLAlchemy URL) through this proxy."""
        return url.set(host="127.0.0.1", port=self.port).render_as_string(hide_password=False)

    def cut(self) -> None:
        self.flowing.clear()

    def mend(self) -> None:
        self.flowing.set()

    def lose_commit_answer(self, then_down: bool = False, on: bytes = b"") -> None:
        self.commit_on = on
        self.commit_fault = "lose answer, down" if then_down else "lose answer"

    def drop_commit(self) -> None:
        self.commit_on = b""
        self.commit_fault = "drop"

    def down(self) -> None:
        self.refusing = True
        with self._lock:
            pairs, self.pairs = self.pairs, []
        for pair in pairs:
            _close(*pair)

    def up(self) -> None:
        self.refusing = False

    def close(self) -> None:
        self.stopped.set()
        self.down()
        _close(self.listener)

    def _accept(self) -> None:
        while not self.stopped.is_set():
            try:
                client, _ = self.listener.accept()
            except (TimeoutError, OSError):
                continue
            if self.refusing:
                _close(client)
                continue
            try:
                server = socket.create_connection(self.target)
            except OSError:
                _close(client)
                continue
            with self._lock:
                self.pairs.append((client, server))
            lost: list[str] = []  # this connection's COMMIT answer is to be thrown away (how)
            opening = bytearray()  # the connection's first bytes (its startup message)
            for args in ((client, server, lost, opening, True), (server, client, lost, opening, False)):
                threading.Thread(target=self._pump, args=args, daemon=True).start()

    def _pump(
        self, src: socket.socket, dst: socket.socket, lost: list[str], opening: bytearray, upstream: bool
    ) -> None:
        try:
            src.settimeout(0.2)
        except OSError:  # closed meanwhile (down())
            _close(dst)
            return
        while not self.stopped.is_set():
            if not self.flowing.wait(0.2):
                continue
            try:
                data = src.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                data = b""
            if not data:
                _close(src, dst)
                return
            if upstream and len(opening) < 4096:
                opening += data[: 4096 - len(opening)]
            if upstream and self.commit_fault and COMMIT_QUERY in data and self.commit_on in opening:
                fault, self.commit_fault = self.commit_fault, None
                self.commits_faulted += 1
                if fault == "drop":
                    _close(src, dst)
                    return
                lost.append(fault)
            elif not upstream and lost:
                if lost[0].endswith("down"):
                    self.down()
                _close(src, dst)  # PostgreSQL answered the COMMIT: nobody hears it
                return
            try:
                dst.sendall(data)
            except OSError:
                _close(src, dst)
                return


def _close(*sockets: socket.socket) -> None:
    for s in sockets:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            s.close()
        except OSError:
            pass
