"""TLS for the blocking transport: the client's choices, its ``ssl`` context, and what a failed
handshake means.

A Thousand Parsec ``tps`` port (6924 by default, tpserver-cpp and our ``ssl:`` listener) speaks
TLS from the first byte, then plain TP frames (spec/protocol.md §8). ``TlsOptions`` says how to
trust the server: the system's certificate store (default), a CA file (``ca_file``, PEM; a
self-signed server certificate is its own CA), or nothing at all (``insecure``, for test servers;
the connection is still encrypted but anyone could be on the other end).

The two mismatches a user meets are told apart here, so their messages can say what to do:
a TLS client on a plain port fails its handshake with "wrong version number" (the server answered
with TP bytes, or a Fail frame); a plain client on a TLS port gets the connection closed, or a TLS
alert record, instead of an answer to Connect (``looks_like_tls``).
"""

from __future__ import annotations

import socket
import ssl
from dataclasses import dataclass

from .errors import CertificateUntrusted, ConnectFailed, TlsMismatch

__all__ = ["TlsOptions", "client_context", "looks_like_tls", "wrap"]


@dataclass(frozen=True, slots=True)
class TlsOptions:
    """How to check the server's certificate (see the module docstring)."""

    ca_file: str | None = None
    insecure: bool = False


def client_context(options: TlsOptions) -> ssl.SSLContext:
    """The ``SSLContext`` for ``options``; ``ConnectFailed`` for a CA file that cannot be used."""
    try:
        context = ssl.create_default_context(cafile=options.ca_file)
    except FileNotFoundError:
        raise ConnectFailed(f"CA file {options.ca_file} does not exist") from None
    except (ssl.SSLError, OSError) as error:
        raise ConnectFailed(f"CA file {options.ca_file} cannot be used: {_reason(error)}") from None
    if options.insecure:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


def wrap(sock: socket.socket, host: str, port: int, options: TlsOptions) -> ssl.SSLSocket:
    """Do the TLS handshake on a connected socket; raise ``TlsMismatch`` when the port is a
    plain TP port and ``ConnectFailed`` for every other handshake failure (untrusted
    certificate, wrong host name, timeout)."""
    context = client_context(options)
    try:
        return context.wrap_socket(sock, server_hostname=host)
    except ssl.SSLCertVerificationError as error:
        sock.close()
        raise CertificateUntrusted(host, port, error.verify_message or _reason(error)) from None
    except ssl.SSLError as error:
        sock.close()
        if error.reason in ("WRONG_VERSION_NUMBER", "RECORD_LAYER_FAILURE", "PACKET_LENGTH_TOO_LONG"):
            raise TlsMismatch(host, port, client_tls=True) from None
        raise ConnectFailed(f"TLS handshake with {host}:{port} failed: {_reason(error)}") from None
    except TimeoutError:
        sock.close()
        raise ConnectFailed(f"TLS handshake with {host}:{port} timed out") from None
    except OSError as error:
        sock.close()
        raise ConnectFailed(f"TLS handshake with {host}:{port} failed: {error}") from None


def looks_like_tls(prefix: bytes) -> bool:
    """Whether the first bytes from a server are a TLS record (an alert or a handshake)."""
    return len(prefix) >= 2 and prefix[0] in (0x15, 0x16) and prefix[1] == 0x03


def _reason(error: BaseException) -> str:
    reason = getattr(error, "reason", None)
    return str(reason).replace("_", " ").lower() if reason else str(error)
