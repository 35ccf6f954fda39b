"""`tae-client --tls` against the real server's `ssl:` listener (certificates made here): a CA
file or --insecure connect, the system store refuses a self-signed certificate, and a client on
the wrong kind of port is told so in one line; the bot plays over TLS too."""

from __future__ import annotations

import datetime
import ipaddress
from pathlib import Path

import pytest
from click.testing import CliRunner

from clients.cli import cli
from tests.support.json_schemas import json_answer
from tests.support.servers import free_port, serve_process

pytestmark = pytest.mark.timeout(120)


def make_certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for localhost and 127.0.0.1 that is its own CA."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
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
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
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


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """The real server with a plain and a TLS listener: (plain port, TLS port, certificate)."""
    directory = tmp_path_factory.mktemp("tls-server")
    key, cert = make_certificate(directory)
    plain, secure = free_port(), free_port()
    args = [
        "--listen",
        f"tcp:{plain}:interface=127.0.0.1",
        "--listen",
        f"ssl:{secure}:privateKey={key}:certKey={cert}:interface=127.0.0.1",
        "--database",
        f"sqlite:///{directory / 'tae.db'}",
    ]
    with serve_process(directory, args, secure):
        yield plain, secure, cert


@pytest.fixture(autouse=True)
def no_user_settings(monkeypatch, tmp_path):
    for name in (
        "TAE_HOST",
        "TAE_PORT",
        "TAE_USER",
        "TAE_PASSWORD",
        "TAE_TLS",
        "TAE_CA_FILE",
        "TAE_INSECURE",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


def tae_client(*args: str, expect: int = 0):
    result = CliRunner().invoke(cli, ["--timeout", "10", *args])
    assert result.exit_code == expect, f"{args}: {result.exit_code}\n{result.stdout}\n{result.stderr}"
    return result


def test_a_ca_file_verifies_the_server(servers):
    _plain, secure, cert = servers
    login = ["--host", "localhost", "--port", str(secure), "--tls", "--ca-file", str(cert)]
    tae_client(*login, "--user", "tina", "--password", "tls-password", "create-account")
    status = json_answer(
        tae_client(*login, "--user", "tina", "--password", "tls-password", "--json", "status").stdout
    )
    assert status["player"]["name"] == "tina" and status["server"]["port"] == secure


def test_insecure_accepts_a_self_signed_certificate(servers):
    _plain, secure, _cert = servers
    common = ["--host", "127.0.0.1", "--port", str(secure), "--tls", "--insecure"]
    tae_client(*common, "--user", "ivan", "--password", "tls-password", "create-account")
    tae_client(*common, "--user", "ivan", "--password", "tls-password", "status")


def test_the_system_store_does_not_trust_a_self_signed_certificate(servers):
    _plain, secure, _cert = servers
    result = tae_client(
        "--host",
        "localhost",
        "--port",
        str(secure),
        "--tls",
        "--user",
        "x",
        "--password",
        "y",
        "status",
        expect=3,
    )
    assert result.stderr == (
        f"tae-client: the TLS certificate of localhost:{secure} is not trusted: self-signed certificate "
        "(give --ca-file with its CA, or --insecure for a test server)\n"
    )


def test_a_plain_client_on_the_tls_port(servers):
    _plain, secure, _cert = servers
    result = tae_client(
        "--host", "127.0.0.1", "--port", str(secure), "--user", "x", "--password", "y", "status", expect=3
    )
    assert result.stderr == (
        "tae-client: the server closed the connection without answering Connect "
        f"(127.0.0.1:{secure} may be a TLS port): connect with --tls\n"
    )


def test_a_tls_client_on_the_plain_port(servers):
    plain, _secure, _cert = servers
    result = tae_client(
        "--host",
        "127.0.0.1",
        "--port",
        str(plain),
        "--tls",
        "--insecure",
        "--user",
        "x",
        "--password",
        "y",
        "status",
        expect=3,
    )
    assert result.stderr == (
        f"tae-client: 127.0.0.1:{plain} does not speak TLS (a plain TP port): connect without --tls\n"
    )


def test_tls_options_without_tls_and_a_missing_ca_file_are_usage_errors(servers, tmp_path):
    _plain, secure, _cert = servers
    result = tae_client(
        "--port", str(secure), "--insecure", "--user", "x", "--password", "y", "status", expect=2
    )
    assert result.stderr == "tae-client: --ca-file and --insecure are for TLS connections: add --tls\n"
    missing = tmp_path / "missing.pem"
    result = tae_client(
        "--port",
        str(secure),
        "--tls",
        "--ca-file",
        str(missing),
        "--user",
        "x",
        "--password",
        "y",
        "status",
        expect=2,
    )
    assert result.stderr == f"tae-client: --ca-file: {missing} does not exist\n"


def test_bots_play_over_tls(servers):
    _plain, secure, cert = servers
    result = tae_client(
        "--host",
        "localhost",
        "--port",
        str(secure),
        "--tls",
        "--ca-file",
        str(cert),
        "--json",
        "bot",
        "--password",
        "bot-password",
        "--prefix",
        "tlsbot",
        "-n",
        "2",
        "--max-turns",
        "1",
        "--turn-timeout",
        "30",
        expect=5,
    )
    bots = json_answer(result.stdout)["bots"]
    assert [b["name"] for b in bots] == ["tlsbot1", "tlsbot2"]
    assert all(b["failure"] == "deadline" and b["turns_played"] == 1 for b in bots), bots
