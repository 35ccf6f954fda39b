"""Where a game (and an account's page) is on the web: the one place their paths are spelt.

The pages (`server.web`) link with `game_path` (an account's page with `player_path`); the
notifications put `game_url` in every message, so that a player can go from a Discord ping or an
e-mail straight to their game.
"""

from __future__ import annotations

from urllib.parse import quote


def game_path(name: str, *rest: str) -> str:
    """`/games/NAME[/REST...]`, the game's name quoted as one path segment."""
    return "/games/" + quote(name, safe="") + "".join("/" + part for part in rest)


def game_url(base: str, name: str) -> str:
    """The game's page on the web listener at `base` (`https://tae.example.org`)."""
    return base.rstrip("/") + game_path(name)


def player_path(name: str) -> str:
    """`/players/NAME`, an account's page (its rating and games), the name quoted as one segment."""
    return "/players/" + quote(name, safe="")
