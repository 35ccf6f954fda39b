"""Where the server's log goes: text lines, or one flat JSON object per line.

`--log-format json` writes, for every `twisted.logger` event, one line such as

    {"time": "2025-03-01T12:00:00.123456+00:00", "level": "info", "logger": "server.cli.runner",
     "message": "listening on 127.0.0.1:6923", "host": "127.0.0.1", "port": 6923}

`time` is ISO-8601 in UTC, `level` the level's name, `logger` the event's namespace (the module
that logged it), `message` the rendered text, then the event's own fields (the keyword arguments
of the log call). A logged failure adds `error` (one line) and `traceback`. Twisted's bookkeeping
keys (`log_*`) stay out; an own field named like one of the keys above is written with an
`event_` prefix. Values that JSON cannot carry are written as their `str()`.

Twisted's own lines for each listening port ("TPFactory starting on 6923", "(TCP Port 6923
Closed)") are left out: the server says once per listener which one it is and where
(`server.services.listeners`).
"""

from __future__ import annotations

import json
import re
import sys
from datetime import UTC, datetime
from typing import IO, Any

from twisted.logger import (
    FilteringLogObserver,
    ILogFilterPredicate,
    ILogObserver,
    LogLevel,
    LogLevelFilterPredicate,
    PredicateResult,
    formatEvent,
    globalLogBeginner,
    textFileLogObserver,
)
from zope.interface import implementer, provider

# Keys that legacy `twisted.python.log` events carry besides the event's own fields.
_LEGACY_KEYS = frozenset({"format", "isError", "message", "system", "time", "why", "failure"})


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return str(value)


def flat_event(event: dict[str, Any]) -> dict[str, Any]:
    """The flat JSON object of one log event (see the module docstring)."""
    level = event.get("log_level")
    stamp = event.get("log_time")
    out: dict[str, Any] = {
        "time": datetime.fromtimestamp(stamp, UTC).isoformat() if isinstance(stamp, int | float) else None,
        "level": getattr(level, "name", "info"),
        "logger": event.get("log_namespace") or event.get("system") or "-",
        "message": formatEvent(event),
    }
    failure = event.get("log_failure")
    if failure is not None:
        out["error"] = " ".join(str(failure.getErrorMessage()).split()) or failure.type.__name__
        try:
            out["traceback"] = failure.getTraceback()
        except Exception:  # a failure that cannot be rendered still gets its one line
            pass
    legacy = event.get("log_namespace") == "log_legacy" or "isError" in event
    for key, value in event.items():
        if key.startswith("log_") or (legacy and key in _LEGACY_KEYS):
            continue
        out[f"event_{key}" if key in out else key] = _jsonable(value)
    return out


@implementer(ILogObserver)
class FlatJSONObserver:
    """Writes each event as one line of flat JSON to a text stream."""

    def __init__(self, stream: IO[str]):
        self.stream = stream

    def __call__(self, event: dict[str, Any]) -> None:
        try:
            line = json.dumps(flat_event(event), ensure_ascii=False, default=str)
        except Exception as error:  # never let a strange event break logging
            line = json.dumps(
                {"level": "error", "logger": "server.cli.logs", "message": f"unloggable event: {error}"}
            )
        self.stream.write(line + "\n")
        self.stream.flush()


# What Twisted's listening ports log when they open and close (twisted.internet.tcp, unix, udp).
_PORT_NOISE = re.compile(r"\S+(?: \(TLS\))? starting on \S+|\((?:\w+ )?Port \S+ Closed\)")


@provider(ILogFilterPredicate)
def without_port_noise(event: dict[str, Any]) -> PredicateResult:
    """Leaves out the lines Twisted's ports log when they open and close."""
    if event.get("log_namespace") == "log_legacy" and _PORT_NOISE.fullmatch(formatEvent(event)):
        return PredicateResult.no
    return PredicateResult.maybe


def observer_for(log_format: str, stream: IO[str], level: LogLevel = LogLevel.info) -> ILogObserver:
    """An observer writing `log_format` ("text" or "json") lines at `level` and above, without
    the ports' noise."""
    observer = FlatJSONObserver(stream) if log_format == "json" else textFileLogObserver(stream)
    predicate = LogLevelFilterPredicate(defaultLogLevel=level)
    return FilteringLogObserver(observer, [predicate, without_port_noise])


def begin_logging(log_format: str, stream: IO[str] | None = None, level: LogLevel = LogLevel.info) -> None:
    """Send the global log to `stream` (stdout) from now on."""
    globalLogBeginner.beginLoggingTo(
        [observer_for(log_format, stream or sys.stdout, level)], redirectStandardIO=False
    )
