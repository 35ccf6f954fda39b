"""``tae-client vacation``, ``back`` and ``resign``: who plays my seat while I am away.

Thousand Parsec has no frame for these, so they go to the server's JSON API on its web listener
(``clients.player_api``, see ``--web-url``): ``GET /seat``, ``POST /back``, ``POST``/``DELETE
/vacation`` and ``POST /resign``. While I am on vacation, absent (I missed turns) or after I
resigned, the server's stand-in plays my seat (docs/absence.md). Reading the game (``status``,
``board``, ``messages``...) never takes it back: an order, ``finish`` or ``back`` do.

    tae-client vacation             # who plays my seat now
    tae-client vacation 7           # on vacation for 7 days from now
    tae-client vacation --end       # back now
    tae-client back                 # I am back: an absence or a vacation ends
    tae-client resign [--yes]       # leave the game for good
"""

from __future__ import annotations

import sys
from datetime import datetime
from typing import Any

import click

from .cli_runtime import EXIT_USAGE, CliError, json_option, runtime, say

__all__ = ["back", "resign", "seat_line", "vacation"]


def _when(until: float) -> str:
    """A vacation's end in the local time zone, to the minute."""
    return datetime.fromtimestamp(until).astimezone().strftime("%Y-%m-%d %H:%M %Z")


def seat_line(seat: dict[str, Any]) -> str:
    """One line on who plays the seat the server describes (its GET /seat answer): the server's
    own `note` while the stand-in plays it (how to take it back), with a vacation's end in my
    time zone."""
    note = seat.get("note")
    if seat.get("seat") == "on vacation" and seat.get("vacation_until"):
        until = f"on vacation until {_when(float(seat['vacation_until']))}"
        return f"{until}: {note}" if note else until
    if note:
        return str(note)
    missed = int(seat.get("missed_turns") or 0)
    after = int(seat.get("absent_after_missed_turns") or 0)
    line = "you play your own seat"
    if after:
        line += f" (the stand-in plays after {after} missed turns in a row"
        line += f"; you missed {missed})" if missed else ")"
    return line


@click.command()
@click.argument("days", type=click.IntRange(min=1), required=False)
@click.option("--end", is_flag=True, help="End my vacation now: I play my own seat again.")
@json_option
def vacation(days, end, as_json):
    """Go on vacation for DAYS days: the server's stand-in plays my seat until then (or --end).

    Without DAYS, show who plays my seat. The game sets the longest vacation.
    """
    if days is not None and end:
        raise CliError(EXIT_USAGE, "give DAYS or --end, not both")
    run = runtime()
    api = run.player_api()
    if end:
        seat = api.call("DELETE", "vacation")
    elif days is not None:
        seat = api.call("POST", "vacation", {"days": days})
    else:
        seat = api.call("GET", "seat")
    say(run, as_json, seat, seat_line(seat))


@click.command()
@json_option
def back(as_json):
    """I am back: play my own seat again (the stand-in stops playing it; a vacation ends).

    Giving an order or finishing a turn takes the seat back too; reading the game does not.
    """
    run = runtime()
    seat = run.player_api().call("POST", "back", {})
    say(run, as_json, seat, seat_line(seat))


@click.command()
@click.option("--yes", is_flag=True, help="Do not ask: I really want to leave the game for good.")
@json_option
def resign(yes, as_json):
    """Leave the game for good: the stand-in plays my seat to the end, and I cannot log in again."""
    run = runtime()
    api = run.player_api()
    if not yes:
        if not sys.stdin.isatty():
            raise CliError(EXIT_USAGE, "resigning is for good: give --yes to resign without a question")
        click.confirm(
            f"Resign {api.username} from the game for good? You cannot log in to it again",
            abort=True,
            err=True,
        )
    seat = api.call("POST", "resign", {"confirm": True})
    say(run, as_json, seat, f"{api.username}: {seat_line(seat)}")
