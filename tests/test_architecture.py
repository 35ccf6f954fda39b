"""The dependency rules of ARCHITECTURE.md, enforced by reading every import."""

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OURS = {"ruleset", "protocol", "server", "clients"}

# package -> (our packages it may import, third-party roots it may import; None = any)
ALLOWED = {
    "ruleset": (set(), set()),
    "protocol": (set(), {"construct"}),
    "server": ({"ruleset", "protocol"}, None),
    "clients": ({"protocol"}, None),
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


def test_ruleset_never_uses_global_random_or_the_clock():
    problems = [p for path in package_files("ruleset") for p in forbidden_calls(path)]
    assert not problems, problems


def test_the_determinism_check_sees_violations(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import random, time\nrandom.shuffle(x)\ntime.time()\nhash('a')\nrandom.Random(1)\n")
    assert len(forbidden_calls(bad)) == 3


def test_the_checker_sees_violations(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import server\nfrom protocol.frames import X\nimport os\n")
    assert imported_roots(bad) == {"server", "protocol", "os"}
