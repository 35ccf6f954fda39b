"""One final standing on every surface: bots play small maps to GAME OVER against a real
server, and every place a player or an operator can read the result gives the same order, the
same (shared) ranks, the same final scores and the same categories.

The server is one ``tae-server serve`` subprocess for the module, with its TP, web and admin
listeners on 127.0.0.1; each Hypothesis example creates a game of its own on it
(``tae-server create-game`` with a small random map and seed), gives each player a webhook
channel, and lets 2–4 bots (``clients.bot.run_bots``) play it to the end. Then it reads:

* the GAME OVER! message as each player's client library reads it (``TaeGame.game_over``);
* ``tae-client --json status`` of each player;
* ``GET /api/games/NAME`` (``standing`` and the old ``ranking`` rows) and ``GET /api/games``;
* the game page's ranking table (the HTML, parsed);
* the ``game_over`` webhook each player's receiver got (payload, its ``text``);
* ``tae-server status --json`` and its text, and the admin protocol's ``status``.

and compares each with the ruleset's standing computed from the scores the game ended with.
Maps with at most two artifact systems end after the first turn, and a map of uninhabitable
systems only is a game nobody can score in: everybody shares first place.

The operator surfaces (``tae-server status``, admin ``status``) are read as they print them: the
JSON's ``standing`` document and ``winners``; the text's line per player, ``[shared ]rank R of
N[ (winner)], final score F`` with the categories after the artifacts on the line under it, and
``winners: …``.
"""

from __future__ import annotations

import base64
import itertools
import json
import re
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from clients import BlockingClient, Version
from clients.bot import format_results, run_bots
from clients.cli import cli as tae_client
from ruleset import EndReason, final_standing, new_game, parse_map
from ruleset.final_scoring import final_result
from ruleset.state import Phase as GamePhase
from ruleset.state import Player
from server.cli import cli as tae_server
from server.game.passwords import hash_password
from tests.admin.admin_client import AdminClient
from tests.integration.server_process import ServerProcess
from tests.support.json_schemas import json_answer
from tests.support.servers import free_port, wait_for_port
from tests.support.standing_lines import (
    StandingLine,
    before_of_document,
    lines_of_client,
    lines_of_document,
    lines_of_page,
    lines_of_ruleset,
)

pytestmark = pytest.mark.slow

HOST = "127.0.0.1"
PASSWORD = "secret-pw"
ADMIN, ADMIN_PASSWORD = "tpadm", "admin-secret"
NAMES = ("ann", "bob", "cid", "dee")
GAME_SECONDS = 40  # a small map's game takes a few seconds; a bound, not a wait
WEBHOOK_SECONDS = 15  # the outbox is written 50 ms after the end, the worker polls every second


# -- the server, a webhook receiver, and the calls ----------------------------------------------


class Receiver:
    """Webhooks on 127.0.0.1: every JSON POST is kept; `game_over` waits for a game's."""

    def __init__(self) -> None:
        self.posts: list[dict] = []
        self.changed = threading.Condition()
        receiver = self

        class Hook(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                with receiver.changed:
                    receiver.posts.append(json.loads(body))
                    receiver.changed.notify_all()
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.http = ThreadingHTTPServer((HOST, 0), Hook)
        self.port = self.http.server_address[1]
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def game_over(self, game: str, players: int) -> dict[str, dict]:
        """Each player's game_over payload of `game` (by name), once all `players` arrived."""

        def found() -> dict[str, dict]:
            return {p["player"]: p for p in self.posts if p.get("event") == "game_over" and p["game"] == game}

        with self.changed:
            if not self.changed.wait_for(lambda: len(found()) >= players, timeout=WEBHOOK_SECONDS):
                raise AssertionError(
                    f"game_over webhooks of {game}: {sorted(found())} in {WEBHOOK_SECONDS} s"
                )
            return found()

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()


@dataclass
class Served:
    root: Path
    database: str
    process: ServerProcess
    tp_port: int
    web_port: int
    admin_port: int
    receiver: Receiver

    def web(self, method: str, path: str, document=None, user: str | None = None):
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if user is not None:
            headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:{PASSWORD}".encode()).decode()
        data = None if document is None else json.dumps(document).encode()
        request = urllib.request.Request(
            f"http://{HOST}:{self.web_port}{path}", data=data, method=method, headers=headers
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                body, kind = answer.read().decode(), answer.headers.get_content_type()
        except urllib.error.HTTPError as error:
            raise AssertionError(f"{method} {path}: {error.code} {error.read().decode()}") from None
        return json.loads(body) if kind == "application/json" and body else body

    def tae_server(self, *args: str) -> str:
        result = CliRunner().invoke(tae_server, [*args, "--database", self.database])
        assert result.exit_code == 0, (args, result.output)
        return result.output

    def tae_client(self, name: str, game: str, version: Version, *args: str) -> str:
        base = ["--host", HOST, "--port", str(self.tp_port), "--timeout", "10"]
        base += ["--protocol", version.name.lower(), "--user", f"{name}@{game}", "--password", PASSWORD]
        result = CliRunner().invoke(tae_client, [*base, *args])
        # 0: done; the game being over is no error for status.
        assert result.exit_code == 0, (args, result.output)
        return result.stdout


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("standing")
    database = f"sqlite:///{root / 'tae.db'}"
    config = root / "tae.toml"
    receiver = Receiver()
    config.write_text(
        "[limits]\npassword_hash_cost = 10\naccounts_per_address = 0\n"  # every player is on 127.0.0.1
        "[notifications]\nreminder_lead = 0\nretry_base = 0.2\nretry_cap = 1.0\ngather = 0\n"
        'webhook_allow = ["127.0.0.1"]\n'  # the receiver of this test is on this host
        f'[admin.users]\n{ADMIN} = "{hash_password(ADMIN_PASSWORD, n=1024)}"\n'
    )
    web_port, admin_port = free_port(), free_port()
    process = ServerProcess(
        database,
        "--config",
        str(config),
        "--web",
        f"tcp:{web_port}:interface={HOST}",
        "--admin",
        f"tcp:{admin_port}:interface={HOST}",
        cwd=root,
    )
    tp_port = process.start()
    try:
        wait_for_port(web_port, process.process)
        wait_for_port(admin_port, process.process)
        yield Served(root, database, process, tp_port, web_port, admin_port, receiver)
    finally:
        process.terminate()
        receiver.close()


# -- the operator's surfaces, read through adapters (see the module docstring) --------------------


@dataclass(frozen=True)
class OperatorPlace:
    rank: int
    shared: bool
    of: int
    winner: bool
    final: int


_OPERATOR_PLACE = re.compile(
    r"(?P<shared>shared )?rank (?P<rank>\d+) of (?P<of>\d+)(?P<winner> \(winner\))?, "
    r"final score (?P<final>-?\d+)$"
)
_OPERATOR_LINE = re.compile(r"^\s+\d+\s+(?P<name>\S+)\s+(?P<place>(?:removed; )?(?:shared )?rank .*)$")
_OPERATOR_AFTER = re.compile(
    r"^\s+after artifacts: Money (?P<m>\d+), Technology (?P<t>\d+), People (?P<p>\d+), "
    r"Raw Materials (?P<r>\d+) \(before: .*\)$"
)


def _operator_place(words: str) -> OperatorPlace:
    match = _OPERATOR_PLACE.search(words)
    assert match is not None, words
    return OperatorPlace(
        int(match["rank"]),
        bool(match["shared"]),
        int(match["of"]),
        bool(match["winner"]),
        int(match["final"]),
    )


def operator_lines_from_json(document: dict) -> tuple[list[StandingLine], dict[str, tuple], set[str]]:
    """`tae-server status --json` of a finished game: its `standing` document (the one every
    surface renders), each player's five scores before the artifacts, and the winners."""
    standing = document["standing"]
    return lines_of_document(standing), before_of_document(standing), set(document["winners"])


def operator_places_from_text(
    text: str,
) -> tuple[dict[str, OperatorPlace], set[str], dict[str, tuple[int, int, int, int]]]:
    """The text `status` of `tae-server` or of the admin protocol: each player's place, the
    winners line, and the categories after the artifacts (the line under each player)."""
    places = {}
    winners: set[str] = set()
    after: dict[str, tuple[int, int, int, int]] = {}
    last = None
    for line in text.splitlines():
        if (match := _OPERATOR_LINE.match(line)) is not None:
            last = match["name"]
            places[last] = _operator_place(match["place"])
        elif (categories := _OPERATOR_AFTER.match(line)) is not None and last is not None:
            after[last] = tuple(int(categories[key]) for key in "mtpr")  # type: ignore[assignment]
        elif line.strip().startswith("winners:"):
            winners = {name.strip() for name in line.split(":", 1)[1].split(",")} - {"none"}
    return places, winners, after


def operator_view(lines: list[StandingLine]) -> dict[str, OperatorPlace]:
    return {
        line.name: OperatorPlace(line.rank, line.shared, len(lines), line.rank == 1, line.final)
        for line in lines
    }


# -- the games -------------------------------------------------------------------------------


@st.composite
def small_maps(draw) -> str:
    """A rectangular map of 3–6 × 2–4 systems: mostly habitable, some uninhabitable and some
    artifact systems (at most two end the game after its first turn)."""
    width, height = draw(st.integers(3, 6)), draw(st.integers(2, 4))
    cells = draw(st.lists(st.sampled_from("......MMAA"), min_size=width * height, max_size=width * height))
    return "".join("".join(cells[row * width : (row + 1) * width]) + "\n" for row in range(height))


_games = itertools.count(1)


def play_to_the_end(served: Served, map_text: str, seed: int, players: int, version: Version):
    game = f"standing{next(_games)}"
    names = NAMES[:players]
    map_path = served.root / f"{game}.txt"
    map_path.write_text(map_text)
    served.tae_server(
        "create-game",
        game,
        "--map",
        str(map_path),
        "--seed",
        str(seed),
        "--turn-length",
        "0",
        "--players-min",
        str(players),
    )
    for name in names:
        served.web("POST", f"/api/games/{game}/accounts", {"username": name, "password": PASSWORD})
        hook = f"http://{HOST}:{served.receiver.port}/{game}/{name}"
        served.web("PUT", f"/api/games/{game}/notifications", {"webhook": hook, "format": "json"}, user=name)
    results = run_bots(
        HOST,
        served.tp_port,
        names,
        PASSWORD,
        version,
        game=game,
        max_turns=80,
        timeout=10,
        turn_timeout=15,
        deadline=GAME_SECONDS,
    )
    assert all(result.ok for result in results), (
        format_results(results) + "\n" + "\n".join(served.process.lines[-20:])
    )
    return game, names


def reference_lines(document: dict, map_text: str) -> list[StandingLine]:
    """The ruleset's standing of players who ended with the scores the API says they had
    (`categories_before`): what every surface must show."""
    before = before_of_document(document)
    ids = {place["name"]: place["player"] for place in document["places"]}
    players = tuple(Player(ids[name], name, 0, 0, scores) for name, scores in before.items())
    state = new_game(parse_map(map_text), 1)
    over = replace(
        state,
        players=tuple(sorted(players, key=lambda p: p.id)),
        phase=GamePhase.OVER,
        result=final_result(players, EndReason(document["reason"])),
    )
    standing = final_standing(over)
    assert standing is not None
    return lines_of_ruleset(standing)


ALL_UNINHABITABLE = "MMMM\nMMMM\n"  # nobody can place a leader, so nobody scores: a tie of all


@pytest.mark.timeout(240)
@settings(
    max_examples=3,
    deadline=None,
    phases=(Phase.explicit, Phase.reuse, Phase.generate),  # a shrink would replay whole games
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    map_text=small_maps(),
    seed=st.integers(1, 10_000),
    players=st.integers(2, 4),
    version=st.sampled_from([Version.TP04, Version.TP03]),
)
@example(map_text=ALL_UNINHABITABLE, seed=5, players=4, version=Version.TP04)
@example(map_text="..A.M.\n.M..A.\nA...M.\n", seed=5, players=4, version=Version.TP03)
def test_every_surface_gives_the_same_standing(served, map_text, seed, players, version):
    game, names = play_to_the_end(served, map_text, seed, players, version)

    document = served.web("GET", f"/api/games/{game}")
    standing = document["standing"]
    assert standing is not None and document["over"]
    expected = reference_lines(standing, map_text)
    assert lines_of_document(standing) == expected
    assert [p["rank"] for p in standing["places"]] == [line.rank for line in expected]
    if map_text == ALL_UNINHABITABLE:
        assert {(line.rank, line.shared) for line in expected} == {(1, True)}

    # The old rows of the API, kept one release: the same order and ranks.
    assert [(r["name"], r["place"], r["final"]) for r in document["ranking"]] == [
        (line.name, line.rank, line.final) for line in expected
    ]
    (entry,) = [g for g in served.web("GET", "/api/games")["games"] if g["name"] == game]
    assert entry["standing"] == standing

    # The game page's table, with the scores before the artifacts.
    page_lines, page_before = lines_of_page(served.web("GET", f"/games/{game}"))
    assert page_lines == expected
    assert page_before == before_of_document(standing)

    # Each player's page (the ratings, stored with the game's end): this game, its place, rated.
    for name in names:
        mine = next(line for line in expected if line.name == name)
        finished = served.web("GET", f"/api/players/{quote(name, safe='')}")["finished"]
        (result,) = [r for r in finished if r["game"] == game]
        assert (result["rank"], result["shared"], result["of"]) == (mine.rank, mine.shared, len(expected))
        assert result["rated"] and not result["against_computer"]

    # GAME OVER! as each player's client library reads it, and tae-client --json status.
    for name in names:
        client = BlockingClient.connect(HOST, served.tp_port, version=version, timeout=10)
        try:
            client.login(f"{name}@{game}", PASSWORD)
            client.update()
            over = client.game.game_over
            assert over is not None
            read = [
                StandingLine(s.name, s.rank, s.shared, s.final, s.categories, s.artifacts)
                for s in over.ranking
            ]
            assert read == expected, name
            assert [s.player_id for s in over.ranking] == [p["player"] for p in standing["places"]]
        finally:
            client.close()
        status = json_answer(served.tae_client(name, game, version, "--json", "status"))
        assert status["phase"] == "over"
        assert lines_of_client(status["game_over"]) == expected, name
        mine = next(line for line in expected if line.name == name)
        assert (status["game_over"]["rank"], status["game_over"]["shared"]) == (mine.rank, mine.shared)

    # The game_over notification each player's webhook got.
    payloads = served.receiver.game_over(game, len(names))
    for name in names:
        payload = payloads[name]
        mine = next(line for line in expected if line.name == name)
        assert lines_of_document(payload["standing"]) == expected
        assert payload["place"] == mine.rank
        assert payload["winners"] == [line.name for line in expected if line.rank == 1]
        told = [line for line in payload["text"].splitlines() if re.match(r"^\d+\. ", line)]
        assert [line.split(":")[0] for line in told] == [f"{line.rank}. {line.name}" for line in expected]

    # The operator: tae-server status (JSON and text) and the admin protocol's status.
    wanted = operator_view(expected)
    winners = {line.name for line in expected if line.rank == 1}
    json_lines, before, json_winners = operator_lines_from_json(
        json_answer(served.tae_server("status", game, "--json"))
    )
    assert (json_lines, json_winners) == (expected, winners)
    assert before == before_of_document(standing)
    categories = {line.name: line.after for line in expected}
    text_places, text_winners, text_after = operator_places_from_text(served.tae_server("status", game))
    assert (text_places, text_winners, text_after) == (wanted, winners, categories)
    admin = AdminClient(served.admin_port, timeout=10)
    try:
        assert type(admin.start(ADMIN, ADMIN_PASSWORD)).__name__ == "Okay"
        admin_places, admin_winners, admin_after = operator_places_from_text(admin.run("status", game).text)
    finally:
        admin.close()
    assert (admin_places, admin_winners, admin_after) == (wanted, winners, categories)
