"""``tae-client status``: turn, phase, time left, who has finished, my scores, and while the
server's stand-in plays my seat how to take it back (``own_seat_note``); during a combat
turn the conflict (``clients.conflict_view``), after the game why it ended and the final ranking
(``clients.game_messages``). ``status_data`` is the ``--json`` form; ``render_status`` draws it.
"""

from __future__ import annotations

import time
from datetime import datetime, tzinfo

from rich.console import Console
from rich.table import Table
from rich.text import Text

from protocol import Version

from .conflict_view import running_conflict, turn_phase
from .game_api import TaeGame
from .tae_model import Scores

__all__ = [
    "format_deadline",
    "own_seat_note",
    "render_conflict",
    "render_game_over",
    "render_status",
    "status_data",
]

ORDERS_PER_TURN = 2  # R11, for the "queued n/2" hint only; the server decides
REMOVED_RACE = "Removed"  # the Player frame's race of a player the operator removed
PLAYING_RACE = "Human"  # the race of every other player, and mine while I play my own seat


def own_seat_note(game: TaeGame) -> str | None:
    """The server's words on my seat while its stand-in plays it (I missed turns, am on
    vacation), or None while I play it myself. Thousand Parsec has no frame for a seat: the
    server puts the note in the race of the Player frame it sends me of myself (GetPlayer 0),
    which every update fetches; other players' frames never carry it."""
    me = game.cache.me
    if me is None or me.race in (PLAYING_RACE, REMOVED_RACE):
        return None
    return me.race


def status_data(
    game: TaeGame, *, game_name: str | None, host: str, port: int, now: float | None = None
) -> dict:
    """`time_left` is the seconds the server's last TimeRemaining gave; `deadline` the moment
    they end, from this machine's clock (`now`, by default the time), as ISO 8601 in this
    machine's time zone with its offset, as the server's web pages and API write deadlines."""
    cache = game.cache
    remaining = cache.time_remaining
    waiting: list[int] | None = None
    if remaining is not None and game.version == Version.TP04:
        waiting = list(remaining.waiting)
    players = []
    for player_id in sorted(cache.players):
        player = cache.players[player_id]
        players.append(
            {
                "id": player.id,
                "name": player.name,
                "me": player.id == game.player_id,
                "waiting": None if waiting is None else player.id in waiting,
                "removed": player.race == REMOVED_RACE,
            }
        )
    scores = game.scores()
    over = game.game_over
    conflict = running_conflict(game)
    queued = sum(1 for f in game.my_fleets() if f.orders)
    time_left = game.time_remaining
    return {
        "server": {"host": host, "port": port, "protocol": game.version.name.lower()},
        "game": game_name,
        "player": {"id": game.player_id, "name": game.player_name(game.player_id)},
        "seat_note": own_seat_note(game),
        "turn": game.turn,
        "turn_name": (remaining.turn_name or None)
        if remaining is not None and game.version == Version.TP04
        else None,
        "phase": turn_phase(game),
        # whole seconds until the deadline, -1 without one (as the API and tae-server status)
        "seconds_left": -1 if time_left is None or time_left < 0 or over else time_left,
        # Deprecated (removed in the next release): "seconds_left", with None for -1.
        "time_left": None if time_left is None or time_left < 0 else time_left,
        "deadline": None
        if time_left is None or time_left < 0 or over
        else datetime.fromtimestamp(round((time.time() if now is None else now) + time_left))
        .astimezone()
        .isoformat(),
        "players": players,
        "waiting_for": None if waiting is None else [game.player_name(pid) or str(pid) for pid in waiting],
        "orders_queued": queued,
        "scores": _scores_dict(scores),
        "conflict": conflict.to_dict(game.player_id) if conflict is not None else None,
        "game_over": over.to_dict(game.player_id) if over else None,
    }


def _scores_dict(scores: Scores | None) -> dict | None:
    if scores is None:
        return None
    return {
        "money": scores.money,
        "technology": scores.technology,
        "people": scores.people,
        "raw_materials": scores.raw_materials,
        "artifacts": scores.artifacts,
        "final": scores.final,
        "turn": scores.turn,
        "artifacts_distributed": scores.distributed,
    }


def render_status(console: Console, data: dict) -> None:
    table = Table(box=None, show_header=False, pad_edge=False)
    table.add_column(style="bold")
    table.add_column()
    server = data["server"]
    player = data["player"]
    table.add_row("server", f"{server['host']}:{server['port']} ({server['protocol']})")
    if data["game"]:
        table.add_row("game", data["game"])
    table.add_row("player", f"{player['name'] or '?'} (id {player['id']})")
    if data.get("seat_note"):
        table.add_row("seat", Text(data["seat_note"], style="bold yellow"))
    kind = "" if data["phase"] == "over" else f" ({data['phase']} turn)"
    table.add_row("turn", f"{data['turn']}{kind}")
    phase = Text(data["phase"])
    if data["phase"] == "combat":
        phase.stylize("bold yellow")
    elif data["phase"] == "over":
        phase.stylize("bold red")
    table.add_row("phase", phase)
    table.add_row("deadline", format_deadline(data.get("deadline"), data["time_left"]))
    if data["phase"] != "over":
        table.add_row(
            "my orders",
            f"{data['orders_queued']} queued (at most {ORDERS_PER_TURN})"
            if data["phase"] == "normal"
            else f"{data['orders_queued']} queued",
        )
    if data["players"]:
        parts = []
        for player in data["players"]:
            name = player["name"] + (" (me)" if player["me"] else "")
            if player.get("removed"):
                parts.append(Text(f"{name}: removed", style="red"))
            elif player["waiting"] is None:
                parts.append(Text(name))
            elif player["waiting"]:
                parts.append(Text(f"{name}: playing", style="yellow"))
            else:
                parts.append(Text(f"{name}: finished", style="green"))
        table.add_row("players", Text(", ").join(parts))
    scores = data["scores"]
    if scores and scores.get("artifacts_distributed"):  # the game is over: as GAME OVER! says
        table.add_row(
            "scores",
            f"M {scores['money']}  T {scores['technology']}  P {scores['people']}  "
            f"R {scores['raw_materials']}  after {_artifacts(scores['artifacts'])}  "
            f"(final {scores['final']})",
        )
    elif scores:
        table.add_row(
            "scores",
            f"M {scores['money']}  T {scores['technology']}  P {scores['people']}  "
            f"R {scores['raw_materials']}  A {scores['artifacts']}  (final {scores['final']})",
        )
    else:
        table.add_row("scores", "none yet")
    console.print(table)
    if data["conflict"]:
        render_conflict(console, data["conflict"])
    if data["game_over"]:
        render_game_over(console, data["game_over"])


def format_deadline(deadline: str | None, seconds: int | None, zone: tzinfo | None = None) -> str:
    """ "Tue 14 May 2024, 20:20 CEST (in 3 h 12 min)": the deadline in this machine's time zone
    (or `zone`), and the time left, worded as the server's pages word them."""
    if deadline is None or seconds is None:
        return "no deadline"
    moment = datetime.fromisoformat(deadline).astimezone(zone)
    name = moment.tzname() or moment.strftime("%z")
    if name.startswith(("+", "-")) and len(name) == 5:
        name = f"UTC{name[:3]}:{name[3:]}"
    when = f"{moment.strftime('%a')} {moment.day} {moment.strftime('%b %Y, %H:%M')} {name}"
    return f"{when} (in {in_words(seconds)})"


def in_words(seconds: int) -> str:
    """A duration: "45 s", "12 min 30 s", "3 h 12 min", "1 d 4 h" (the server's words)."""
    seconds = max(0, int(seconds))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days} d {hours} h" if hours else f"{days} d"
    if hours:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    if minutes:
        return f"{minutes} min {secs} s" if secs else f"{minutes} min"
    return f"{secs} s"


def _place(side: dict) -> str:
    system = side["system"]
    return f" at {system['x']},{system['y']}" if system else ""


def render_conflict(console: Console, conflict: dict) -> None:
    """The conflict of this combat turn: who attacks and defends where, with what strength."""
    kind = conflict["leader_kind"]
    title = f"{conflict['type']} conflict" + (f" of {kind} leaders" if kind else "")
    console.print(Text(title.capitalize(), style="bold yellow"))
    for role in ("attacker", "defender"):
        side = conflict[role]
        strength = "?" if side["strength"] is None else side["strength"]
        who = side["name"] + (" (me)" if side["me"] else "")
        console.print(f"  {role:<9} {who}{_place(side)}, initial strength {strength}")
    if conflict["unification"]:
        u = conflict["unification"]
        console.print(f"  at stake  the unification system {u['x']},{u['y']}")
    colonists = conflict["reinforcements"]
    counted = f"{colonists} colonists" if colonists else "colonists"
    mine = conflict["my_reinforcements"]
    if mine:
        console.print(f"  reinforce my fleets {', '.join(map(str, mine))} may Reinforce ({counted} count)")
    else:
        console.print(f"  reinforce none of my fleets may Reinforce ({counted} count for the combatants)")
    console.print("  a tie goes to the defender")


def _artifacts(count: int) -> str:
    return "1 artifact" if count == 1 else f"{count} artifacts"


def render_game_over(console: Console, over: dict) -> None:
    """Why the game ended, who won, and every player's place as GAME OVER! gives it: the rank
    (shared by players equal in all four categories), the final score, the categories after the
    alien artifacts were shared out, and how many artifacts there were."""
    console.print(Text(f"GAME OVER (turn {over['turn']})", style="bold red"))
    if not over["ranking"]:
        console.print(over["message"])
        return
    lines = over["message"].strip().splitlines()
    if lines:
        console.print(lines[0])
    if over["reason"]:
        console.print(over["reason"])
    table = Table(
        box=None, pad_edge=False, title="Final ranking (categories after artifacts)", title_justify="left"
    )
    columns = ("rank", "player", "final", "money", "technology", "people", "raw materials", "artifacts")
    for column in columns:
        table.add_column(column, justify="left" if column in ("rank", "player") else "right")
    for standing in over["ranking"]:
        after = standing["categories_after"]
        table.add_row(
            f"{standing['rank']}{' (shared)' if standing['shared'] else ''}",
            standing["name"],
            str(standing["final"]),
            str(after["money"]),
            str(after["technology"]),
            str(after["people"]),
            str(after["raw_materials"]),
            str(standing["artifacts"]),
        )
    console.print(table)
