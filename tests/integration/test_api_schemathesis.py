"""Schemathesis against a real `tae-server serve` on 127.0.0.1: it reads the served OpenAPI
document (GET /api/openapi.json) and sends generated requests, valid and invalid, to every
operation, logged in as a player of the game. It passes when no answer is a 5xx, every answer's
status, content type, headers and body are ones the document describes, and no request the
document forbids is accepted.

Bounded inside `make test` (TAE_SCHEMATHESIS_SECONDS, 60 s; a few examples per operation, a
fixed seed); `make schemathesis` runs it longer with more examples (docs/web.md).

Not checked: `positive_data_acceptance` (that every request the document allows succeeds):
the game refuses valid-looking requests by its rules and its configuration (a password shorter
than the server's minimum, an order the turn does not allow), with a 4xx the document describes;
nor `use_after_free` (that what a DELETE removed is gone): DELETE /notifications empties the
caller's list of channels, and DELETE /vacation ends a vacation, so reading them afterwards is
still an answer (an empty list, the seat), as the document says.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import urllib.request

import pytest

from tests.support.openapi_check import openapi_document
from tests.support.servers import free_port, serve_process, wait_for_port

from .test_web_server import serve_args

SECONDS = int(os.environ.get("TAE_SCHEMATHESIS_SECONDS", "60"))
EXAMPLES = int(os.environ.get("TAE_SCHEMATHESIS_EXAMPLES", "5"))


def _create_account(web_port: int, name: str, password: str) -> None:
    request = urllib.request.Request(
        f"http://127.0.0.1:{web_port}/api/games/tae/accounts",
        data=f'{{"username": "{name}", "password": "{password}"}}'.encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert answer.status == 201


@pytest.mark.timeout(SECONDS + 240)
def test_schemathesis_finds_nothing(tmp_path):
    tp_port, web_port = free_port(), free_port()
    # games against the computer offered: POST /api/games starts some (at most 2 for ann)
    args = serve_args(tp_port, web_port, "--seed", "1", "--limit", "computer_games_per_account=2")
    args[args.index("--turn-length") + 1] = "1h"
    with serve_process(tmp_path, args, tp_port) as process:  # its log: tmp_path/server.log
        wait_for_port(web_port, process)
        for name in ("ann", "bob"):
            _create_account(web_port, name, f"{name}-password")
        config = tmp_path / "schemathesis.toml"
        config.write_text('[parameters]\n"path.name" = "tae"\n')
        # ann tries every operation but the two that end her session for good (a resignation, a
        # new password); bob then tries those two
        main = schemathesis(tmp_path, config, web_port, "ann", SECONDS * 3 // 4, "--exclude-path-regex", LAST)
        last = schemathesis(tmp_path, config, web_port, "bob", SECONDS // 4, "--include-path-regex", LAST)
    logged = (tmp_path / "server.log").read_text()
    assert "Traceback" not in logged and 'HTTP/1.1" 5' not in logged, logged[-3000:]
    operations = sum(
        method in ("get", "put", "post", "delete")
        for path, item in openapi_document()["paths"].items()
        for method in item
        if path != "/api/openapi.json"  # Schemathesis leaves out the document's own address
    )
    tried = [int(found) for found in re.findall(r"Operations:\s+(\d+) selected", main + last)]
    assert sum(tried) == operations, (main, last)  # every operation was tried


LAST = "/(resign|password)$"


def schemathesis(cwd, config, web_port: int, user: str, seconds: int, *only: str) -> str:
    """Run Schemathesis as `user`; its report, once it passed."""
    command = [
        sys.executable,
        "-c",
        "from schemathesis.cli import schemathesis; schemathesis()",
        "--config-file",
        str(config),
        "--no-color",
        "run",
        f"http://127.0.0.1:{web_port}/api/openapi.json",
        "--auth",
        f"{user}:{user}-password",
        "--checks",
        "all",
        "--exclude-checks",
        "positive_data_acceptance,use_after_free",
        "--max-examples",
        str(EXAMPLES),
        "--max-time",
        str(max(1, seconds)),
        "--seed",
        "1",
        "--workers",
        "1",
        "--request-timeout",
        "10",
        *only,
    ]
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=seconds + 180)
    report = done.stdout[-6000:] + done.stderr[-2000:]
    assert done.returncode == 0, report
    assert "passed" in done.stdout, report
    return done.stdout
