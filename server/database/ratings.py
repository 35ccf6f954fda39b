"""The ratings across games (revision 0008r): one truth for every cluster node, in the database.

* ratings: one row per server account (users.id) that played a rated game: OpenSkill's `mu` and
  `sigma` and how many rated games they come from (`server.model.ratings`).
* game_results: one row per seat of a finished game: its place (`rank`, `of`, `shared`), whether
  the game had a computer player (`computer`: not rated), the seat's rating after it and the
  change of the shown rating (NULL when not rated), and `ended_at` (Unix seconds), which
  orders the games (a rebuild rates them again in that order). The seat's account is read
  through `accounts` (a seat moved to another account when two were joined follows it).

`thd_rate_game` runs in the transaction that stores the game's last turn (the `RateGame` step of
that write, `server.database.changes`), so a game's end and its ratings are stored together. It
rates a game once: a game with results already is left as it is. The accounts' rows are locked
(`FOR UPDATE` on PostgreSQL) first, so two nodes ending games of one player at once rate them
one after the other. `thd_rebuild` rates every finished game again from its stored final turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from ruleset import Phase, final_standing
from server.database import state_codec as codec
from server.database.schema import accounts, attendance, games, metadata, turns, users
from server.model.attendance import Attendance
from server.model.names import lookup_key
from server.model.ratings import (
    NEW_RATING,
    GameResult,
    Place,
    PlayerRecord,
    RatedAccount,
    Rating,
    against_computer,
    places_of,
    rate,
)

ratings = sa.Table(
    "ratings",
    metadata,
    sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("mu", sa.Float, nullable=False),
    sa.Column("sigma", sa.Float, nullable=False),
    sa.Column("games", sa.Integer, nullable=False),
)

game_results = sa.Table(
    "game_results",
    metadata,
    sa.Column("game_id", sa.Integer, sa.ForeignKey("games.id", ondelete="CASCADE"), nullable=False),
    sa.Column("player_id", sa.Integer, nullable=False),
    sa.Column("rank", sa.Integer, nullable=False),
    sa.Column("of", sa.Integer, nullable=False),
    sa.Column("shared", sa.Boolean, nullable=False),
    sa.Column("computer", sa.Boolean, nullable=False),
    sa.Column("mu", sa.Float, nullable=True),
    sa.Column("sigma", sa.Float, nullable=True),
    sa.Column("change", sa.Float, nullable=True),
    sa.Column("ended_at", sa.Float, nullable=False),
    sa.PrimaryKeyConstraint("game_id", "player_id"),
    sa.Index("ix_game_results_ended_at", "ended_at"),
)


def thd_rate_game(
    conn: Connection, game_id: int, places: Sequence[Place], computer: bool, ended_at: float
) -> bool:
    """Keep a finished game's places and, unless it had a `computer` player, rate its accounts
    (see the module docstring). False when the game has its results already (nothing done)."""
    done = sa.select(game_results.c.game_id).where(game_results.c.game_id == game_id).limit(1)
    if conn.execute(done).first() is not None:
        return False
    seat_rows = conn.execute(
        sa.select(accounts.c.player_id, accounts.c.user_id).where(accounts.c.game_id == game_id)
    ).all()
    owner = {row.player_id: row.user_id for row in seat_rows if row.user_id is not None}
    rated = [place for place in places if place.player in owner]
    after: dict[int, Rating] = {}
    before: dict[int, Rating] = {}
    if not computer and len(rated) >= 2:
        user_ids = sorted({owner[place.player] for place in rated})
        # one node at a time rates an account (a no-op on SQLite, whose writers take turns)
        conn.execute(sa.select(users.c.id).where(users.c.id.in_(user_ids)).with_for_update()).all()
        before = _ratings(conn, user_ids)
        after = rate(before, [(owner[place.player], place.rank) for place in rated])
        for user_id, rating in after.items():
            values = {"mu": rating.mu, "sigma": rating.sigma, "games": rating.games}
            updated = conn.execute(ratings.update().where(ratings.c.user_id == user_id).values(**values))
            if updated.rowcount == 0:
                conn.execute(ratings.insert().values(user_id=user_id, **values))
    for place in places:
        seat_owner = owner.get(place.player, -1)
        rated_after = after.get(seat_owner)
        old = before.get(seat_owner, NEW_RATING)
        conn.execute(
            game_results.insert().values(
                game_id=game_id,
                player_id=place.player,
                rank=place.rank,
                of=place.of,
                shared=place.shared,
                computer=computer,
                mu=None if rated_after is None else rated_after.mu,
                sigma=None if rated_after is None else rated_after.sigma,
                change=None if rated_after is None else rated_after.ordinal - old.ordinal,
                ended_at=ended_at,
            )
        )
    return True


def _ratings(conn: Connection, user_ids: Sequence[int]) -> dict[int, Rating]:
    rows = conn.execute(sa.select(ratings).where(ratings.c.user_id.in_(user_ids)))
    return {row.user_id: Rating(row.mu, row.sigma, row.games) for row in rows}


def thd_rebuild(conn: Connection) -> tuple[int, int]:
    """Forget every rating and rate every finished game again from its stored last turn, in the
    order the games ended (the `ended_at` a game was rated with; a game never rated, one that
    ended before revision 0008r, by when its last turn was stored). (games rated, games kept
    unrated: against the computer)."""
    # every account's row first: a game ending meanwhile on a node is rated after this, on top
    conn.execute(sa.select(users.c.id).with_for_update()).all()
    r = game_results.c
    known = dict(conn.execute(sa.select(r.game_id, sa.func.min(r.ended_at)).group_by(r.game_id)).all())
    last_turns = conn.execute(
        sa.select(games.c.id, turns.c.state, turns.c.committed_at)
        .join(turns, sa.and_(turns.c.game_id == games.c.id, turns.c.turn == games.c.last_turn))
        .where(games.c.last_turn > 0)
    ).all()
    finished = []
    for row in last_turns:
        state = codec.decode_state(row.state)
        standing = final_standing(state) if state.phase is Phase.OVER else None
        if standing is None:
            continue
        ended = known.get(row.id)
        if ended is None:
            ended = _unix_time(row.committed_at)
        finished.append((float(ended), row.id, places_of(standing)))
    conn.execute(game_results.delete())
    conn.execute(ratings.delete())
    counted = [0, 0]
    for ended, game_id, places in sorted(finished, key=lambda item: (item[0], item[1])):
        computer = against_computer(_attendance(conn, game_id))
        thd_rate_game(conn, game_id, places, computer, ended)
        counted[computer] += 1
    return counted[0], counted[1]


def _unix_time(moment: datetime | None) -> float:
    """A stored time as Unix seconds (SQLite gives it back without its zone: it is UTC)."""
    if moment is None:
        return 0.0
    return (moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)).timestamp()


def _attendance(conn: Connection, game_id: int) -> list[Attendance]:
    c = attendance.c
    rows = conn.execute(sa.select(c.player_id, c.presence, c.missed, c.until).where(c.game_id == game_id))
    return [Attendance.stored(row.player_id, row.presence, row.missed, row.until) for row in rows]


# -- reading ---------------------------------------------------------------------------------


def thd_table(conn: Connection, limit: int = 500) -> list[RatedAccount]:
    """The accounts that played a rated game, best shown rating first (then by name)."""
    ordinal = ratings.c.mu - 3 * ratings.c.sigma
    rows = conn.execute(
        sa.select(users.c.username, ratings.c.mu, ratings.c.sigma, ratings.c.games)
        .join(users, users.c.id == ratings.c.user_id)
        .order_by(ordinal.desc(), users.c.name_key)
        .limit(limit)
    )
    return [RatedAccount(row.username, Rating(row.mu, row.sigma, row.games)) for row in rows]


def thd_player(conn: Connection, name: str) -> PlayerRecord | None:
    """The account `name`'s rating and finished games (newest first); None: no such account."""
    key = lookup_key(name)
    if key is None:
        return None
    user = conn.execute(sa.select(users.c.id, users.c.username).where(users.c.name_key == key)).first()
    if user is None:
        return None
    rating = _ratings(conn, [user.id]).get(user.id, NEW_RATING)
    r = game_results.c
    rows = conn.execute(
        sa.select(
            games.c.name, r.player_id, r.rank, r.of, r.shared, r.computer, r.mu, r.sigma, r.change, r.ended_at
        )
        .join(accounts, sa.and_(accounts.c.game_id == r.game_id, accounts.c.player_id == r.player_id))
        .join(games, games.c.id == r.game_id)
        .where(accounts.c.user_id == user.id)
        .order_by(r.ended_at.desc(), r.game_id.desc())
    )
    results = tuple(
        GameResult(
            row.name,
            Place(row.player_id, row.rank, row.of, row.shared),
            row.computer,
            None if row.mu is None else Rating(row.mu, row.sigma),
            row.change,
            row.ended_at,
        )
        for row in rows
    )
    return PlayerRecord(user.username, rating, results)
