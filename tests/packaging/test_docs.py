"""docs/ stays true: the diagrams are what the rules give, the examples play as the text says,
and every link between the documents leads somewhere."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ruleset import DEFAULT_BOARD
from ruleset.scenario.__main__ import run_file
from ruleset.scenario.play import play
from ruleset.scenario.result import result

from .docs_diagrams import BOARD_SVG, DOCS, EXAMPLES, board_svg, example_diagrams
from .docs_scenarios import load

RULES = DOCS / "rules.md"
EXAMPLE_FILES = sorted(EXAMPLES.glob("*.toml"))


def code_blocks(text: str) -> list[str]:
    return [block.strip("\n") for block in re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S)]


def test_the_board_diagram_is_the_default_board():
    assert BOARD_SVG.read_text() == board_svg(DEFAULT_BOARD), (
        "docs/diagrams/board.svg is stale: run python -m tests.packaging.docs_diagrams"
    )
    cells = re.findall(r'data-x="(\d+)" data-y="(\d+)" data-terrain="(.)"', BOARD_SVG.read_text())
    assert {(int(x), int(y)): t for x, y, t in cells} == {
        xy: t for xy, t in zip(DEFAULT_BOARD.coords, DEFAULT_BOARD.terrain, strict=True)
    }


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_every_example_diagram_in_the_rules_is_what_the_rules_give(path):
    blocks = code_blocks(RULES.read_text())
    for moment, diagram in example_diagrams(path).items():
        assert diagram in blocks, f"{path.name} {moment} is not in docs/rules.md as:\n{diagram}"


def test_every_example_is_linked_from_the_rules():
    text = RULES.read_text()
    for path in EXAMPLE_FILES:
        assert f"(examples/{path.name})" in text, path.name


def scores(path: Path) -> dict[str, dict[str, int]]:
    return {p["name"]: p["scores"] for p in run_file(str(path))["players"]}


def test_the_examples_end_as_the_rules_say():
    scoring = scores(EXAMPLES / "scoring.toml")
    assert scoring["Bob"]["money"] == 1 and scoring["Ann"]["technology"] == 1
    assert sum(scoring["Ann"].values()) + sum(scoring["Bob"].values()) == 2
    assert scores(EXAMPLES / "external_conflict.toml")["Bob"]["people"] == 3
    assert scores(EXAMPLES / "internal_conflict.toml")["Ann"]["technology"] == 1
    assert scores(EXAMPLES / "artifacts.toml")["Ann"]["artifacts"] == 1
    final = run_file(str(EXAMPLES / "final_score.toml"))
    assert final["phase"] == "over"
    assert final["result"] == {"final": {"Ann": 3, "Bob": 3}, "winners": ["Ann"]}
    for name in ("scoring", "external_conflict", "internal_conflict", "bombing", "artifacts"):
        assert run_file(str(EXAMPLES / f"{name}.toml"))["phase"] == "normal", f"{name}: the game ended"


def test_the_example_of_the_scenario_format_plays():
    text = (DOCS / "scenario-format.md").read_text()
    example = next(block for block in code_blocks(text) if block.startswith("title ="))
    scenario = load(example)
    play(scenario)
    out = result(scenario)
    shown = json.loads(next(block for block in code_blocks(text) if block.startswith('{\n  "turn"')))
    assert shown == {key: out[key] for key in shown}


def anchors(path: Path) -> set[str]:
    """GitHub's anchors for the headings of a Markdown file."""
    found = set()
    for heading in re.findall(r"^#+ (.+)$", path.read_text(), flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        found.add(slug)
    return found


@pytest.mark.parametrize("path", sorted(DOCS.glob("*.md")), ids=lambda p: p.name)
def test_every_link_in_the_docs_leads_somewhere(path):
    text = path.read_text()
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+://", target) or target.startswith("mailto:"):
            continue
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        assert linked.exists(), f"{path.name} links to {target}, which does not exist"
        if anchor and linked.suffix == ".md":
            assert anchor in anchors(linked), f"{path.name} links to {target}: no such heading"
    assert "../shared" not in text, f"{path.name} points outside the repository"
