"""Ratings across games: the rule that turns a finished game's places into new ratings.

Every finished game rates the server accounts that held its seats once, with OpenSkill's
Plackett-Luce model (`openskill.models.PlackettLuce`): a free-for-all of every seat, the game's
final places as the ranking (players who share a place tie). Plackett-Luce models a finishing
order of any number of players directly (a ranking is a sequence of "who comes next" choices)
at a cost linear in the number of players, and it is the library's default model; the pairwise
models (Bradley-Terry, Thurstone-Mosteller) compare every pair of players instead.

* A game with a **computer player** (`Presence.COMPUTER`) is not rated at all: the computer's
  strength is fixed by its level, not a person's, so a win over it says nothing about people,
  and counting it would let anyone farm rating against the easy level. Its places are kept (a
  player's page shows the game, marked as against the computer).
* A seat the **stand-in** played (its player absent, on vacation or resigned) is rated with the
  place it got: the seat is its player's for the whole game, and resigning a lost game must not
  dodge its rating.

A rating is shown as its ordinal, `mu - 3 sigma`: a conservative estimate (the player is very
likely at least this strong) that starts at 0 and grows as games confirm it. This module is the
one rule; the stores (`server.database.ratings`, `server.model.memory_store`) keep its results.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from openskill.models import PlackettLuce

from ruleset import FinalStanding
from server.model.attendance import Attendance, Presence

#: The model every rating is computed with (its defaults: mu 25, sigma 25/3).
MODEL = PlackettLuce()
#: How many sigmas below mu the shown rating (the ordinal) is.
ORDINAL_SIGMAS = 3

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True, slots=True)
class Rating:
    """One account's rating: the model's mean skill `mu`, its uncertainty `sigma`, and the rated
    games it comes from."""

    mu: float = MODEL.mu
    sigma: float = MODEL.sigma
    games: int = 0

    @property
    def ordinal(self) -> float:
        """The rating shown: `mu - 3 sigma`."""
        return self.mu - ORDINAL_SIGMAS * self.sigma


#: The rating of an account that played no rated game.
NEW_RATING = Rating()


@dataclass(frozen=True, slots=True)
class Place:
    """One seat's result in a finished game: the player, their rank (1 = a winner; equal for
    players who share a place) and how many were ranked."""

    player: int
    rank: int
    of: int
    shared: bool = False


def places_of(standing: FinalStanding) -> tuple[Place, ...]:
    """The places of a final standing (`server.views.standing`'s one standing), best first."""
    of = len(standing.places)
    return tuple(Place(place.player, place.rank, of, place.shared) for place in standing.places)


def against_computer(attendance: Iterable[Attendance]) -> bool:
    """Whether a game with these seats had a computer player: it is not rated."""
    return any(row.presence is Presence.COMPUTER for row in attendance)


def rate(before: Mapping[K, Rating], ranks: Sequence[tuple[K, int]]) -> dict[K, Rating]:
    """The new ratings of the accounts `ranks` names, each with its rank in one game (equal ranks
    tie), from their ratings `before` (an account missing there is new). A game of fewer than two
    accounts changes nothing: it is given back as it was."""
    if len(ranks) < 2:
        return {key: before.get(key, NEW_RATING) for key, _ in ranks}
    old = [before.get(key, NEW_RATING) for key, _ in ranks]
    teams = [[MODEL.create_rating([rating.mu, rating.sigma])] for rating in old]
    rated = MODEL.rate(teams, ranks=[float(rank) for _, rank in ranks])
    return {
        key: Rating(team[0].mu, team[0].sigma, rating.games + 1)
        for (key, _), team, rating in zip(ranks, rated, old, strict=True)
    }


@dataclass(frozen=True, slots=True)
class RatedAccount:
    """A line of the table of ratings: an account and its rating."""

    name: str
    rating: Rating


@dataclass(frozen=True, slots=True)
class GameResult:
    """One finished game of an account: its place, whether it had a computer player (then it is
    not rated), the rating after it and how much it moved the shown rating (None for a game not
    rated), and when it ended (Unix seconds)."""

    game: str
    place: Place
    against_computer: bool
    rating: Rating | None
    change: float | None
    ended_at: float

    @property
    def rated(self) -> bool:
        return self.rating is not None


@dataclass(frozen=True, slots=True)
class PlayerRecord:
    """An account's rating and its finished games, newest first."""

    name: str
    rating: Rating
    results: tuple[GameResult, ...]
