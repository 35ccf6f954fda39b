"""What players read on their boards when an operator changes their game.

Every change an operator makes to a running game (pause, resume, extend, a setting, a removed
player taken back) posts one board message to every player of the game, so that nobody learns
about a new deadline by missing it. The texts are here; `server.game.game.Game` posts and stores
them. Times are given in seconds and in words ("2 h 30 min"), never as a local clock time:
the server does not know the player's time zone.
"""

from __future__ import annotations

SUBJECT = "Game settings"


def in_words(seconds: float) -> str:
    """A duration for players: "1 d 2 h", "2 h 30 min", "90 s"."""
    seconds = int(round(seconds))
    if seconds < 120:
        return f"{seconds} s"
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes = rest // 60
    parts = [f"{days} d"] if days else []
    if hours:
        parts.append(f"{hours} h")
    if minutes and not days:
        parts.append(f"{minutes} min")
    return " ".join(parts) or "0 s"


def _left(seconds: float | None) -> str:
    return "The turn has no deadline." if seconds is None else f"The turn ends in {in_words(seconds)}."


def paused(turn: int, left: float | None) -> str:
    kept = "" if left is None else f" {in_words(left)} will be left when it resumes."
    return f"The operator paused the game during turn {turn}: the turn clock has stopped.{kept}"


def resumed(turn: int, left: float | None) -> str:
    return f"The operator resumed the game: the turn clock of turn {turn} runs again. {_left(left)}"


def extended(turn: int, by: float, left: float | None, paused: bool) -> str:
    text = f"The operator extended turn {turn} by {in_words(by)}."
    if paused:
        return text + f" The game is paused; {in_words(left or 0)} will be left when it resumes."
    return text + " " + _left(left)


def turn_ended(turn: int) -> str:
    return (
        f"The operator ended turn {turn} now, before its deadline: the orders given so far were carried out."
    )


def setting_changed(turn: int, what: str, left: float | None, timer_changed: bool, paused: bool) -> str:
    text = f"The operator changed a setting of the game: {what}."
    if timer_changed and not paused:
        text += f" The clock of turn {turn} started again under it. {_left(left)}"
    return text


def removed(name: str) -> str:
    return (
        f"The operator removed {name} from the game: they no longer log in or give orders, "
        "and turns no longer wait for them."
    )


def reinstated(name: str) -> str:
    return f"The operator reinstated {name}: they play again from this turn on."
