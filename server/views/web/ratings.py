"""The documents of the ratings: the table (`/players`, `GET /api/players`) and one account's
page (`/players/NAME`, `GET /api/players/NAME`), from the ratings the store keeps
(`server.model.ratings`) and, for the games still played, the public game documents.

Nothing private: a finished game's places are public (GAME OVER! tells them to everyone), a
running game shows only what its public page shows (turn, phase, who plays the seat, whether
the turn waits for it): never a colonist type or a score.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from server.model.ratings import GameResult, PlayerRecord, RatedAccount, Rating
from server.model.snapshot import GameSnapshot
from server.views.web.documents import public_game

#: Ratings are shown to two decimals.
DECIMALS = 2


def rating_document(rating: Rating) -> dict[str, Any]:
    """`rating`: the one shown (mu - 3 sigma); `mu`, `sigma`; `games`: rated games."""
    return {
        "rating": round(rating.ordinal, DECIMALS),
        "mu": round(rating.mu, 3),
        "sigma": round(rating.sigma, 3),
        "games": rating.games,
    }


def table_document(lines: list[RatedAccount]) -> dict[str, Any]:
    """The accounts that played a rated game, best shown rating first, each with its `rank`."""
    return {
        "players": [
            {"rank": rank, "name": line.name, **rating_document(line.rating)}
            for rank, line in enumerate(lines, 1)
        ]
    }


def result_document(result: GameResult) -> dict[str, Any]:
    """One finished game of the account: its place, whether it was against the computer (then
    not `rated`), the shown rating after it and its `change` (null when not rated)."""
    place = result.place
    return {
        "game": result.game,
        "rank": place.rank,
        "of": place.of,
        "shared": place.shared,
        "winner": place.rank == 1,
        "against_computer": result.against_computer,
        "rated": result.rated,
        "rating": None if result.rating is None else round(result.rating.ordinal, DECIMALS),
        "change": None if result.change is None else round(result.change, DECIMALS),
        "ended": datetime.fromtimestamp(result.ended_at, UTC).isoformat(timespec="seconds"),
    }


def playing_document(snapshot: GameSnapshot, player: int) -> dict[str, Any]:
    """A game the account plays, as its public page shows it."""
    public = public_game(snapshot)
    seat = next(p for p in public["players"] if p["id"] == player)
    return {
        "game": public["name"],
        "turn": public["turn"],
        "phase": public["phase"],
        "seat": seat["seat"],
        "waiting": seat["waiting"],
    }


def player_document(record: PlayerRecord, playing: list[dict[str, Any]]) -> dict[str, Any]:
    """An account's page: its rating, its finished games (newest first) and the games it plays."""
    return {
        "name": record.name,
        "rating": rating_document(record.rating),
        "finished": [result_document(result) for result in record.results],
        "playing": playing,
    }
