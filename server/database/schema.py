"""The tables, as SQLAlchemy Core: what the queries of `server.database.games` read and write.

The migrations in `server/migrations/versions/` create these tables; a test checks that a
database migrated to the head revision matches this metadata exactly. Change both together:
edit here, then add a revision (never edit an applied one).

* games: one row per game: its set-up (GameSetup, TimerSettings as columns), and the last
  committed turn and modtime serial (so a listing needs no turn rows).
* accounts: players of a game, unique by user name and by player id within the game.
* join_messages: the board messages posted when players joined, in posting order (`seq`).
* orders: every accepted order, the order log of the game; `removed` marks orders taken back.
* removed_messages: (player, index) of board messages a player removed.
* turns: one row per resolved turn: the state after it, its messages and events (JSON).

Added by revision 0002 (operations):

* accounts.joined_turn: the last played turn when the player joined (replays add the player
  after that turn); accounts.removed: an operator removed the player (no login, not waited for).
* games.deadline_turn / games.deadline: the end-of-turn deadline (Unix time) the running
  server's timer had for that turn, so a restart does not extend the turn.
* finished_turns: (turn, player) for every player who finished that turn, so a turn whose end
  was interrupted by a crash ends again at restart.
* operator_requests: what `tae-server` asks of a running server (load a new game, end a turn,
  add or remove a player); the server polls it and writes back status and result.
* server_lease: the one server using this database: host, pid and a heartbeat.

Added by revision 0004a (absent players, `server.model.attendance`):

* games.absent_after_missed_turns / games.vacation_days_max: the game's settings.
* attendance: per player whose seat is not plainly theirs or who missed turns in a row: the
  presence (absent, vacation, resigned, playing), turns missed in a row, a vacation's end.
* join_messages also keeps the notices about seats (posted between turns, like join
  messages); `joined_player` is the player a notice is about.
Added by revision 0004t (timer controls):

* games.timer_schedule / time_zone / finish_early: the calendar timer's settings.
* games.paused / paused_left: an operator paused the clock; the seconds the deadline had left.
* notices: board messages posted by operators' changes; `joins_before` orders them among the
  join messages.

Added by revision 0007a (one account per server):

* users: the server's accounts: a name (unique by its RFC 8265 key, `name_key`), the password
  hash, when it was made. accounts (a seat in one game) refers to one by `user_id`; the seat's
  `username` is the name the game shows (the account's, or its name before 0007a).
"""

from __future__ import annotations

import sqlalchemy as sa

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = sa.MetaData(naming_convention=NAMING_CONVENTION)

NOW = sa.text("CURRENT_TIMESTAMP")


def _game_fk() -> sa.Column:
    return sa.Column("game_id", sa.Integer, sa.ForeignKey("games.id", ondelete="CASCADE"), nullable=False)


games = sa.Table(
    "games",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(200), nullable=False, unique=True),
    sa.Column("map_text", sa.Text, nullable=True),
    sa.Column("seed", sa.BigInteger, nullable=False),
    sa.Column("timer_kind", sa.String(32), nullable=False),
    sa.Column("turn_length", sa.Integer, nullable=False),
    sa.Column("turn_players_min", sa.Integer, nullable=False),
    sa.Column("turn_player_threshold", sa.Integer, nullable=False),
    sa.Column("turn_length_over_threshold", sa.Integer, nullable=False),
    sa.Column("turn_length_under_threshold", sa.Integer, nullable=False),
    sa.Column("max_players", sa.Integer, nullable=False),
    sa.Column("auto_add", sa.Boolean, nullable=False),
    sa.Column("account_creation", sa.Boolean, nullable=False),
    sa.Column("description", sa.Text, nullable=False),
    sa.Column("ctime", sa.BigInteger, nullable=False),
    sa.Column("last_turn", sa.Integer, nullable=False, server_default="0"),
    sa.Column("last_modtime_serial", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
    sa.Column("deadline_turn", sa.Integer, nullable=True),
    sa.Column("deadline", sa.Float, nullable=True),
    sa.Column("absent_after_missed_turns", sa.Integer, nullable=False, server_default="2"),
    sa.Column("vacation_days_max", sa.Integer, nullable=False, server_default="14"),
    sa.Column("timer_schedule", sa.Text, nullable=False, server_default=""),
    sa.Column("time_zone", sa.String(64), nullable=False, server_default="UTC"),
    sa.Column("finish_early", sa.Boolean, nullable=False, server_default=sa.true()),
    sa.Column("paused", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("paused_left", sa.Float, nullable=True),
)

users = sa.Table(
    "users",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("username", sa.String(200), nullable=False),
    sa.Column("name_key", sa.String(200), nullable=False, unique=True),
    sa.Column("password_hash", sa.Text, nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
)

accounts = sa.Table(
    "accounts",
    metadata,
    _game_fk(),
    sa.Column("player_id", sa.Integer, nullable=False),
    sa.Column("username", sa.String(64), nullable=False),
    sa.Column("email", sa.Text, nullable=False),
    sa.Column("comment", sa.Text, nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
    sa.Column("joined_turn", sa.Integer, nullable=False, server_default="0"),
    sa.Column("removed", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("user_id", sa.Integer, nullable=True),  # users.id (no foreign key: see 0007a)
    sa.PrimaryKeyConstraint("game_id", "player_id"),
    sa.UniqueConstraint("game_id", "username"),
    sa.Index("ix_accounts_user_id", "user_id"),
)

join_messages = sa.Table(
    "join_messages",
    metadata,
    _game_fk(),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("joined_player", sa.Integer, nullable=False),
    sa.Column("player", sa.Integer, nullable=False),
    sa.Column("turn", sa.Integer, nullable=False),
    sa.Column("subject", sa.Text, nullable=False),
    sa.Column("body", sa.Text, nullable=False),
    sa.Column("mentions", sa.JSON, nullable=True),  # [[kind, id], ...]; NULL: none (before 0003m)
    sa.PrimaryKeyConstraint("game_id", "seq"),
    sa.ForeignKeyConstraint(
        ["game_id", "joined_player"], ["accounts.game_id", "accounts.player_id"], ondelete="CASCADE"
    ),
)

orders = sa.Table(
    "orders",
    metadata,
    _game_fk(),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("turn", sa.Integer, nullable=False),
    sa.Column("player", sa.Integer, nullable=False),
    sa.Column("object_id", sa.Integer, nullable=False),
    sa.Column("slot", sa.Integer, nullable=False),
    sa.Column("type", sa.Integer, nullable=False),
    sa.Column("target", sa.Integer, nullable=False),
    sa.Column("removed", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
    sa.PrimaryKeyConstraint("game_id", "seq"),
)

removed_messages = sa.Table(
    "removed_messages",
    metadata,
    _game_fk(),
    sa.Column("player", sa.Integer, nullable=False),
    sa.Column("message_index", sa.Integer, nullable=False),
    sa.PrimaryKeyConstraint("game_id", "player", "message_index"),
)

turns = sa.Table(
    "turns",
    metadata,
    _game_fk(),
    sa.Column("turn", sa.Integer, nullable=False),
    sa.Column("state", sa.JSON, nullable=False),
    sa.Column("messages", sa.JSON, nullable=False),
    sa.Column("events", sa.JSON, nullable=False),
    sa.Column("modtime_serial", sa.BigInteger, nullable=False),
    sa.Column("committed_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
    sa.PrimaryKeyConstraint("game_id", "turn"),
)

finished_turns = sa.Table(
    "finished_turns",
    metadata,
    _game_fk(),
    sa.Column("turn", sa.Integer, nullable=False),
    sa.Column("player", sa.Integer, nullable=False),
    sa.PrimaryKeyConstraint("game_id", "turn", "player"),
)

attendance = sa.Table(
    "attendance",
    metadata,
    _game_fk(),
    sa.Column("player_id", sa.Integer, nullable=False),
    sa.Column("presence", sa.String(16), nullable=False),
    sa.Column("missed", sa.Integer, nullable=False, server_default="0"),
    sa.Column("until", sa.Float, nullable=True),
    sa.PrimaryKeyConstraint("game_id", "player_id"),
    sa.ForeignKeyConstraint(
        ["game_id", "player_id"], ["accounts.game_id", "accounts.player_id"], ondelete="CASCADE"
    ),
)

operator_requests = sa.Table(
    "operator_requests",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    _game_fk(),
    sa.Column("kind", sa.String(32), nullable=False),
    sa.Column("payload", sa.JSON, nullable=False),
    sa.Column("status", sa.String(16), nullable=False, server_default="pending"),
    sa.Column("result", sa.Text, nullable=False, server_default=""),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=NOW),
    sa.Column("done_at", sa.DateTime(timezone=True), nullable=True),
    sa.Index("ix_operator_requests_status_id", "status", "id"),
)

notices = sa.Table(
    "notices",
    metadata,
    _game_fk(),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("joins_before", sa.Integer, nullable=False),
    sa.Column("player", sa.Integer, nullable=False),
    sa.Column("turn", sa.Integer, nullable=False),
    sa.Column("subject", sa.Text, nullable=False),
    sa.Column("body", sa.Text, nullable=False),
    sa.PrimaryKeyConstraint("game_id", "seq"),
)

server_lease = sa.Table(
    "server_lease",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("host", sa.String(255), nullable=True),
    sa.Column("pid", sa.Integer, nullable=True),
    sa.Column("started_at", sa.Float, nullable=True),
    sa.Column("heartbeat_at", sa.Float, nullable=True),
)
