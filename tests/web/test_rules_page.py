"""/rules: docs/rules.md rendered once, safely, with its board diagram and example files."""

from __future__ import annotations

import re

from server.web.rules import RulesBook, docs_folder, render_rules

from .helpers import Client, world


def test_the_rules_page_is_docs_rules_md_with_working_anchors_and_diagrams():
    _, _, site = world()
    client = Client(site)
    page = client.get("/rules")
    assert page.status == 200 and page.header("content-type").startswith("text/html")
    text = page.text
    assert "<h1>Playing TaE: the rules for players</h1>" in text
    assert '<img src="/rules/diagrams/board.svg" alt="The default board"' in text
    # the document's own #links lead to its headings
    for target in set(re.findall(r'href="#([a-z0-9-]+)"', text)):
        assert f'id="{target}"' in text, target
    assert 'href="/rules/examples/regions.toml"' in text
    assert "<table>" in text and text.count("<pre><code>") >= 10  # tables and the example positions
    board = client.get("/rules/diagrams/board.svg")
    assert board.status == 200 and board.header("content-type").startswith("image/svg+xml")
    example = client.get("/rules/examples/regions.toml")
    assert example.status == 200 and example.header("content-type").startswith("text/plain")
    listing = client.get("/rules/examples/").text
    assert 'href="/rules/examples/bombing.toml"' in listing


def test_every_page_links_the_rules():
    _, _, site = world()
    client = Client(site)
    for path in ("/", "/games/Nebula", "/games/Nebula/history", "/rules", "/nowhere"):
        assert '<a href="/rules">Rules</a>' in client.get(path).text, path


def test_only_the_linked_files_are_served():
    _, _, site = world()
    client = Client(site)
    for path in (
        "/rules/diagrams/nothing.svg",
        "/rules/examples/regions.md",
        "/rules/../rules.md",
        "/rules/examples/..%2F..%2Fpyproject.toml",
        "/rules/screenshots/map.png",
    ):
        assert client.get(path).status == 404, path


def test_raw_html_in_the_document_is_not_passed_through():
    html = render_rules('# T\n\n<script>alert(1)</script>\n\n[x](javascript:alert(1)) <b onclick="x">b</b>\n')
    assert "<script>" not in html and "<b onclick" not in html and 'href="javascript:' not in html
    assert "&lt;script&gt;" in html


def test_the_document_is_rendered_once():
    book = RulesBook(docs_folder())
    first = book.html()
    assert first is not None and book.html() is first
