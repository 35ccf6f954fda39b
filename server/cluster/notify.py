"""Cluster news over PostgreSQL LISTEN/NOTIFY: one listening connection per node, on a thread.

Nodes and the command line NOTIFY the database's cluster channel
(`server.database.ownership.channel`); every node hears every message, as a dict:

* `{"k": "turn", "g": game_id, "t": turn, "q": sequence}`: a turn was stored, with its change
  record numbered `sequence` (sent in its transaction: `server.cluster.fencing.turn_news`); a
  node that wants to know what changed reads the records it has not seen
  (`ClusterNode.changes_since`). Other writes send no news: every node would read it;
* `{"k": "claims"}`: games changed owner (claimed, handed over, released);
* `{"k": "request", "g": game_id}`: an operator request was queued;
* `{"k": "node"}`: a node joined or is leaving.

`NotifyListener` keeps a psycopg connection in autocommit mode LISTENing, hands each message to
`deliver` on the reactor thread (messages heard while the reactor has not yet taken the last
ones go with them: one wake-up of the reactor per batch, not per message), and reconnects
(after `retry` seconds) when the connection breaks; `on_connect` runs on the reactor after
every (re)connection, since messages sent while it was away are lost and the node must look at
the database itself.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable

import psycopg
from psycopg import sql
from sqlalchemy.engine import make_url
from twisted.logger import Logger

log = Logger()


def conninfo(url: str) -> str:
    """A libpq URI for a SQLAlchemy PostgreSQL URL (the driver name dropped)."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


class NotifyListener:
    def __init__(
        self,
        url: str,
        channel: str,
        reactor,
        deliver: Callable[[dict], None],
        *,
        on_connect: Callable[[], None] | None = None,
        application_name: str = "tae-node notify",
        retry: float = 1.0,
    ):
        self.url = url
        self.channel = channel
        self.reactor = reactor
        self.deliver = deliver
        self.on_connect = on_connect
        self.application_name = application_name[:63]
        self.retry = retry
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._connected = threading.Event()
        self._heard: list[dict] = []  # decoded, not yet taken by the reactor
        self._heard_lock = threading.Lock()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="tae-notify", daemon=True)
        self._thread.start()
        self.reactor.addSystemEventTrigger("during", "shutdown", self.stop)

    def wait_connected(self, timeout: float) -> bool:
        """Block (a thread, not the reactor) until listening; tests and start-up."""
        return self._connected.wait(timeout)

    def stop(self) -> None:
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                with psycopg.connect(
                    conninfo(self.url), autocommit=True, application_name=self.application_name
                ) as conn:
                    conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.channel)))
                    self._connected.set()
                    if self.on_connect is not None:
                        self.reactor.callFromThread(self.on_connect)
                    while not self._stop.is_set():
                        for notice in conn.notifies(timeout=0.5):
                            self._hand_over(notice.payload)
            except psycopg.Error as error:
                self._connected.clear()
                if not self._stop.is_set():
                    log.warn(
                        "cluster news: listening failed ({error}); again in {retry} s",
                        error=error,
                        retry=self.retry,
                    )
                    self._stop.wait(self.retry)

    def _hand_over(self, payload: str) -> None:
        try:
            message = json.loads(payload)
        except ValueError:
            return
        if not isinstance(message, dict):
            return
        with self._heard_lock:
            self._heard.append(message)
            first = len(self._heard) == 1
        if first:
            self.reactor.callFromThread(self._deliver_heard)

    def _deliver_heard(self) -> None:
        with self._heard_lock:
            heard, self._heard = self._heard, []
        for message in heard:
            try:
                self.deliver(message)
            except Exception:
                log.failure("cluster news: a message could not be handled")
