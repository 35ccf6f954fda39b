"""Operating a real `tae-server` process when things go wrong: signals that come again and
again, starts that fail (which must create and change nothing), backups while it runs, a
database on a read-only file system, JSON log lines, and a client that never reads."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

import protocol as tp
from protocol import Version
from server.database import SyncDatabase
from server.game.passwords import hash_password
from tests.support.json_schemas import json_answer

from .server_process import ServerProcess, tae_server
from .test_faults_database import orders_for, player
from .tp_client import TPClient

pytestmark = pytest.mark.timeout(180)


def one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- signals ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "signals", [(signal.SIGTERM, signal.SIGTERM), (signal.SIGINT, signal.SIGTERM, signal.SIGINT)]
)
def test_repeated_signals_stop_the_server_once_without_a_traceback(tmp_path, signals):
    server = ServerProcess(f"sqlite:///{tmp_path / 'tae.db'}")
    try:
        port = server.start()
        client = player(port, "ann")
        client.close()
        for sig in signals:
            server.process.send_signal(sig)
            time.sleep(0.01)
        assert server.terminate(signals[-1]) == 0
        output = "".join(server.lines) + server.stderr
        assert "Traceback" not in output and server.stderr == ""
        assert [e.get("message") for e in server.events].count("server stopped") == 1
        stopping = [e["message"] for e in server.events if "stopping" in str(e.get("message"))]
        assert stopping[0] == f"{signal.Signals(signals[0]).name}: stopping the server"
    finally:
        server.kill()
    listing = tae_server("list-games", "--database", f"sqlite:///{tmp_path / 'tae.db'}")
    assert "server: not running" in listing.stdout


# -- starts that fail -------------------------------------------------------------------------


def test_a_bad_listener_creates_no_database(tmp_path):
    done = tae_server("serve", "--database", f"sqlite:///{tmp_path / 'tae.db'}", "--listen", "tcp:notaport")
    assert done.returncode == 2 and "listen: 'tcp:notaport' is not a usable endpoint" in one_line(done.stderr)
    assert list(tmp_path.iterdir()) == []


def test_a_port_in_use_creates_no_database_and_changes_none(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        listen = f"tcp:{port}:interface=127.0.0.1"
        done = tae_server("serve", "--database", f"sqlite:///{tmp_path / 'new.db'}", "--listen", listen)
        assert done.returncode == 1
        assert one_line(done.stderr) == (
            f"tae-server: cannot start: listen: cannot listen on {listen!r}: Address already in use"
        )
        assert list(tmp_path.iterdir()) == []
        # an existing database without games is not given one, nor a lease
        url = f"sqlite:///{tmp_path / 'old.db'}"
        assert tae_server("create-game", "first", "--database", url).returncode == 0
        before = digest(tmp_path / "old.db")
        done = tae_server("serve", "--database", url, "--listen", listen, "--game-name", "other")
        assert done.returncode == 1
        assert digest(tmp_path / "old.db") == before
        assert sorted(p.name for p in tmp_path.iterdir()) == ["old.db"]


def test_bad_configuration_creates_no_database(tmp_path):
    config = tmp_path / "tae.toml"
    config.write_text("[limits]\nframes_per_second = 'lots'\n")
    done = tae_server("serve", "--config", str(config), "--database", f"sqlite:///{tmp_path / 'tae.db'}")
    assert done.returncode == 2 and "limits.frames_per_second" in one_line(done.stderr)
    done = tae_server(
        "serve", "--database", f"sqlite:///{tmp_path / 'tae.db'}", "--map", str(tmp_path / "nope")
    )
    assert done.returncode == 2 and "map: cannot read" in one_line(done.stderr)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tae.toml"]


def test_an_admin_listener_that_cannot_listen_stops_the_started_server_and_removes_its_database(tmp_path):
    config = tmp_path / "tae.toml"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        admin = f"tcp:{taken.getsockname()[1]}:interface=127.0.0.1"
        config.write_text(
            f'[admin]\nlisten = ["{admin}"]\n[admin.users]\ntpadm = "{hash_password("secret7", n=2**4)}"\n'
        )
        done = tae_server(
            "serve",
            "--config",
            str(config),
            "--database",
            f"sqlite:///{tmp_path / 'tae.db'}",
            "--listen",
            "tcp:0:interface=127.0.0.1",
            "--log-format",
            "json",
        )
    assert done.returncode == 1
    assert one_line(done.stderr) == (
        f"tae-server: cannot start: admin.listen: cannot listen on {admin!r}: Address already in use"
    )
    # the game was created and loaded before the admin listener failed; all of it is gone
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tae.toml"]
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert not any(e["message"].startswith("listening on") for e in events)  # nothing was open
    assert "Traceback" not in done.stdout


def test_a_database_that_cannot_be_opened_creates_nothing(tmp_path):
    url = f"sqlite:///{tmp_path / 'missing' / 'tae.db'}"
    done = tae_server("serve", "--database", url, "--listen", "tcp:0:interface=127.0.0.1")
    assert done.returncode == 1
    assert one_line(done.stderr).startswith("tae-server: cannot start: ")
    assert list(tmp_path.iterdir()) == [] and "Traceback" not in done.stdout


# -- logs ---------------------------------------------------------------------------------------


def test_json_logs_are_flat_objects_with_time_level_logger_and_message(tmp_path):
    server = ServerProcess(f"sqlite:///{tmp_path / 'tae.db'}")
    try:
        port = server.start()
        wrong = TPClient(port)
        wrong.connect()
        assert isinstance(wrong.one(tp.Login("nobody", "secret-guess")), tp.Fail)
        server.wait_for(lambda e: str(e.get("message", "")).startswith("failed login"))
        assert server.terminate() == 0
    finally:
        server.kill()
    events = [json.loads(line) for line in server.lines]
    assert events and all({"time", "level", "logger", "message"} <= set(e) for e in events)
    assert all(not key.startswith("log_") for e in events for key in e)
    listening = next(e for e in events if e["message"].startswith("listening on"))
    assert listening["logger"] == "server.services.listeners" and listening["level"] == "info"
    assert listening["message"] == f"listening on 127.0.0.1:{listening['port']} for TP"
    assert listening["listener"] == "tp" and listening["tls"] is False
    # Twisted's own lines for each port ("TPFactory starting on …", "(TCP Port … Closed)") are left out
    assert not any(" starting on " in e["message"] or e["message"].endswith(" Closed)") for e in events)
    assert listening["time"].endswith("+00:00")
    failed = next(e for e in events if e["message"].startswith("failed login"))
    assert failed["level"] == "warn" and failed["address"] == "127.0.0.1" and failed["name"] == "'nobody'"
    assert "secret-guess" not in "".join(server.lines)


# -- backups ------------------------------------------------------------------------------------


def test_a_backup_of_a_running_server_has_every_acknowledged_order(tmp_path):
    url = f"sqlite:///{tmp_path / 'tae.db'}"
    server = ServerProcess(url, "--turn-length", "0")
    try:
        port = server.start()
        ann, bob = player(port, "ann"), player(port, "bob")
        acknowledged = []
        for pid, client in ((1, ann), (2, bob)):
            for order in orders_for(url, pid, 2):
                if isinstance(
                    client.one(client.insert_order(order.fleet, int(order.type), order.target)), tp.Order
                ):
                    acknowledged.append((pid, order.fleet, int(order.type), order.target))
        assert acknowledged
        done = tae_server("backup", str(tmp_path / "copy.db"), "--database", url)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(f"backed up {url} to {tmp_path / 'copy.db'} (1 game, ")
        with SyncDatabase(f"sqlite:///{tmp_path / 'copy.db'}") as copy:
            stored = copy.load_games()[0]
        assert {(o.player, o.object_id, o.type, o.target) for o in stored.orders} == set(acknowledged)
        assert {a.username for a in stored.accounts} == {"ann", "bob"}
        status = tae_server("status", "tae", "--database", f"sqlite:///{tmp_path / 'copy.db'}")
        assert status.returncode == 0 and "ann" in status.stdout
        assert "server: not running" in status.stdout  # the copy carries no lease
        # the copy serves at once, while the original's server still runs
        copy_server = ServerProcess(f"sqlite:///{tmp_path / 'copy.db'}", "--turn-length", "0")
        try:
            copy_port = copy_server.start()
            again = player(copy_port, "ann")
            assert isinstance(again.time_remaining(), tp.TimeRemaining)
        finally:
            copy_server.kill()
    finally:
        server.kill()


def test_backup_of_postgresql_says_how(tmp_path):
    done = tae_server(
        "backup", str(tmp_path / "x"), "--database", "postgresql+psycopg://tae:pw@db.example/tae"
    )
    assert done.returncode == 1
    assert "pg_dump --format=custom --file=tae.dump postgresql://tae:***@db.example/tae" in one_line(
        done.stderr
    )


# -- read-only databases --------------------------------------------------------------------------


@pytest.fixture
def read_only_folder():
    """A folder on a file system mounted read-only once the test has written to it."""
    if os.geteuid() != 0:
        pytest.skip("mounting a file system needs root")
    folder = Path(tempfile.mkdtemp(prefix="tae-ro-"))
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(folder)]).returncode:
        folder.rmdir()
        pytest.skip("cannot mount a tmpfs here")

    def make_read_only():
        subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)

    try:
        yield folder, make_read_only
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)
        folder.rmdir()


def test_a_read_only_database_can_be_listed_and_shown(read_only_folder):
    folder, make_read_only = read_only_folder
    url = f"sqlite:///{folder / 'tae.db'}"
    assert tae_server("create-game", "g", "--database", url).returncode == 0
    assert (
        tae_server("add-player", "g", "ann", "--password", "ann-password", "--database", url).returncode == 0
    )
    make_read_only()
    listing = tae_server("list-games", "--database", url)
    assert listing.returncode == 0, listing.stderr
    assert "1 game" in listing.stdout and " g " in listing.stdout
    status = tae_server("status", "g", "--database", url, "--json")
    assert status.returncode == 0 and json_answer(status.stdout)["players"][0]["name"] == "ann"
    change = tae_server("add-player", "g", "bob", "--password", "bob-password", "--database", url)
    assert change.returncode == 1 and "readonly database" in one_line(change.stderr)
    assert "Traceback" not in change.stderr


# -- a client that never reads -------------------------------------------------------------------


def test_a_client_that_never_reads_is_cut_off_and_others_play_on(tmp_path):
    url = f"sqlite:///{tmp_path / 'tae.db'}"
    server = ServerProcess(url, "--turn-length", "0", "--limit", "pending_output_bytes=65536")
    try:
        port = server.start()
        reader = player(port, "reader")
        hog = player(port, "hog")
        (order,) = orders_for(url, 2, 1)
        assert isinstance(hog.one(hog.insert_order(order.fleet, int(order.type), order.target)), tp.Order)
        ids = tuple(i.id for i in reader.one(tp.GetObjectIDs(-1, 0, -1, -1)).ids)
        hog.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        request = tp.encode(tp.GetObjectsByID(ids), Version.TP04, 99)
        cut = False
        deadline = time.monotonic() + 60
        hog.sock.settimeout(5)
        while time.monotonic() < deadline:
            try:
                hog.sock.sendall(request * 50)
            except OSError:
                cut = True
                break
        assert cut, "the server kept buffering for a client that does not read"
        server.wait_for(lambda e: str(e.get("message", "")).startswith("cutting off 127.0.0.1:"), 30)
        assert isinstance(reader.one(tp.Ping()), tp.Okay)
        assert reader.queue(order.fleet) == []  # (not the hog's fleet: it sees its own queues only)
        again = TPClient(port)
        again.connect()
        again.login("hog@tae", "a-good-password")
        assert again.queue(order.fleet) == [(int(order.type), order.target)]  # acknowledged: kept
    finally:
        server.kill()


def test_limits_from_the_configuration_file_apply(tmp_path):
    config = tmp_path / "tae.toml"
    config.write_text("[limits]\nconnections_per_address = 2\n")
    server = ServerProcess(f"sqlite:///{tmp_path / 'tae.db'}", "--config", str(config))
    try:
        port = server.start()
        first, second = TPClient(port), TPClient(port)
        first.connect()
        second.connect()
        third = TPClient(port)
        answer = third.one(tp.Connect("third"))
        assert isinstance(answer, tp.Fail) and answer.code == 3 and "at most 2" in answer.message
        with pytest.raises(ConnectionError):
            third.one(tp.Ping())
        assert isinstance(first.one(tp.Ping()), tp.Okay)
    finally:
        server.kill()
