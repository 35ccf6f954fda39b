"""The exceptions of the client library.

Everything the library raises about the server or the connection is a ``ClientError``, so a
caller (the CLI, the bot) can catch one class. The subclasses say what went wrong in a way a
program can act on: the server said no (``RequestFailed``, which carries the Fail frame), the
server said something we did not expect or could not read (``UnexpectedReply``,
``MalformedReply``), or the connection itself is gone (``ConnectionClosed``, ``StreamBroken``,
``ConnectFailed``, ``RequestTimeout``).
"""

from __future__ import annotations

from protocol import Fail, Message, ProtocolError


class ClientError(Exception):
    """Base of every error this package raises about the server or the connection."""


class RequestFailed(ClientError):
    """The server answered the whole request with a Fail frame.

    ``fail`` is the decoded ``protocol.Fail`` (``code``, ``message``, TP04 ``references``);
    ``request`` is the message that was refused.
    """

    def __init__(self, fail: Fail, request: Message | None = None) -> None:
        name = type(request).__name__ if request is not None else "request"
        code = getattr(fail.code, "name", fail.code)
        super().__init__(f"{name} failed: {code}: {fail.message}")
        self.fail = fail
        self.request = request

    @property
    def code(self) -> int:
        return int(self.fail.code)


class UnexpectedReply(ClientError):
    """The server answered with a frame that is not a possible answer to the request."""

    def __init__(self, message: str, reply: object = None) -> None:
        super().__init__(message)
        self.reply = reply


class MalformedReply(ClientError):
    """A reply frame could not be decoded (short, long or garbled body).

    The connection goes on: framing is intact, only this request's answer is unusable. This is
    what tpserver-cpp's TP03 Player frame (8 bytes too long, spec Appendix A.1) produces.
    """

    def __init__(self, message: str, error: ProtocolError | None = None) -> None:
        super().__init__(message)
        self.error = error


class DescriptionUnavailable(ClientError):
    """A TP04 Object or an Order could not be decoded, and the server would not describe its
    type (GetObjectDesc / GetOrderDesc failed)."""

    def __init__(self, kind: str, type_id: int, reason: str = "") -> None:
        text = f"no description of {kind} type {type_id}"
        super().__init__(f"{text}: {reason}" if reason else text)
        self.kind = kind
        self.type_id = type_id


class ConnectionClosed(ClientError):
    """The connection closed (or was closed) before the answer arrived."""


class StreamBroken(ConnectionClosed):
    """The server's byte stream cannot be read any more (bad header, wrong protocol, a plain
    text refusal such as tpserver-cpp's "please upgrade"). ``error`` is the deframer's error and
    ``text`` any plain text the server sent."""

    def __init__(self, message: str, error: ProtocolError | None = None, text: str = "") -> None:
        super().__init__(message)
        self.error = error
        self.text = text


class VersionRejected(StreamBroken):
    """The server refused our protocol version (a Fail in another version, §1.2)."""


class ConnectFailed(ClientError):
    """The TCP connection could not be opened (refused, unreachable, timed out)."""


class TlsMismatch(ConnectFailed, ConnectionClosed):
    """One side speaks TLS and the other does not: ``client_tls`` True for a TLS client on a
    plain TP port, False for a plain client on what looks like a TLS port (the server closed
    the connection, or sent a TLS record, instead of answering Connect)."""

    def __init__(self, host: str, port: int, *, client_tls: bool) -> None:
        if client_tls:
            text = f"{host}:{port} does not speak TLS (a plain TP port)"
        else:
            text = (
                f"the server closed the connection without answering Connect "
                f"({host}:{port} may be a TLS port)"
            )
        super().__init__(text)
        self.host = host
        self.port = port
        self.client_tls = client_tls


class CertificateUntrusted(ConnectFailed):
    """The TLS server's certificate could not be verified (``reason``: why, from OpenSSL)."""

    def __init__(self, host: str, port: int, reason: str) -> None:
        super().__init__(f"the TLS certificate of {host}:{port} is not trusted: {reason}")
        self.host = host
        self.port = port
        self.reason = reason


class Redirected(ClientError):
    """The server answered Connect or Login with Redirect; ``uri`` is where to go instead."""

    def __init__(self, uri: str) -> None:
        super().__init__(f"redirected to {uri}")
        self.uri = uri


class RequestTimeout(ClientError):
    """No (complete) answer arrived in time."""


def creation_refusal(refused: RequestFailed | None) -> RequestFailed | None:
    """The CreateAccount refusal worth reporting when the Login that followed it failed too:
    not "the account exists" (then the Login's own refusal, a wrong password, says more)."""
    if refused is None or "exists" in refused.fail.message:
        return None
    return refused
