"""The final standing as each surface shows it, read back into one comparable shape.

Every surface (the GAME OVER! message as a client library reads it, `tae-client --json status`,
the JSON API, the game page's ranking table, the `game_over` notification) is reduced here to
`StandingLine`s: name, rank, whether the place is shared, final score, the four categories after
the alien artifacts were shared out, and how many artifacts there were. Tests then compare the
surfaces with each other and with `ruleset.final_standing`, line for line and in order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any

CATEGORIES = ("money", "technology", "people", "raw_materials")


@dataclass(frozen=True, slots=True)
class StandingLine:
    name: str
    rank: int
    shared: bool
    final: int
    after: tuple[int, int, int, int]
    artifacts: int


def lines_of_ruleset(standing) -> list[StandingLine]:
    """The lines of a `ruleset.FinalStanding`."""
    return [StandingLine(p.name, p.rank, p.shared, p.final, p.after, p.artifacts) for p in standing.places]


def lines_of_document(document: Mapping[str, Any]) -> list[StandingLine]:
    """The lines of a standing document (`server.views.standing.standing_document`: the API's
    and the notifications' `standing`)."""
    return [
        StandingLine(
            place["name"],
            place["rank"],
            place["shared"],
            place["final"],
            _categories(place["categories_after"]),
            place["categories_before"]["artifacts"],
        )
        for place in document["places"]
    ]


def before_of_document(document: Mapping[str, Any]) -> dict[str, tuple[int, ...]]:
    """Each player's five scores before the artifacts were shared out, by name."""
    return {
        place["name"]: tuple(place["categories_before"][key] for key in (*CATEGORIES, "artifacts"))
        for place in document["places"]
    }


def lines_of_client(game_over: Mapping[str, Any]) -> list[StandingLine]:
    """The lines of tae-client's `game_over` (`--json status`, from the GAME OVER! message)."""
    return [
        StandingLine(
            row["name"],
            row["rank"],
            row["shared"],
            row["final"],
            _categories(row["categories_after"]),
            row["artifacts"],
        )
        for row in game_over["ranking"]
    ]


def _categories(named: Mapping[str, int]) -> tuple[int, int, int, int]:
    money, technology, people, raw = (named[key] for key in CATEGORIES)
    return money, technology, people, raw


# -- the game page's ranking table ---------------------------------------------------------------


class _RankingTable(HTMLParser):
    """Collects the cells of every `tr.place` in `section.ranking`, by their class."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict[str, str]] = []
        self._section_depth = 0
        self._depth = 0
        self._row: dict[str, str] | None = None
        self._cell: str | None = None
        self._hidden_depth = 0  # inside an element hidden from readers (a player's badge)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = (dict(attrs).get("class") or "").split()
        if tag in ("br", "img", "input", "meta", "link", "rect"):
            return
        self._depth += 1
        if dict(attrs).get("aria-hidden") == "true" and not self._hidden_depth:
            self._hidden_depth = self._depth
        if tag == "section" and "ranking" in classes:
            self._section_depth = self._depth
        elif self._section_depth and tag == "tr" and "place" in classes:
            self._row = {}
        elif self._row is not None and tag == "td":
            self._cell = " ".join(classes)
            self._row[self._cell] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag in ("br", "img", "input", "meta", "link", "rect"):
            return
        if tag == "td":
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.rows.append({key: " ".join(value.split()) for key, value in self._row.items()})
            self._row = None
        elif tag == "section" and self._depth == self._section_depth:
            self._section_depth = 0
        if self._depth == self._hidden_depth:
            self._hidden_depth = 0
        self._depth -= 1

    def handle_data(self, data: str) -> None:
        if self._row is not None and self._cell is not None and not self._hidden_depth:
            self._row[self._cell] += data


def ranking_table(html: str) -> list[dict[str, str]]:
    """The rows of the page's final ranking: each a dict of cell class → text."""
    parser = _RankingTable()
    parser.feed(html)
    parser.close()
    return parser.rows


def lines_of_page(html: str) -> tuple[list[StandingLine], dict[str, tuple[int, ...]]]:
    """The lines of the ranking table, and each player's scores before the artifacts (the
    table's "before artifacts" columns)."""
    lines, before = [], {}
    for row in ranking_table(html):
        rank_text = row["rank"]
        name = row["name"].replace("🏆", "").strip()
        after = _categories({key: int(row[f"after {key}"]) for key in CATEGORIES})
        scores = tuple(int(row[f"before {key}"]) for key in (*CATEGORIES, "artifacts"))
        lines.append(
            StandingLine(
                name,
                int(rank_text.split()[0]),
                "(shared)" in rank_text,
                int(row["final"]),
                after,
                scores[4],
            )
        )
        before[name] = scores
    return lines, before


def names(lines: Iterable[StandingLine]) -> list[str]:
    return [line.name for line in lines]
