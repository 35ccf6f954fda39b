"""`tae-client discover` finds the real server's mDNS advertisement on the loopback interface, and
the options it prints connect to that server. Skipped, with the reason, where multicast does not
work on the loopback interface."""

from __future__ import annotations

import json
import shlex

import pytest
from click.testing import CliRunner

from clients.cli import cli
from tests.support.json_schemas import json_answer
from tests.support.servers import free_port, serve_process

pytestmark = pytest.mark.timeout(120)


def multicast_on_loopback() -> str | None:
    """Why mDNS cannot be tested on loopback here, or None when it can."""
    import socket

    import zeroconf

    try:
        zc = zeroconf.Zeroconf(interfaces=["127.0.0.1"], ip_version=zeroconf.IPVersion.V4Only)
    except OSError as error:
        return f"no multicast socket on the loopback interface: {error}"
    info = zeroconf.ServiceInfo(
        "_tp._tcp.local.",
        "probe._tp._tcp.local.",
        port=1,
        addresses=[socket.inet_aton("127.0.0.1")],
        properties={"tp": "0.4"},
        server="probe.local.",
    )
    try:
        zc.register_service(info)
        other = zeroconf.Zeroconf(interfaces=["127.0.0.1"], ip_version=zeroconf.IPVersion.V4Only)
        try:
            if other.get_service_info("_tp._tcp.local.", "probe._tp._tcp.local.", timeout=3000) is None:
                return "multicast does not reach this host on the loopback interface"
        finally:
            other.close()
    finally:
        zc.unregister_all_services()
        zc.close()
    return None


def test_discover_finds_the_server_and_its_options_connect(tmp_path, monkeypatch):
    reason = multicast_on_loopback()
    if reason is not None:
        pytest.skip(reason)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    for name in ("TAE_HOST", "TAE_PORT", "TAE_USER", "TAE_PASSWORD", "TAE_TLS"):
        monkeypatch.delenv(name, raising=False)
    port = free_port()
    config = tmp_path / "server.toml"
    config.write_text('[discovery]\nenabled = true\ncomment = "discover me"\n')
    args = [
        "--config",
        str(config),
        "--listen",
        f"tcp:{port}:interface=127.0.0.1",
        "--database",
        f"sqlite:///{tmp_path / 'tae.db'}",
        "--game-name",
        "lantae",
    ]
    with serve_process(tmp_path, args, port):
        found = []
        for _ in range(3):  # the first announcements may still be on their way
            result = CliRunner().invoke(
                cli, ["--json", "discover", "--interface", "127.0.0.1", "--wait", "3"]
            )
            assert result.exit_code == 0, result.output
            found = [entry for entry in json_answer(result.stdout)["servers"] if entry["port"] == port]
            if found:
                break
        assert found, "the server's advertisement was not seen"
        (server,) = found
        assert server["scheme"] == "tp" and server["complete"] and "0.4" in server["versions"]
        assert server["comment"] == "discover me" and server["game"] == "lantae"
        assert server["connect"] == f"--host 127.0.0.1 --port {port}"
        connect = shlex.split(server["connect"])
        login = [*connect, "--user", "lan", "--password", "lan-password"]
        assert CliRunner().invoke(cli, [*login, "create-account"]).exit_code == 0
        status = CliRunner().invoke(cli, [*login, "--json", "status"])
        assert status.exit_code == 0, status.output
        assert json.loads(status.stdout)["server"]["port"] == port
