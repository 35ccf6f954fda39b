"""The tps transport: TLS from the first byte (spec/protocol.md §8), on a Twisted `ssl:` endpoint."""

import socket
import ssl
from pathlib import Path

import protocol as tp
from protocol import Deframer, Version
from tests.support.servers import free_port, serve_process

ROOT = Path(__file__).resolve().parents[2]


def make_certificate(directory: Path) -> tuple[Path, Path]:
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=2))
        .sign(key, hashes.SHA256())
    )
    key_path, cert_path = directory / "key.pem", directory / "cert.pem"
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return key_path, cert_path


def test_a_tls_listener_speaks_tp(tmp_path):
    key, cert = make_certificate(tmp_path)
    plain, secure = free_port(), free_port()
    args = ["--listen", f"tcp:{plain}:interface=127.0.0.1"]
    args += ["--listen", f"ssl:{secure}:privateKey={key}:certKey={cert}:interface=127.0.0.1"]
    args += ["--database", "sqlite:///tae.db"]
    with serve_process(tmp_path, args, secure):
        context = ssl.create_default_context(cafile=str(cert))
        with socket.create_connection(("127.0.0.1", secure), timeout=10) as raw:
            with context.wrap_socket(raw, server_hostname="localhost") as conn:
                conn.sendall(tp.encode(tp.Connect("tls-test"), Version.TP04, 2))
                deframer = Deframer()
                frame = None
                while frame is None:
                    deframer.feed(conn.recv(4096))
                    frame = deframer.next_frame()
                assert isinstance(tp.decode(frame), tp.Okay) and frame.sequence == 2
