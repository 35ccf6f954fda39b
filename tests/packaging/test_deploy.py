"""The files an operator copies: deploy/tae.toml and deploy/tpserver-tae.service."""

from __future__ import annotations

import configparser
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from server.config import file as server_config
from server.config.admin import parse_admin_settings
from server.config.discovery import DiscoverySettings, parse_discovery_settings
from server.config.file import load_config

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "deploy" / "tae.toml"
UNIT = ROOT / "deploy" / "tpserver-tae.service"


def test_the_sample_configuration_loads_and_names_every_setting():
    config = load_config(str(SAMPLE))
    assert config.listen == ("tcp:6923",)
    # the web listener is on, on this host only, with a secret that outlives restarts
    assert config.web == ("tcp:8080:interface=127.0.0.1",)
    assert config.web_secret_file == "/var/lib/tpserver-tae/web-secret"
    text = SAMPLE.read_text()
    keys = set(re.findall(r"^#?\s*([a-z_]+)\s*=", text, flags=re.MULTILINE))
    keys |= set(re.findall(r"^#?\s*\[([a-z_]+)\]", text, flags=re.MULTILINE))  # sections
    known = set(server_config.ConfigFile.__struct_fields__) | set(server_config.GameTable.__struct_fields__)
    assert not known - keys, f"settings missing from deploy/tae.toml: {sorted(known - keys)}"


def test_the_sample_game_settings_are_the_defaults():
    assert load_config(str(SAMPLE)).game == server_config.GameConfig()


def commented_section(name: str) -> str:
    """The commented-out `[name]` block of the sample, uncommented."""
    text = SAMPLE.read_text()
    start = text.index(f"# [{name}]")
    block = text[start:].split("\n# ----", 1)[0]
    lines = [line[2:] if line.startswith("# ") else line.lstrip("#") for line in block.splitlines()]
    return "\n".join(lines)


def test_the_admin_section_of_the_sample_parses_once_uncommented():
    table = tomllib.loads(commented_section("admin"))["admin"]
    settings = parse_admin_settings(table)
    assert settings.listen == ("tcp:6925:interface=127.0.0.1",)
    assert list(settings.users) == ["tpadm"]


def test_the_discovery_section_of_the_sample_parses_once_uncommented():
    table = tomllib.loads(commented_section("discovery"))["discovery"]
    assert parse_discovery_settings(table) == DiscoverySettings()


def test_the_commented_sections_load_through_the_server_configuration(tmp_path):
    path = tmp_path / "tae.toml"
    path.write_text(commented_section("admin") + "\n" + commented_section("discovery") + "\n")
    config = load_config(str(path))
    assert config.admin.listen == ("tcp:6925:interface=127.0.0.1",) and list(config.admin.users) == ["tpadm"]
    assert config.discovery == DiscoverySettings()


def test_the_cluster_section_of_the_sample_loads_once_uncommented(tmp_path):
    path = tmp_path / "tae.toml"
    path.write_text('database = "postgresql+psycopg://tae@db/tae"\n' + commented_section("cluster") + "\n")
    config = load_config(str(path))
    assert config.cluster.node == "node-a" and config.cluster.advertise == "10.0.0.11:6923"


def unit() -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str
    parser.read_string(UNIT.read_text())
    return parser


def test_the_unit_is_hardened():
    service = unit()["Service"]
    expected = {
        "User": "tpserver-tae",
        "NoNewPrivileges": "yes",
        "ProtectSystem": "strict",
        "ProtectHome": "yes",
        "PrivateTmp": "yes",
        "PrivateDevices": "yes",
        "StateDirectory": "tpserver-tae",
        "ReadWritePaths": "/var/lib/tpserver-tae",
        "CapabilityBoundingSet": "",
    }
    for key, value in expected.items():
        assert service.get(key) == value, key
    sample = load_config(str(SAMPLE))
    database_dir = Path(sample.database.removeprefix("sqlite:///")).parent
    assert database_dir == Path(service["ReadWritePaths"]) == Path("/var/lib") / service["StateDirectory"]
    assert "--config /etc/tpserver-tae/tae.toml" in service["ExecStart"]


def test_the_unit_does_not_restart_a_bad_configuration_and_follows_a_local_postgresql():
    units = unit()
    # exit 2 is `tae-server serve`'s "configuration I cannot use": restarting cannot help
    assert units["Service"]["RestartPreventExitStatus"] == "2"
    assert units["Service"]["Restart"] == "on-failure"
    assert "postgresql.service" in units["Unit"]["After"].split()
    assert "postgresql.service" in units["Unit"]["Wants"].split()


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_systemd_finds_nothing_wrong_with_the_unit(tmp_path):
    """`systemd-analyze verify`, with ExecStart pointing at a program that exists here."""
    text = UNIT.read_text().replace("/usr/local/bin/tae-server", sys.executable)
    copy = tmp_path / "tpserver-tae.service"
    copy.write_text(text)
    result = subprocess.run(
        ["systemd-analyze", "verify", str(copy)], capture_output=True, text=True, timeout=60
    )
    problems = [line for line in (result.stdout + result.stderr).splitlines() if "tpserver-tae" in line]
    assert result.returncode == 0 and not problems, result.stdout + result.stderr


def test_the_notifications_section_of_the_sample_loads_once_uncommented(tmp_path):
    from server.notifications import NotificationSettings

    path = tmp_path / "tae.toml"
    path.write_text(commented_section("notifications") + "\n")
    settings = load_config(str(path)).notifications
    assert settings.smtp_host == "localhost" and settings.smtp_from == "tae@example.org"
    defaults = NotificationSettings()
    for name in ("enabled", "reminder_lead", "retry_base", "retry_cap", "max_attempts", "max_channels"):
        assert getattr(settings, name) == getattr(defaults, name), name
