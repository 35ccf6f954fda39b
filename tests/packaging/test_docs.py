"""docs/ stays true: the diagrams are what the rules give, the examples play as the text says,
and every link in README.md and docs/ leads to a file of the repository or to an http(s)
address (a clone from a forge has nothing beside the repository)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from urllib.parse import unquote

import pytest

from ruleset import DEFAULT_BOARD
from ruleset.scenario.__main__ import run_file
from ruleset.scenario.play import play
from ruleset.scenario.result import result

from .docs_diagrams import BOARD_SVG, DOCS, EXAMPLES, ROOT, board_svg, example_diagrams
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


# What a clone of the repository has: README.md and docs/ must link inside it (or to the web).
MARKDOWN = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
FENCED = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
CODE_SPAN = re.compile(r"(`+).+?\1", re.S)
INLINE_LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.M)
AUTOLINK = re.compile(r"<([A-Za-z][A-Za-z0-9+.-]*:[^>\s]*)>")
HTML_LINK = re.compile(r"""<(?:a|img)\b[^>]*?\b(?:href|src)=["']([^"']+)["']""", re.I)


def link_targets(text: str) -> list[str]:
    """Every link target of a Markdown text (inline, reference, autolinks, HTML a/img), outside
    code blocks and code spans (which only show text)."""
    prose = CODE_SPAN.sub("", FENCED.sub("", text))
    return [
        target
        for pattern in (INLINE_LINK, REFERENCE_LINK, AUTOLINK, HTML_LINK)
        for target in pattern.findall(prose)
    ]


def files_of_the_repository() -> set[Path] | None:
    """The files git tracks (what a clone has), or None outside a git checkout."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    files = {(ROOT / name).resolve() for name in listed.decode().split("\0") if name}
    return files | {parent for path in files for parent in path.parents}


def test_the_link_check_sees_links_and_ignores_code():
    text = '[a](docs/web.md) ![b](x.png "t") <https://e.org/>\n[r]: ../shared/x.md\n`[c](no.md)`\n'
    text += '```\n[d](no.md)\n```\n<a href="y.md">y</a>'
    assert link_targets(text) == ["docs/web.md", "x.png", "../shared/x.md", "https://e.org/", "y.md"]


@pytest.mark.parametrize("path", MARKDOWN, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_leads_to_a_file_of_the_repository_or_to_the_web(path):
    text = path.read_text()
    tracked = files_of_the_repository()
    for target in link_targets(text):
        if re.match(r"https?://", target):
            continue
        assert not re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", target), (
            f"{path.name} links to {target}: neither a file of the repository nor an http(s) address"
        )
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / unquote(file_part)).resolve() if file_part else path
        assert linked.is_relative_to(ROOT), f"{path.name} links to {target}, outside the repository"
        assert linked.exists(), f"{path.name} links to {target}, which does not exist"
        assert tracked is None or linked in tracked, (
            f"{path.name} links to {target}, which git does not track"
        )
        if anchor and linked.suffix == ".md":
            assert anchor in anchors(linked), f"{path.name} links to {target}: no such heading"
    assert "../shared" not in text, f"{path.name} points outside the repository"
