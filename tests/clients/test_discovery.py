"""`tae-client discover`: servers registered over mDNS (our own registration on the loopback
interface, with tpserver-cpp's TXT keys) are listed with the options that connect to them.
Skipped, with the reason, where multicast does not work on the loopback interface."""

from __future__ import annotations

import socket
import time

import pytest
from click.testing import CliRunner

from clients.cli import cli
from clients.discovery import browse, server_from_txt
from tests.support.json_schemas import json_answer

pytestmark = pytest.mark.timeout(60)

LOOPBACK = "127.0.0.1"
TXT = {
    "tp": "0.3,0.4",
    "server": "0.1.0",
    "sertype": "tpserver-tae",
    "rule": "TaE",
    "rulever": "0.1",
    "turn": "7",
    "plys": "3",
    "objs": "412",
}


@pytest.fixture(scope="module")
def registered():
    """Two services on loopback: a plain one (complete TXT) and a TLS one (no ruleset keys)."""
    zeroconf_module = pytest.importorskip("zeroconf")
    try:
        zc = zeroconf_module.Zeroconf(interfaces=[LOOPBACK], ip_version=zeroconf_module.IPVersion.V4Only)
    except OSError as error:
        pytest.skip(f"no multicast socket on the loopback interface: {error}")
    address = socket.inet_aton(LOOPBACK)
    txt = dict(TXT, next=str(int(time.time()) + 600))  # the next turn in ten minutes
    services = [
        zeroconf_module.ServiceInfo(
            "_tp._tcp.local.",
            "Test TaE._tp._tcp.local.",
            port=6923,
            addresses=[address],
            properties=txt,
            server="tae-test.local.",
        ),
        zeroconf_module.ServiceInfo(
            "_tps._tcp.local.",
            "Secure TaE._tps._tcp.local.",
            port=6924,
            addresses=[address],
            properties={"tp": "0.4", "server": "0.1.0"},
            server="tae-test.local.",
        ),
    ]
    try:
        for info in services:
            zc.register_service(info)
        # Does multicast reach us on loopback at all? Ask with a second, independent socket.
        probe = zeroconf_module.Zeroconf(interfaces=[LOOPBACK], ip_version=zeroconf_module.IPVersion.V4Only)
        try:
            seen = probe.get_service_info("_tp._tcp.local.", "Test TaE._tp._tcp.local.", timeout=3000)
        finally:
            probe.close()
        if seen is None:
            pytest.skip("multicast does not reach this host on the loopback interface")
        yield services
    finally:
        zc.unregister_all_services()
        zc.close()


def quiet_for_a_second():
    """A responder does not multicast the same answer twice within a second (RFC 6762 §6):
    let the answers to the previous browse age before browsing again."""
    time.sleep(1.1)


def test_browse_finds_both_services(registered):
    quiet_for_a_second()
    servers = {server.name: server for server in browse(3.0, interfaces=[LOOPBACK])}
    plain, secure = servers["Test TaE"], servers["Secure TaE"]
    assert (plain.scheme, plain.port, plain.addresses, plain.tls) == ("tp", 6923, (LOOPBACK,), False)
    assert plain.versions == ("0.3", "0.4") and (plain.rule, plain.rulever) == ("TaE", "0.1")
    assert (plain.turn, plain.players, plain.sertype) == (7, 3, "tpserver-tae") and plain.complete
    assert secure.tls and secure.port == 6924 and not secure.complete and secure.rule is None


def test_the_discover_command(registered):
    quiet_for_a_second()
    result = CliRunner().invoke(cli, ["--json", "discover", "--interface", LOOPBACK, "--wait", "3"])
    assert result.exit_code == 0, result.output
    found = {entry["name"]: entry for entry in json_answer(result.stdout)["servers"]}
    assert found["Test TaE"]["connect"] == "--host 127.0.0.1 --port 6923"
    assert found["Secure TaE"]["connect"] == "--host 127.0.0.1 --port 6924 --tls"
    assert found["Test TaE"]["properties"]["objs"] == "412"
    quiet_for_a_second()
    text = CliRunner().invoke(cli, ["discover", "--interface", LOOPBACK, "--wait", "3"]).stdout
    lines = text.splitlines()
    first = lines.index(next(line for line in lines if line.startswith("Test TaE")))
    assert lines[first].startswith("Test TaE  TaE 0.1, turn 7, 3 players, next turn in 9m")
    assert lines[first].endswith(", TP 0.3,0.4")
    assert lines[first + 1] == "  tae-client --host 127.0.0.1 --port 6923"
    assert "Secure TaE (incomplete TXT)  rules unknown, TP 0.4 over TLS" in lines
    assert "  tae-client --host 127.0.0.1 --port 6924 --tls" in lines


def test_txt_records_as_zeroconf_gives_them():
    server = server_from_txt(
        "x", "tp", "h.local.", 1, (), {b"tp": b"0.3", b"turn": b"soon", b"cmt": None, b"plys": b"2"}
    )
    assert server.versions == ("0.3",) and server.turn is None and server.players == 2
    assert server.comment is None and server.connect_host == "h.local"


def test_nothing_announced_is_not_an_error(monkeypatch):
    monkeypatch.setattr("clients.cli_discover.browse", lambda seconds, **kwargs: [])
    result = CliRunner().invoke(cli, ["discover", "--wait", "0.2"])
    assert result.exit_code == 0 and "no Thousand Parsec servers announced themselves" in result.stdout
    monkeypatch.setattr("clients.cli_discover.browse", _no_multicast)
    result = CliRunner().invoke(cli, ["discover", "--wait", "0.2"])
    assert result.exit_code == 3
    assert result.stderr == "tae-client: cannot listen for mDNS announcements: [Errno 19] No such device\n"


def _no_multicast(seconds, **kwargs):
    raise OSError(19, "No such device")
