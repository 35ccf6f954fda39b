"""One account per server: the users table; a seat (accounts) refers to its user.

Revision ID: 0007a
Revises: 0006c
Create Date: 2026-12-04

* users: the server's accounts (name, `name_key` unique: the name as RFC 8265 compares it,
  password hash). accounts.user_id: the account holding the seat; accounts.password_hash goes
  (the hash is the account's, the same in every game it joined).
* Per-game accounts whose names no other game had become accounts of that name. Per-game
  accounts that share a name (by key) in several games become one account only when their owner
  proves each password: the first game's (lowest id) takes the name, the others stay apart as
  `NAME~GAME` (`server.model.names.kept_apart_name`) until a login with a password that matches
  both joins them (`server.game.server_accounts`). Each of those seats gets a board notice
  saying so. The seat keeps its name in its game: TP clients log in as before.
"""

import sqlalchemy as sa
from alembic import op

from server.model.names import kept_apart_name, username_key

revision = "0007a"
down_revision = "0006c"
branch_labels = None
depends_on = None

SUBJECT = "Your account"
KEPT_APART_NOTICE = (
    "Accounts are now one per server: one name and password for every game. Another game had an "
    "account named {name} too, so this game's account is kept apart as {apart} for now. Log in "
    "as {name} with the password of the other game's account, then with this game's: if they are "
    "the same password the two become one account {name}; or ask an operator to join them. You "
    "still log in to this game as {name} with this game's password."
)


def upgrade() -> None:
    bind = op.get_bind()
    users = op.create_table(
        "users",
        sa.Column("id", sa.Integer, autoincrement=True, nullable=False),
        sa.Column("username", sa.String(200), nullable=False),
        sa.Column("name_key", sa.String(200), nullable=False),
        sa.Column("password_hash", sa.Text, nullable=False),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.text("CURRENT_TIMESTAMP")
        ),
        sa.PrimaryKeyConstraint("id", name="pk_users"),
        sa.UniqueConstraint("name_key", name="uq_users_name_key"),
    )
    # Plain ALTER TABLE, never a batch copy (see 0002: a copy of `accounts` would cascade). No
    # foreign key: SQLite could not drop the column again on a downgrade; the store keeps it right.
    op.add_column("accounts", sa.Column("user_id", sa.Integer, nullable=True))
    op.create_index("ix_accounts_user_id", "accounts", ["user_id"])

    seats = bind.execute(
        sa.text(
            "SELECT a.game_id, a.player_id, a.username, a.password_hash, g.name AS game, g.last_turn"
            " FROM accounts a JOIN games g ON g.id = a.game_id ORDER BY a.game_id, a.player_id"
        )
    ).all()
    taken: dict[str, int] = {}  # name key -> user id
    for seat in seats:
        key = username_key(seat.username)
        name = seat.username
        if key in taken:
            name = kept_apart_name(seat.username, seat.game, seat.game_id)
            key = username_key(name)
            _tell(bind, seat, name)
        user_id = bind.execute(
            users.insert().values(username=name, name_key=key, password_hash=seat.password_hash)
        ).inserted_primary_key[0]
        taken.setdefault(username_key(seat.username), user_id)
        bind.execute(
            sa.text("UPDATE accounts SET user_id = :user WHERE game_id = :game AND player_id = :player"),
            {"user": user_id, "game": seat.game_id, "player": seat.player_id},
        )
    op.execute(sa.text("ALTER TABLE accounts DROP COLUMN password_hash"))


def _tell(bind, seat, apart: str) -> None:
    """A board notice to the seat kept apart, after everything its board had (as an
    operator's notice is stored: `joins_before` orders it among the join messages)."""
    game = {"game": seat.game_id}
    last = bind.execute(sa.text("SELECT MAX(seq) FROM notices WHERE game_id = :game"), game).scalar()
    joins = bind.execute(sa.text("SELECT COUNT(*) FROM join_messages WHERE game_id = :game"), game).scalar()
    bind.execute(
        sa.text(
            "INSERT INTO notices (game_id, seq, joins_before, player, turn, subject, body)"
            " VALUES (:game, :seq, :joins, :player, :turn, :subject, :body)"
        ),
        {
            **game,
            "seq": (last or 0) + 1,
            "joins": joins or 0,
            "player": seat.player_id,
            "turn": seat.last_turn,
            "subject": SUBJECT,
            "body": KEPT_APART_NOTICE.format(name=seat.username, apart=apart),
        },
    )


def downgrade() -> None:
    # Every seat gets its account's hash back (accounts joined since keep the joint password).
    op.execute(sa.text("ALTER TABLE accounts ADD COLUMN password_hash TEXT NOT NULL DEFAULT ''"))
    op.execute(
        sa.text("UPDATE accounts SET password_hash = (SELECT u.password_hash FROM users u WHERE u.id = accounts.user_id)")
    )
    op.drop_index("ix_accounts_user_id", table_name="accounts")
    op.execute(sa.text("ALTER TABLE accounts DROP COLUMN user_id"))
    op.drop_table("users")
