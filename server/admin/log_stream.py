"""The server's log, streamed to logged-in admin connections as LogMessage frames.

`AdminLogStream` is a `twisted.logger` observer. Every event at or above the configured level
becomes one LogMessage (Unix time, level, the formatted text; a failure adds its traceback)
for each subscribed connection. Observers may be called from any thread (the database thread
logs too), so delivery always happens in the reactor thread. The stream never logs itself, and
an admin that has gone away is simply dropped (tpserver-cpp crashes there, spec §6).
"""

from __future__ import annotations

from collections.abc import Callable

from twisted.logger import LogLevel, formatEvent
from twisted.python import threadable

from protocol.admin import AdminLogLevel, LogMessage

_LEVELS = {
    LogLevel.debug: AdminLogLevel.DEBUG,
    LogLevel.info: AdminLogLevel.INFO,
    LogLevel.warn: AdminLogLevel.WARNING,
    LogLevel.error: AdminLogLevel.ERROR,
    LogLevel.critical: AdminLogLevel.ERROR,
}
_ORDER = list(LogLevel.iterconstants())
#: A log line longer than this is cut (a LogMessage is one frame; tracebacks can be long).
MAX_TEXT = 8000

Sink = Callable[[LogMessage], None]


def log_message(event: dict) -> LogMessage | None:
    """The LogMessage of a `twisted.logger` event, or None for an event with nothing to say."""
    level = event.get("log_level", LogLevel.info)
    text = formatEvent(event)
    failure = event.get("log_failure")
    if failure is not None:
        try:
            text = f"{text}\n{failure.getTraceback()}".strip()
        except Exception:
            text = f"{text}: {failure.value!r}"
    if not text:
        return None
    if len(text) > MAX_TEXT:
        text = text[: MAX_TEXT - 1] + "…"
    return LogMessage(int(event.get("log_time", 0)), _LEVELS.get(level, AdminLogLevel.INFO), text)


class AdminLogStream:
    """Hands every log event at or above `minimum` to the subscribed sinks, in the reactor
    thread. A sink that raises is unsubscribed."""

    def __init__(self, reactor, minimum: LogLevel = LogLevel.info):
        self.reactor = reactor
        self.minimum = minimum
        self.sinks: list[Sink] = []

    def subscribe(self, sink: Sink) -> None:
        if sink not in self.sinks:
            self.sinks.append(sink)

    def unsubscribe(self, sink: Sink) -> None:
        if sink in self.sinks:
            self.sinks.remove(sink)

    def __call__(self, event: dict) -> None:
        if not self.sinks:
            return
        level = event.get("log_level", LogLevel.info)
        if level not in _ORDER or _ORDER.index(level) < _ORDER.index(self.minimum):
            return
        try:
            message = log_message(event)
        except Exception:
            return  # an event we cannot format: never let the log itself fail
        if message is None:
            return
        if threadable.ioThread is None or threadable.isInIOThread():
            self._deliver(message)
        else:
            self.reactor.callFromThread(self._deliver, message)

    def _deliver(self, message: LogMessage) -> None:
        for sink in list(self.sinks):
            try:
                sink(message)
            except Exception:
                self.unsubscribe(sink)
