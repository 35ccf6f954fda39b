"""Every `--json` answer of `tae-client` and `tae-server`, from real runs against a real
`tae-server serve` on 127.0.0.1, follows the JSON Schema it names (docs/schemas.md): the
successes, and the failures, whose error document is on stdout with the exit status."""

from __future__ import annotations

import json
import urllib.request

import click
import pytest
from click.testing import CliRunner

from clients.cli import cli as client_cli
from server.cli import cli as server_cli
from tests.support.json_schemas import check_document, json_answer, schema_files
from tests.support.servers import free_port, serve_process, wait_for_port

from .server_process import tae_server
from .test_web_server import serve_args

PASSWORD = "json-password"


@pytest.fixture
def running(tmp_path):
    tp_port, web_port = free_port(), free_port()
    config = tmp_path / "tae.toml"
    config.write_text('[game]\nvacation_days_max = 10\nturn_length = "1h"\nseed = 1\n')
    args = serve_args(tp_port, web_port, "--config", str(config))
    args.remove("--turn-length")
    args.remove("0")
    with serve_process(tmp_path, args, tp_port) as process:
        wait_for_port(web_port, process)
        yield tp_port, web_port, f"sqlite:///{tmp_path / 'tae.db'}", tmp_path


def tae_client(tp_port, web_port, user, *command, expect=(0,), password=PASSWORD, input=None):
    """`tae-client --json COMMAND` as `user`: its one document, checked, and the exit code."""
    args = ["--json", "--host", "127.0.0.1", "--port", str(tp_port), "--timeout", "10"]
    args += ["--web-url", f"http://127.0.0.1:{web_port}", "--user", user, "--password", password]
    done = CliRunner().invoke(client_cli, [*args, *command], input=input)
    assert done.exit_code in expect, (command, done.exit_code, done.stdout, done.stderr)
    document = json_answer(done.stdout)
    if done.exit_code:
        assert document["error"]["exit"] == done.exit_code and document["error"]["message"]
        assert done.stderr.startswith("tae-client: ")
    else:
        assert "error" not in document
    return document


def test_every_tae_client_answer_follows_its_schema(running):
    tp_port, web_port, _, tmp_path = running
    run = lambda user, *command, **kw: tae_client(tp_port, web_port, user, *command, **kw)  # noqa: E731
    for name in ("ann", "bob"):
        assert run(name, "create-account")["created"] is True
    again = run("ann", "create-account", expect=(1,))
    assert again["schema"] == "tae-client/error/1" and again["error"]["code"] == "refused"
    assert run("ann", "settings")["user"] == "ann"
    status = run("ann", "status")
    assert status["turn"] == 0 and status["seconds_left"] > 3000 and status["deadline"].endswith("+00:00")
    run("ann", "board")
    assert run("ann", "fleets")["fleets"]
    run("ann", "fleets", "--all")
    run("ann", "messages")

    me = api("GET", web_port, "/api/games/tae/me", "ann")
    public = api("GET", web_port, "/api/games/tae")
    free = [s["id"] for s in public["systems"] if s["terrain"] == "habitable" and s["colony"] is None]
    settlers = [f["fleet"] for f in me["hand"] if f["kind"] != "mining"]
    inserted = run("ann", "order", "insert", str(settlers[0]), "Colonize", str(free[0]))
    assert inserted["inserted"] and inserted["slot"] == 0
    assert run("ann", "order", "probe", str(settlers[1]), "Colonize", str(free[5]))["accepted"]
    assert len(run("ann", "orders")["orders"]) == 1
    assert run("ann", "order", "remove", str(settlers[0]))["removed"] == [0]
    turn = tmp_path / "turn.json"
    turn.write_text(json.dumps({"orders": [{"fleet": settlers[0], "order": "Colonize", "target": free[0]}]}))
    assert run("ann", "submit", "--dry-run", str(turn))["ok"]
    assert run("ann", "submit", str(turn))["ok"]
    refused = turn.with_name("refused.json")
    refused.write_text(json.dumps({"orders": [{"fleet": settlers[0], "order": "Colonize", "target": 0}]}))
    report = run("ann", "submit", str(refused), expect=(1,))
    assert report["schema"] == "tae-client/submit/1" and not report["ok"]  # the report, with its error
    assert run("ann", "order", "clear")["removed"] == 1
    assert run("ann", "finish") == {"schema": "tae-client/finish/1", "finished": True, "turn": 0}
    waited = run("ann", "wait", "--after-turn", "0", "--timeout", "0.5", expect=(5,))
    assert waited["error"]["code"] == "timeout"

    assert run("bob", "vacation", "2")["seat"] == "on vacation"
    assert run("bob", "back")["seat"] == "playing"
    run("bob", "notify", "show", expect=(0, 1))
    assert run("bob", "passwd", "--new-password-stdin", input="a-new-password\n")["changed"]
    refused_login = run("bob", "status", expect=(1,))
    assert refused_login["error"]["code"] == "refused"
    assert run("bob", "resign", "--yes", password="a-new-password")["seat"] == "resigned"

    usage = run("ann", "order", "insert", expect=(2,))
    assert usage["error"]["code"] == "usage"


def test_a_connection_failure_is_a_document_too(tmp_path):
    port = free_port()
    done = CliRunner().invoke(
        client_cli, ["--port", str(port), "--user", "a", "--password", "b", "status", "--json"]
    )
    assert done.exit_code == 3
    document = json_answer(done.stdout)
    assert document["error"] == {"code": "connection", "exit": 3, "message": document["error"]["message"]}


def test_every_tae_server_answer_follows_its_schema(running):
    tp_port, web_port, url, _ = running
    for name in ("ann", "bob"):
        api("POST", web_port, "/api/games/tae/accounts", body={"username": name, "password": PASSWORD})
    listed = json_answer(tae_server("list-games", "--json", "--database", url).stdout)
    assert [game["name"] for game in listed["games"]] == ["tae"]
    status = json_answer(tae_server("status", "tae", "--json", "--database", url).stdout)
    assert status["seconds_left"] > 3000 and status["deadline"].endswith("+00:00")
    assert [p["name"] for p in status["players"]] == ["ann", "bob"]
    assert json_answer(tae_server("nodes", "--json", "--database", url).stdout)["nodes"] == []
    missing = tae_server("status", "nosuch", "--json", "--database", url)
    assert missing.returncode == 1 and missing.stderr.startswith("tae-server: ")
    assert json_answer(missing.stdout)["error"]["code"] == "failed"
    usage = tae_server("status", "tae", "--json", "--bogus")
    assert usage.returncode == 2 and json_answer(usage.stdout)["error"] == {
        "code": "usage",
        "exit": 2,
        "message": "No such option '--bogus'.",
    }


def api(method, web_port, path, user=None, body=None):
    request = urllib.request.Request(f"http://127.0.0.1:{web_port}{path}", method=method)
    if body is not None:
        request.data = json.dumps(body).encode()
        request.add_header("Content-Type", "application/json")
    if user is not None:
        import base64

        request.add_header(
            "Authorization", "Basic " + base64.b64encode(f"{user}:{PASSWORD}".encode()).decode()
        )
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def _json_commands(group: click.Group, path: tuple[str, ...] = ()) -> dict[str, click.Command]:
    found = {}
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            found.update(_json_commands(command, (*path, name)))
        elif any(getattr(param, "name", None) == "as_json" for param in command.params):
            found["-".join((*path, name))] = command
    return found


def test_every_command_with_json_has_a_schema_and_every_schema_is_valid():
    from jsonschema import Draft202012Validator

    files = schema_files()
    expected = {f"tae-client/{name}/1" for name in _json_commands(client_cli)}
    expected |= {f"tae-server/{name}/1" for name in _json_commands(server_cli)}
    expected |= {"tae-client/error/1", "tae-server/error/1", "tae-client/common/1"}
    assert set(files) == expected
    for name, schema in files.items():
        Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["$id"] == f"urn:tpserver-tae:{name}"
    for program in ("tae-client", "tae-server"):
        check_document(
            {"schema": f"{program}/error/1", "error": {"code": "usage", "exit": 2, "message": "m"}}
        )
