"""The web listener's one twisted.web resource: match the path, run the handler, answer.

A handler is `handler(request, *path_parts) -> bytes | Deferred[bytes] | NOT_DONE_YET`. Path
parts are percent-decoded (a game may be called anything). A handler that raises or fails
with `HTTPFailure` gets its status and body; any other failure is logged and answered with a
500, never a traceback; a write the database could not take (`StoreUnavailable`: the
database is unreachable, or on a cluster node the game just moved to another node) is a 503.
A refusal given as plain text (a 405, a 500, a 503, ...) is shaped by `WebRoot.shape`: under
/api/ the JSON error document, for pages an HTML page. Every answer carries the security
headers of `SECURITY_HEADERS`.

On a cluster node, `WebRoot.relay` (`server.web.relay.WebRelay`) first takes the requests of
games another node runs and answers them from there.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from twisted.internet import defer
from twisted.logger import Logger
from twisted.python.failure import Failure
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET, GzipEncoderFactory

from server.model.store import StoreUnavailable

log = Logger()

UNAVAILABLE = (
    b"The game's server could not store this just now; it may or may not have been done: look again."
)

SECURITY_HEADERS = {
    b"content-security-policy": b"default-src 'self'; img-src 'self' data:; style-src 'self'; "
    b"script-src 'self'; connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
    b"x-content-type-options": b"nosniff",
    b"referrer-policy": b"same-origin",
    b"x-frame-options": b"DENY",
}


class HTTPFailure(Exception):
    """Answer with this status, content type and body instead of the handler's result."""

    def __init__(
        self, status: int, body: bytes, content_type: bytes = b"text/plain; charset=utf-8", headers=None
    ):
        super().__init__(status)
        self.status = status
        self.body = body
        self.content_type = content_type
        self.headers = headers or {}


#: The request body a route takes unless it says otherwise (a GET's body is read and dropped).
NO_BODY = 1024
#: A posted form (the pages' forms are a few hundred bytes).
FORM_BODY = 16 * 1024
#: A JSON document of the API.
JSON_BODY = 64 * 1024


@dataclass(frozen=True, slots=True)
class Route:
    method: bytes
    pattern: re.Pattern
    handler: Callable
    body: int = NO_BODY


class Router:
    def __init__(self) -> None:
        self.routes: list[Route] = []

    def add(self, method: str, pattern: str, handler: Callable, body: int | None = None) -> None:
        """`pattern` is a path with `{name}` for one path segment and `{name:int}` for a number;
        `body` is the most bytes of request body the route reads (by default `JSON_BODY` for
        /api/ writes, `FORM_BODY` for other POSTs, `NO_BODY` for reads)."""
        regex = "^"
        for piece in re.split(r"(\{[^}]+\})", pattern):
            if piece.startswith("{"):
                regex += "([0-9]{1,9})" if piece.endswith(":int}") else "([^/]+)"
            else:
                regex += re.escape(piece)
        if body is None:
            writes = method not in ("GET", "HEAD")
            body = (JSON_BODY if pattern.startswith("/api/") else FORM_BODY) if writes else NO_BODY
        self.routes.append(Route(method.encode(), re.compile(regex + "$"), handler, body))

    def body_limit(self, method: bytes, target: bytes) -> int:
        """The most body bytes a request line's method and target may send (`NO_BODY` for a
        path or method nothing answers: it is refused anyway)."""
        try:
            path = target.split(b"?", 1)[0].decode("ascii")
        except UnicodeDecodeError:
            return NO_BODY
        if path.startswith(("http://", "https://")):  # an absolute-form target
            path = "/" + path.split("://", 1)[1].partition("/")[2]
        method = b"GET" if method == b"HEAD" else method
        for route in self.routes:
            if route.method == method and route.pattern.match(path):
                return route.body
        return NO_BODY

    def methods(self, path: str) -> list[bytes]:
        """The methods `path` answers (HEAD with GET)."""
        found = {route.method for route in self.routes if route.pattern.match(path)}
        if b"GET" in found:
            found.add(b"HEAD")
        return sorted(found)

    def match(self, method: bytes, path: str) -> tuple[Route | None, tuple[str, ...], bool]:
        """(route, decoded parts, whether the path exists for another method)."""
        other_method = False
        for route in self.routes:
            found = route.pattern.match(path)
            if found is None:
                continue
            if route.method != method and not (method == b"HEAD" and route.method == b"GET"):
                other_method = True
                continue
            return route, tuple(unquote(part, errors="strict") for part in found.groups()), False
        return None, (), other_method


class PageCompression(GzipEncoderFactory):
    """Gzip for what a GET answers (a 64×64 map page shrinks tenfold), never for an event stream
    (compression would hold its events back) nor for answers to forms (they may echo input).
    Level 3, not Twisted's 9: a 622 KiB page compresses to 59 KiB instead of 48 KiB in 5 ms
    instead of 70."""

    compressLevel = 3

    def encoderForRequest(self, request):
        if request.method != b"GET" or request.path.endswith(b"/events"):
            return None
        return super().encoderForRequest(request)


class WebRoot(Resource):
    isLeaf = True

    def __init__(self, router: Router, not_found: Callable, shape: Callable | None = None):
        """`not_found(request)` is the HTTPFailure of a path nothing answers; `shape(request,
        status, text)` sets the content type of a plain-text refusal and returns its body."""
        super().__init__()
        self.router = router
        self.not_found = not_found
        self.shape = shape
        self.relay: Any = None  # server.web.relay.WebRelay, on a cluster node

    def render(self, request):
        for name, value in SECURITY_HEADERS.items():
            request.setHeader(name, value)
        try:
            path = request.path.decode("ascii")
        except UnicodeDecodeError:
            return self._fail(request, HTTPFailure(400, b"Bad path"))
        if self.relay is not None:
            taken = self.relay.take(request, path)
            if taken is not None:
                return taken
        return self.serve(request, path)

    def serve_later(self, request, path: str) -> None:
        """Answer a request here whose answer was held (the relay waited for its game)."""
        result = self.serve(request, path)
        if result is not NOT_DONE_YET:
            self._write(request, result)

    def serve(self, request, path: str):
        try:
            route, parts, other = self.router.match(request.method, path)
        except UnicodeDecodeError:
            return self._fail(request, HTTPFailure(400, b"Bad path"))
        if route is None:
            if other:
                allow = b", ".join(self.router.methods(path))
                return self._fail(request, HTTPFailure(405, b"Method not allowed", headers={b"allow": allow}))
            return self._fail(request, self.not_found(request))
        try:
            result = route.handler(request, *parts)
        except Exception:
            return self._fail(request, Failure())
        if result is NOT_DONE_YET:
            return NOT_DONE_YET
        if isinstance(result, bytes):
            return result
        d = defer.ensureDeferred(result) if not isinstance(result, defer.Deferred) else result
        d.addCallbacks(lambda body: self._write(request, body), lambda f: self._write_failure(request, f))
        request.notifyFinish().addErrback(lambda _: d.cancel())
        return NOT_DONE_YET

    def _write(self, request, body) -> None:
        if request.finished or request._disconnected:
            return
        if body is not NOT_DONE_YET:
            request.setHeader(b"content-length", b"%d" % len(body))
            request.write(body)
            request.finish()

    def _write_failure(self, request, failure: Failure) -> None:
        if failure.check(defer.CancelledError) or request.finished or request._disconnected:
            return
        body = self._fail(request, failure)
        request.setHeader(b"content-length", b"%d" % len(body))
        request.write(body)
        request.finish()

    def _fail(self, request, failure) -> bytes:
        error = failure.value if isinstance(failure, Failure) else failure
        if isinstance(error, StoreUnavailable):
            log.info("web request {path}: {error}", path=request.path, error=error)
            error = HTTPFailure(503, UNAVAILABLE, headers={b"retry-after": b"2"})
        if not isinstance(error, HTTPFailure):
            log.failure("web request {path} failed", failure, path=request.path)
            error = HTTPFailure(500, b"Something went wrong on the server; it has been logged.")
        request.setResponseCode(error.status)
        request.setHeader(b"content-type", error.content_type)
        for name, value in error.headers.items():
            request.setHeader(name, value)
        if self.shape is not None and error.content_type.startswith(b"text/plain") and error.status >= 400:
            return self.shape(request, error.status, error.body.decode("utf-8", "replace"))
        return error.body
