"""Loading the captured sessions of ../shared/fixtures/tp-captures (README there).

Each line of a capture is one TCP read; ``reads`` returns them in order, and ``frames`` cuts each
direction with our own ``Deframer``, fed read by read exactly as the server would be.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from protocol import Deframer, Frame

ROOT = Path(__file__).resolve().parents[2]
CAPTURE_DIR = Path(os.environ.get("TAE_CAPTURES", ROOT.parent / "shared" / "fixtures" / "tp-captures"))

CPPTEXT_TP04 = "cpptext-tp04-conn1.jsonl"
JAVA_TP04 = "java-tp04-conn1.jsonl"
JAVA_TP03 = "java-tp03-conn1.jsonl"
PY3_TP03 = "py3-tp03-conn1.jsonl"
ALL = (CPPTEXT_TP04, JAVA_TP04, JAVA_TP03, PY3_TP03)
TP04_CAPTURES = (CPPTEXT_TP04, JAVA_TP04)
TP03_CAPTURES = (JAVA_TP03, PY3_TP03)

CLIENT = "C->S"
SERVER = "S->C"


def capture_path(name: str) -> Path:
    path = CAPTURE_DIR / name
    if not path.exists():
        pytest.skip(f"capture {path} not available (set TAE_CAPTURES)")
    return path


def reads(name: str) -> list[tuple[str, bytes]]:
    """(direction, bytes) for every line of a capture."""
    with capture_path(name).open(encoding="utf-8") as lines:
        return [(record["dir"], bytes.fromhex(record["hex"])) for record in map(json.loads, lines)]


def stream(name: str, direction: str) -> bytes:
    """Everything one side sent, concatenated."""
    return b"".join(data for side, data in reads(name) if side == direction)


def frames(name: str, direction: str) -> list[Frame]:
    """The frames one side sent, cut by a Deframer fed one TCP read at a time."""
    deframer = Deframer()
    result: list[Frame] = []
    for side, data in reads(name):
        if side == direction:
            result.extend(deframer.frames(data))
    assert deframer.buffered == 0, f"{name} {direction}: bytes left after the last frame"
    return result
