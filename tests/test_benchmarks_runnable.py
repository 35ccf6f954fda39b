"""Every benchmark runs both ways the README documents: `python -m tests.benchmarks NAME` (which
calls its `main()`) and `python -m tests.benchmarks.bench_NAME` (which needs the `__main__` guard)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

BENCHMARKS = sorted((Path(__file__).parent / "benchmarks").glob("bench_*.py"))


@pytest.mark.parametrize("path", BENCHMARKS, ids=lambda p: p.stem)
def test_a_benchmark_has_main_and_runs_as_a_module(path):
    tree = ast.parse(path.read_text())
    assert any(isinstance(node, ast.FunctionDef) and node.name == "main" for node in tree.body)
    guards = [
        node
        for node in tree.body
        if isinstance(node, ast.If)
        and "__name__" in ast.unparse(node.test)
        and "__main__" in ast.unparse(node.test)
    ]
    assert guards, f'{path.name}: no `if __name__ == "__main__":` guard'
