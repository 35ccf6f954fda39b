"""Run every benchmark module in this folder: `python -m tests.benchmarks` (or `make bench`).

Each module named `bench_*.py` has a `main()` that prints its figures.
"""

import importlib
import pkgutil
import sys
from pathlib import Path


def main(selected: list[str]) -> None:
    here = Path(__file__).parent
    names = sorted(m.name for m in pkgutil.iter_modules([str(here)]) if m.name.startswith("bench_"))
    for name in names:
        if selected and not any(s in name for s in selected):
            continue
        print(f"== {name}", flush=True)
        importlib.import_module(f"tests.benchmarks.{name}").main()


if __name__ == "__main__":
    main(sys.argv[1:])
