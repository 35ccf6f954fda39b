"""server/web reads snapshots and writes through the game's methods: it never imports the game,
the TP listener, the database or the operator tools.

The players' notification channels are checked by `server.notifications.channels` (a reader of
snapshots too: tests/test_architecture.py keeps server/notifications off server.game.game)."""

from __future__ import annotations

import ast
from pathlib import Path

WEB = Path(__file__).resolve().parents[2] / "server" / "web"
#: The packages server/web may import: the shared values and the configuration's schema (the
#: limits), the renderers, itself, the notification channels, and the guards (the login brake
#: and the connection limits are shared with TP).
ALLOWED_SERVER_MODULES = {
    "server.model",
    "server.config",
    "server.views",
    "server.web",
    "server.notifications",
    "server.guards",
}


def imported_server_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:
                found.add("server.web")
            elif node.level == 2:
                found.add("server." + (node.module or "").split(".")[0])
            elif node.module and node.module.startswith("server"):
                found.add(".".join(node.module.split(".")[:2]))
        elif isinstance(node, ast.Import):
            found.update(".".join(a.name.split(".")[:2]) for a in node.names if a.name.startswith("server"))
    return found


def test_the_web_package_imports_only_values_views_and_guards():
    problems = [
        f"{path.name} imports {module}"
        for path in sorted(WEB.rglob("*.py"))
        for module in imported_server_modules(path)
        if module not in ALLOWED_SERVER_MODULES
    ]
    assert not problems, problems


def test_the_import_check_sees_a_forbidden_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from ..game import Game\nimport server.game.directory\nfrom . import pages\n")
    assert imported_server_modules(bad) == {"server.game", "server.web"}
    assert not {"server.game"} <= ALLOWED_SERVER_MODULES
