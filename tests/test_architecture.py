"""The dependency rules of ARCHITECTURE.md, enforced by reading every import."""

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OURS = {"ruleset", "protocol", "server", "clients"}

# The scenario tool (`python -m ruleset.scenario`) reads files and has a command line: it may
# use the project's file-schema library and its command-line library. The rules themselves
# (every other module of ruleset/, all the server imports) stay standard library only.
TOOL_EXCEPTIONS = {
    "ruleset/scenario/schema.py": {"msgspec"},
    "ruleset/scenario/__main__.py": {"click"},
}

# package -> (our packages it may import, third-party roots it may import; None = any)
# The clients may use the ruleset: the bot's computer player is `ruleset.ai`, fed with a seat
# view built from the wire (`clients.seat_frames`); the ruleset still imports nothing of ours.
ALLOWED = {
    "ruleset": (set(), set()),
    "protocol": (set(), {"construct"}),
    "server": ({"ruleset", "protocol"}, None),
    "clients": ({"protocol", "ruleset"}, None),
}


def imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def package_files(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_imports_follow_the_architecture(package):
    may_import_ours, third_party = ALLOWED[package]
    stdlib = set(sys.stdlib_module_names)
    problems = []
    for path in package_files(package):
        for root in imported_roots(path):
            if root == package or root in stdlib:
                continue
            if root in OURS:
                if root not in may_import_ours:
                    problems.append(f"{path.relative_to(ROOT)} imports {root}")
            elif third_party is not None and root not in third_party:
                if root in TOOL_EXCEPTIONS.get(path.relative_to(ROOT).as_posix(), ()):
                    continue
                problems.append(f"{path.relative_to(ROOT)} imports third-party {root}")
    assert not problems, "\n".join(problems)


def forbidden_calls(path: Path) -> list[str]:
    """Calls that make results depend on the clock, the global random state or string hashing."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id == "hash":
            found.append(f"{path.name}:{node.lineno} hash()")
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            module, name = func.value.id, func.attr
            if module in ("time", "datetime") or (module == "random" and name != "Random"):
                found.append(f"{path.name}:{node.lineno} {module}.{name}()")
    return found


def test_no_rules_module_imports_the_scenario_tool():
    """The tool may use third-party libraries only because nothing of the rules imports it."""
    problems = []
    for path in package_files("ruleset"):
        if path.relative_to(ROOT).parts[1] == "scenario":
            continue
        for name in imports_of(path, module_name(path)):
            if name == "ruleset.scenario" or name.startswith("ruleset.scenario."):
                problems.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not problems, "\n".join(problems)


def test_ruleset_never_uses_global_random_or_the_clock():
    problems = [p for path in package_files("ruleset") for p in forbidden_calls(path)]
    assert not problems, problems


def test_the_determinism_check_sees_violations(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import random, time\nrandom.shuffle(x)\ntime.time()\nhash('a')\nrandom.Random(1)\n")
    assert len(forbidden_calls(bad)) == 3


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, module: str) -> set[str]:
    """Every module (and module.name) that the file of `module` imports, relative ones resolved."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            prefix = ".".join(base + ([node.module] if node.module else []))
            found.add(prefix)
            found.update(f"{prefix}.{alias.name}" for alias in node.names)
    return found


READ_SIDE = ("server/views", "server/web", "server/notifications")
#: The write side: `Game` and its parts, the package server/game/.
WRITE_SIDE = ("server.game",)


def game_service_imports(path: Path, module: str) -> list[str]:
    return [n for n in imports_of(path, module) if any(n == w or n.startswith(w + ".") for w in WRITE_SIDE)]


@pytest.mark.parametrize("folder", READ_SIDE)
def test_the_read_side_never_imports_the_game_service(folder):
    """Readers render from snapshots (server.model.snapshot); only the write side knows server.game."""
    problems = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in sorted((ROOT / folder).rglob("*.py"))
        for name in game_service_imports(path, module_name(path))
    ]
    assert not problems, "\n".join(problems)


def test_the_read_side_check_sees_violations(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from ..game.game import Game\nfrom .. import game\nfrom ..model.snapshot import GameSnapshot\n"
    )
    assert sorted(game_service_imports(bad, "server.views.bad")) == [
        "server.game",
        "server.game.game",
        "server.game.game.Game",
    ]
    init = tmp_path / "__init__.py"
    init.write_text("from server.game.seats import Seats\n")
    assert sorted(game_service_imports(init, "server.views")) == [
        "server.game.seats",
        "server.game.seats.Seats",
    ]


# Reading the clock: time.time() and friends; the edge (where the server starts and the
# command line runs) may read it, every other module takes `now` or an injected clock.
CLOCK_READS = {
    "time": {"time", "monotonic", "perf_counter", "time_ns"},
    "datetime": {"now", "utcnow", "today"},
}
CLOCK_EDGE = {"server/cli/options.py", "server/cli/runner.py"}


def clock_reads(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        value = node.value
        owner = value.id if isinstance(value, ast.Name) else getattr(value, "attr", None)
        if owner in CLOCK_READS and node.attr in CLOCK_READS[owner]:
            found.add(f"{path.name}:{node.lineno} {owner}.{node.attr}")
    return sorted(found)


def test_server_code_reads_the_clock_only_at_the_edge():
    problems = [
        problem
        for path in package_files("server")
        if path.relative_to(ROOT).as_posix() not in CLOCK_EDGE
        for problem in clock_reads(path)
    ]
    assert not problems, "\n".join(problems)


def test_the_clock_check_sees_violations(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import time, datetime\nx = time.time()\ny = datetime.datetime.now()\nz = time.sleep(1)\n")
    assert clock_reads(bad) == ["bad.py:2 time.time", "bad.py:3 datetime.now"]


def test_the_checker_sees_violations(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import server\nfrom protocol.frames import X\nimport os\n")
    assert imported_roots(bad) == {"server", "protocol", "os"}


# -- import circles ------------------------------------------------------------------------------


def module_graph(package: str) -> dict[str, set[str]]:
    """Each module of `package` (a dotted name) → the modules of ours it imports, wherever the
    import stands (inside a function or under TYPE_CHECKING too: a circle hidden in a function
    is still a circle). `from pkg import name` imports the module `pkg.name` when there is one,
    else `pkg` itself."""
    files = {module_name(path): path for path in package_files(package)}

    def owner(name: str) -> str:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name

    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(owner(alias.name) for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                prefix = ".".join(
                    (base[: len(base) - node.level + 1] if node.level else [])
                    + ([node.module] if node.module else [])
                )
                for alias in node.names:
                    full = f"{prefix}.{alias.name}"
                    targets.add(full if full in files else owner(prefix))
        graph[module] = {target for target in targets if target and target != module}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_no_import_circles(package):
    """No module imports itself back through others, in any package."""
    assert circles(module_graph(package)) == []


def test_the_circle_check_sees_circles():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def package_graph(graph: dict[str, set[str]], depth: int = 2) -> dict[str, set[str]]:
    """The module graph seen from the packages: `server.web.api` is `server.web` at depth 2."""

    def package(module: str) -> str:
        return ".".join(module.split(".")[:depth])

    packages: dict[str, set[str]] = {}
    for module, targets in graph.items():
        packages.setdefault(package(module), set()).update(
            package(target) for target in targets if package(target) != package(module)
        )
    return packages


def test_no_circles_between_the_server_packages():
    """server/'s packages form layers (model at the bottom, app at the top): no package imports
    one that imports it back, through any module."""
    assert circles(package_graph(module_graph("server"))) == []
