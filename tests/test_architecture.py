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


def test_ruleset_never_uses_global_random_or_the_clock():
    forbidden = ("time.time(", "datetime.now(", "random.random(", "random.randint(", "random.choice(",
                 "random.shuffle(", "random.seed(", "hash(")
    problems = []
    for path in package_files("ruleset"):
        text = path.read_text(encoding="utf-8")
        problems.extend(f"{path.name}: {needle}" for needle in forbidden if needle in text)
    assert not problems, problems


def test_the_checker_sees_violations(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import server\nfrom protocol.frames import X\nimport os\n")
    assert imported_roots(bad) == {"server", "protocol", "os"}
