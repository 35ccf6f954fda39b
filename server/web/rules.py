"""The rules page, /rules: docs/rules.md as HTML, with its board diagram and its example files.

The document is rendered once per process by markdown-it-py (CommonMark with tables; raw HTML in
the document is not passed through, and markdown-it refuses `javascript:` and the like in
links), with an id on each heading (mdit-py-plugins' anchors, the slugs GitHub makes, so that
the document's own `#links` work). Links and images relative to docs/ lead to /rules/…:
`diagrams/board.svg` (made from the ruleset by `python -m tests.packaging.docs_diagrams`, which
tests/packaging/test_docs.py keeps current) and the scenario files of `examples/`, which the test
suite plays.

docs/ is found next to the packages in a source checkout (and an editable install), else where
the wheel installs it (`share/tpserver-tae/docs` under the environment's prefix; pyproject.toml's
data-files).
"""

from __future__ import annotations

import re
import sys
import sysconfig
from pathlib import Path

from markdown_it import MarkdownIt
from mdit_py_plugins.anchors import anchors_plugin

SOURCE_DOCS = Path(__file__).resolve().parents[2] / "docs"
INSTALLED_DOCS = Path("share") / "tpserver-tae" / "docs"
#: What /rules/… serves: these folders of docs/, files with these suffixes and plain names.
SERVED = {
    "diagrams": {".svg": b"image/svg+xml; charset=utf-8"},
    "examples": {".toml": b"text/plain; charset=utf-8"},
}
PLAIN_NAME = re.compile(r"^[A-Za-z0-9_-]+\.[a-z]+$")


def docs_folder() -> Path | None:
    """Where docs/rules.md is: the source tree's docs/, or the installed copy; None if neither."""
    prefixes = {Path(sysconfig.get_path("data")), Path(sys.prefix)}
    for folder in (SOURCE_DOCS, *(prefix / INSTALLED_DOCS for prefix in prefixes)):
        if (folder / "rules.md").is_file():
            return folder
    return None


def render_rules(text: str) -> str:
    """The Markdown of docs/rules.md as HTML (links relative to docs/ made to lead to /rules/)."""
    md = MarkdownIt("commonmark", {"html": False, "typographer": False}).enable("table")
    md.use(anchors_plugin, min_level=2, max_level=3, permalink=False)
    tokens = md.parse(text)
    for token in tokens:
        for child in [token, *(token.children or [])]:
            for attribute in ("href", "src"):
                value = child.attrGet(attribute)
                if isinstance(value, str) and _relative(value):
                    child.attrSet(attribute, "/rules/" + value.removeprefix("./"))
    return md.renderer.render(tokens, md.options, {})


def _relative(link: str) -> bool:
    return not (link.startswith(("#", "/")) or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", link))


class RulesBook:
    """docs/rules.md rendered, once; and the files it links to."""

    def __init__(self, folder: Path | None = None):
        self.folder = folder if folder is not None else docs_folder()
        self._html: str | None = None

    def html(self) -> str | None:
        """The rules as HTML, or None when this installation has no docs/rules.md."""
        if self._html is None and self.folder is not None:
            self._html = render_rules((self.folder / "rules.md").read_text(encoding="utf-8"))
        return self._html

    def listing(self, folder: str) -> list[str] | None:
        """The files of a folder the rules link to (`examples/`), or None."""
        types = SERVED.get(folder)
        if self.folder is None or types is None or not (self.folder / folder).is_dir():
            return None
        return sorted(
            path.name
            for path in (self.folder / folder).iterdir()
            if path.suffix in types and PLAIN_NAME.match(path.name)
        )

    def file(self, folder: str, name: str) -> tuple[bytes, bytes] | None:
        """(content type, bytes) of a file the rules link to; None for anything else."""
        types = SERVED.get(folder)
        if self.folder is None or types is None or not PLAIN_NAME.match(name):
            return None
        content_type = types.get(Path(name).suffix)
        path = self.folder / folder / name
        if content_type is None or not path.is_file():
            return None
        return content_type, path.read_bytes()
