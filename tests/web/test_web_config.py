"""The web listener's settings: `web` and `web_secret_file` in the file, `--web` on the command line."""

from __future__ import annotations

import pytest

from server.cli.options import configured
from server.config.errors import ConfigError
from server.config.file import load_config
from server.web.secret import SecretError, load_secret


def test_web_endpoints_come_from_the_file_or_the_flags(tmp_path):
    path = tmp_path / "tae.toml"
    path.write_text('web = "tcp:8080:interface=127.0.0.1"\nweb_secret_file = "key"\n')
    config = load_config(str(path))
    assert config.web == ("tcp:8080:interface=127.0.0.1",) and config.web_secret_file == "key"
    path.write_text('web = ["tcp:8080", "ssl:8443:privateKey=k.pem"]\n')
    assert load_config(str(path)).web == ("tcp:8080", "ssl:8443:privateKey=k.pem")
    assert configured(str(path), web=("tcp:9090",)).web == ("tcp:9090",)
    assert load_config(None).web == ()  # no web listener unless asked for


def test_a_web_setting_of_the_wrong_type_is_a_one_line_error(tmp_path):
    path = tmp_path / "tae.toml"
    path.write_text("web = 8080\n")
    with pytest.raises(ConfigError) as error:
        load_config(str(path))
    assert "web" in str(error.value) and "\n" not in str(error.value)


def test_the_secret_file_is_made_once_and_kept_private(tmp_path):
    path = tmp_path / "web-secret"
    first = load_secret(str(path))
    assert first is not None and len(first) == 64
    assert path.stat().st_mode & 0o077 == 0
    assert load_secret(str(path)) == first
    assert load_secret(None) is None
    path.write_text("short\n")
    with pytest.raises(SecretError, match="at least 32 characters"):
        load_secret(str(path))
    with pytest.raises(SecretError, match="web_secret_file"):
        load_secret(str(tmp_path / "missing-dir" / "key"))


def test_a_cluster_node_s_web_listener_needs_the_shared_secret_and_a_usable_address(tmp_path):
    path = tmp_path / "node.toml"
    node = '[cluster]\nnode = "a"\nadvertise = "10.0.0.5:6923"\n'
    path.write_text('web = "tcp:8080"\n' + node)
    with pytest.raises(ConfigError, match=r"web_secret_file \(or --web-secret-file\): a cluster node"):
        load_config(str(path))
    path.write_text(f'web = "tcp:8080"\nweb_secret_file = "{tmp_path / "key"}"\n' + node)
    assert load_config(str(path)).node.web_advertise is None
    path.write_text(node + 'web_advertise = "nowhere"\n')
    with pytest.raises(ConfigError, match="cluster.web_advertise"):
        load_config(str(path))


def test_the_web_address_other_nodes_reach_a_node_at():
    from server.cluster.web_places import web_address

    class Port:
        def __init__(self, port):
            self.port = port

        def getHost(self):
            return self

    tls, plain = ("ssl:8443:privateKey=k.pem", Port(8443)), ("tcp:0:interface=10.0.0.5", Port(41234))
    assert web_address("10.0.0.5:6923", None, [tls, plain]) == "10.0.0.5:41234"
    assert web_address("[fd00::5]:6923", None, [plain]) == "[fd00::5]:41234"
    assert web_address("10.0.0.5:6923", "10.9.9.9:81", [plain]) == "10.9.9.9:81"
    assert web_address("10.0.0.5:6923", None, [tls, ("haproxy:tcp:8080", Port(8080))]) is None
