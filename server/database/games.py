"""The queries of the game store. Every `thd_*` function runs on the database thread.

As in buildbot's master/buildbot/db/: each takes an open Connection inside a transaction (the
caller commits it) and returns plain data: ints, None, or the frozen values of `server.model.store`
and `ruleset`, never rows or ORM objects. Encoding and decoding game states happens here too,
so that CPU work stays off the reactor thread.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row

import ruleset
from ruleset import Message
from server.database import state_codec as codec
from server.database.schema import (
    accounts,
    attendance,
    finished_turns,
    games,
    join_messages,
    notices,
    orders,
    removed_messages,
    turns,
    users,
)
from server.model.attendance import Attendance
from server.model.names import lookup_key, username_key
from server.model.store import (
    Account,
    ConflictError,
    GameSetup,
    NotFoundError,
    OrderEntry,
    StoredGame,
    TurnRecord,
)
from server.model.timer_settings import TimerSettings

INT64 = range(-(2**63), 2**63)

#: What `thd_commit_turn` gives back for a turn that was stored already with the same content.
ALREADY_STORED = object()


# -- games ---------------------------------------------------------------------------------


def _setup_values(setup: GameSetup) -> dict:
    timer = setup.timer
    if setup.seed not in INT64 or setup.ctime not in INT64:
        raise ValueError("a game's seed and ctime must fit in 64 bits")
    return {
        "name": setup.name,
        "map_text": setup.map_text,
        "seed": setup.seed,
        "timer_kind": timer.kind,
        "turn_length": timer.turn_length,
        "turn_players_min": timer.turn_players_min,
        "turn_player_threshold": timer.turn_player_threshold,
        "turn_length_over_threshold": timer.turn_length_over_threshold,
        "turn_length_under_threshold": timer.turn_length_under_threshold,
        "timer_schedule": timer.schedule,
        "time_zone": timer.time_zone,
        "finish_early": timer.finish_early,
        "max_players": setup.max_players,
        "auto_add": setup.auto_add,
        "account_creation": setup.account_creation,
        "description": setup.description,
        "ctime": setup.ctime,
        "absent_after_missed_turns": setup.absent_after_missed_turns,
        "vacation_days_max": setup.vacation_days_max,
    }


def _setup_from_row(row: Row) -> GameSetup:
    timer = TimerSettings(
        kind=row.timer_kind,
        turn_length=row.turn_length,
        turn_players_min=row.turn_players_min,
        turn_player_threshold=row.turn_player_threshold,
        turn_length_over_threshold=row.turn_length_over_threshold,
        turn_length_under_threshold=row.turn_length_under_threshold,
        schedule=row.timer_schedule,
        time_zone=row.time_zone,
        finish_early=bool(row.finish_early),
    )
    return GameSetup(
        name=row.name,
        map_text=row.map_text,
        seed=row.seed,
        timer=timer,
        max_players=row.max_players,
        auto_add=bool(row.auto_add),
        account_creation=bool(row.account_creation),
        description=row.description,
        ctime=row.ctime,
        absent_after_missed_turns=row.absent_after_missed_turns,
        vacation_days_max=row.vacation_days_max,
    )


def thd_create_game(conn: Connection, setup: GameSetup) -> int:
    """Store a new game; its id. ConflictError when the name is taken."""
    taken = conn.execute(sa.select(games.c.id).where(games.c.name == setup.name)).first()
    if taken is not None:
        raise ConflictError(f"a game named {setup.name!r} exists (id {taken.id})")
    result = conn.execute(games.insert().values(**_setup_values(setup)))
    key = result.inserted_primary_key
    assert key is not None, "an INSERT has a primary key"
    return int(key[0])


def _require_game(conn: Connection, game_id: int, *, lock: bool = False) -> Row:
    query = sa.select(games.c.id, games.c.last_turn).where(games.c.id == game_id)
    if lock:
        query = query.with_for_update()
    row = conn.execute(query).first()
    if row is None:
        raise NotFoundError(f"no game with id {game_id}")
    return row


# -- accounts ------------------------------------------------------------------------------


def thd_add_account(conn: Connection, game_id: int, account: Account, messages: Iterable[Message]) -> None:
    """Store an account and the board messages its joining posted, in one transaction.

    The player joins the game as it is after its last stored turn: that turn is the join turn.
    """
    game = _require_game(conn, game_id)
    conn.execute(
        accounts.insert().values(
            game_id=game_id,
            player_id=account.player_id,
            username=account.username,
            user_id=_user_id(conn, account.account_name, account.password_hash),
            email=account.email,
            comment=account.comment,
            joined_turn=game.last_turn,
        )
    )
    _post_between_turns(conn, game_id, account.player_id, messages)


def _user_id(conn: Connection, name: str, password_hash: str) -> int:
    """The id of the server account `name` (made with `password_hash` when there is none).

    The game joins an existing account only once its password was proved (or an operator
    vouched), giving the account's hash: a different hash here means another game made an
    account of that name meanwhile, a ConflictError (the joining is refused)."""
    key = username_key(name)
    row = conn.execute(sa.select(users.c.id, users.c.password_hash).where(users.c.name_key == key)).first()
    if row is None:
        result = conn.execute(users.insert().values(username=name, name_key=key, password_hash=password_hash))
        inserted = result.inserted_primary_key
        assert inserted is not None, "an INSERT has a primary key"
        return int(inserted[0])
    if row.password_hash != password_hash:
        raise ConflictError(f"an account named {name!r} was made meanwhile")
    return int(row.id)


def thd_account_hash(conn: Connection, name: str) -> tuple[str, str] | None:
    """(name, password hash) of the server account `name` (compared as names are), or None."""
    key = lookup_key(name)
    if key is None:
        return None
    row = conn.execute(
        sa.select(users.c.username, users.c.password_hash).where(users.c.name_key == key)
    ).first()
    return None if row is None else (row.username, row.password_hash)


def thd_set_owner(conn: Connection, game_id: int, player_id: int, owner: str, password_hash: str) -> None:
    """Move a seat to the server account `owner` (two accounts of one person joined); the
    account it leaves goes when it holds no seat any more."""
    seat = _seat(conn, game_id, player_id)
    conn.execute(
        accounts.update()
        .where(accounts.c.game_id == game_id, accounts.c.player_id == player_id)
        .values(user_id=_user_id(conn, owner, password_hash))
    )
    still_held = sa.select(accounts.c.player_id).where(accounts.c.user_id == seat.user_id).exists()
    conn.execute(users.delete().where(users.c.id == seat.user_id, ~still_held))


def _seat(conn: Connection, game_id: int, player_id: int) -> Row:
    row = conn.execute(
        sa.select(accounts.c.user_id).where(accounts.c.game_id == game_id, accounts.c.player_id == player_id)
    ).first()
    if row is None:
        raise NotFoundError(f"game {game_id} has no player {player_id}")
    return row


def _post_between_turns(conn: Connection, game_id: int, about: int, messages: Iterable[Message]) -> None:
    """Store board messages posted between two turns (a player joining, a seat's notices), in
    posting order after those stored before; `about` is the player they concern."""
    messages = list(messages)
    if not messages:
        return
    last = conn.execute(
        sa.select(sa.func.max(join_messages.c.seq)).where(join_messages.c.game_id == game_id)
    ).scalar()
    first = (last or 0) + 1
    conn.execute(
        join_messages.insert(),
        [
            {
                "game_id": game_id,
                "seq": first + i,
                "joined_player": about,
                "player": m.player,
                "turn": m.turn,
                "subject": m.subject,
                "body": m.body,
                "mentions": codec.encode_message(m)[4],
            }
            for i, m in enumerate(messages)
        ],
    )


# -- orders and board messages -------------------------------------------------------------


def thd_record_order(conn: Connection, game_id: int, entry: OrderEntry) -> None:
    """Store an accepted order. ConflictError when its seq is used (or the game is unknown)."""
    conn.execute(
        orders.insert().values(
            game_id=game_id,
            seq=entry.seq,
            turn=entry.turn,
            player=entry.player,
            object_id=entry.object_id,
            slot=entry.slot,
            type=entry.type,
            target=entry.target,
        )
    )


def thd_remove_order(conn: Connection, game_id: int, seq: int) -> None:
    """Mark an order as taken back; it stays in the order log. NotFoundError if never stored."""
    result = conn.execute(
        orders.update().where(orders.c.game_id == game_id, orders.c.seq == seq).values(removed=True)
    )
    if result.rowcount == 0:
        raise NotFoundError(f"game {game_id} has no order {seq}")


def thd_remove_message(conn: Connection, game_id: int, player: int, index: int) -> None:
    """Remember that `player` removed the message posted `index`-th to their board (idempotent)."""
    _require_game(conn, game_id)
    key = (
        removed_messages.c.game_id == game_id,
        removed_messages.c.player == player,
        removed_messages.c.message_index == index,
    )
    if conn.execute(sa.select(removed_messages.c.player).where(*key)).first() is None:
        conn.execute(removed_messages.insert().values(game_id=game_id, player=player, message_index=index))


# -- turns ---------------------------------------------------------------------------------


def thd_commit_turn(conn: Connection, game_id: int, record: TurnRecord) -> object:
    """Store a resolved turn: the turn row and the game's last turn and modtime serial.

    Turns are stored in sequence: `record.turn` must follow the last stored turn. Storing the
    same turn again with the same content succeeds and stores nothing (a retried commit whose
    first attempt did commit, the answer having been lost): that gives back ALREADY_STORED.
    With other content it is a ConflictError.
    """
    if record.state.turn != record.turn:
        raise ValueError(f"turn record {record.turn} holds the state after turn {record.state.turn}")
    game = _require_game(conn, game_id, lock=True)
    state = codec.encode_state(record.state)
    messages = codec.encode_messages(record.messages)
    events = codec.encode_events(record.events)
    if record.turn <= game.last_turn:
        stored = conn.execute(
            sa.select(turns.c.state, turns.c.messages, turns.c.events).where(
                turns.c.game_id == game_id, turns.c.turn == record.turn
            )
        ).first()
        if stored is not None and (stored.state, stored.messages, stored.events) == (state, messages, events):
            return ALREADY_STORED
        raise ConflictError(f"game {game_id} already has a different turn {record.turn}")
    if record.turn != game.last_turn + 1:
        raise ConflictError(f"game {game_id}: turn {record.turn} cannot follow turn {game.last_turn}")
    conn.execute(
        turns.insert().values(
            game_id=game_id,
            turn=record.turn,
            state=state,
            messages=messages,
            events=events,
            modtime_serial=record.modtime_serial,
        )
    )
    conn.execute(
        games.update()
        .where(games.c.id == game_id)
        .values(last_turn=record.turn, last_modtime_serial=record.modtime_serial)
    )
    thd_record_attendance(conn, game_id, record.attendance, record.notices)
    return None


# -- who plays each seat (revision 0004a) ------------------------------------------------------


def thd_record_attendance(
    conn: Connection, game_id: int, rows: Iterable[Attendance], notices: Iterable[Message]
) -> None:
    """Store seats' attendance (replacing what a player had) and the notices about them."""
    for row in rows:
        key = (attendance.c.game_id == game_id, attendance.c.player_id == row.player)
        values = {"presence": row.stored_presence, "missed": row.missed, "until": row.until}
        if conn.execute(attendance.update().where(*key).values(**values)).rowcount == 0:
            conn.execute(attendance.insert().values(game_id=game_id, player_id=row.player, **values))
    for about, group in _by_player(notices):
        _post_between_turns(conn, game_id, about, group)


def _by_player(notices: Iterable[Message]) -> list[tuple[int, list[Message]]]:
    """Notices grouped by the player they are about (the first mention of a player), in order."""
    groups: list[tuple[int, list[Message]]] = []
    for message in notices:
        about = next((m.id for m in message.mentions if m.kind == ruleset.MentionKind.PLAYER), message.player)
        if groups and groups[-1][0] == about:
            groups[-1][1].append(message)
        else:
            groups.append((about, [message]))
    return groups


# -- players' turn state and the deadline --------------------------------------------------


def thd_record_finished(conn: Connection, game_id: int, turn: int, player: int) -> None:
    """Remember that `player` finished `turn` (idempotent)."""
    key = (
        finished_turns.c.game_id == game_id,
        finished_turns.c.turn == turn,
        finished_turns.c.player == player,
    )
    if conn.execute(sa.select(finished_turns.c.player).where(*key)).first() is None:
        conn.execute(finished_turns.insert().values(game_id=game_id, turn=turn, player=player))


def thd_remove_player(conn: Connection, game_id: int, player_id: int) -> None:
    """Mark a player removed by an operator (idempotent). NotFoundError for an unknown player."""
    result = conn.execute(
        accounts.update()
        .where(accounts.c.game_id == game_id, accounts.c.player_id == player_id)
        .values(removed=True)
    )
    if result.rowcount == 0:
        raise NotFoundError(f"game {game_id} has no player {player_id}")


def thd_set_password_hash(conn: Connection, game_id: int, player_id: int, password_hash: str) -> None:
    """Replace the password hash of the account holding a player's seat (a password change,
    or a hash made stronger): it is the account's in every game it joined."""
    seat = _seat(conn, game_id, player_id)
    conn.execute(users.update().where(users.c.id == seat.user_id).values(password_hash=password_hash))


def thd_set_deadline(conn: Connection, game_id: int, turn: int, deadline: float | None) -> None:
    """The end-of-turn deadline (Unix time) of `turn`, None for none."""
    conn.execute(
        games.update()
        .where(games.c.id == game_id)
        .values(deadline_turn=None if deadline is None else turn, deadline=deadline)
    )


def thd_reinstate_player(conn: Connection, game_id: int, player_id: int) -> None:
    """Undo a removal (idempotent). NotFoundError for an unknown player."""
    result = conn.execute(
        accounts.update()
        .where(accounts.c.game_id == game_id, accounts.c.player_id == player_id)
        .values(removed=False)
    )
    if result.rowcount == 0:
        raise NotFoundError(f"game {game_id} has no player {player_id}")


def thd_set_pause(conn: Connection, game_id: int, paused: bool, left: float | None) -> None:
    """Pause (with the seconds the deadline had left; None: no deadline) or resume the clock."""
    conn.execute(
        games.update()
        .where(games.c.id == game_id)
        .values(paused=paused, paused_left=left if paused else None)
    )


def thd_update_setup(conn: Connection, game_id: int, setup: GameSetup) -> None:
    """Store the settings an operator changed in a running game (its timer, size, accounts);
    the name, the map and the seed of a game never change."""
    values = _setup_values(setup)
    for fixed in ("name", "map_text", "seed", "ctime"):
        del values[fixed]
    result = conn.execute(games.update().where(games.c.id == game_id).values(**values))
    if result.rowcount == 0:
        raise NotFoundError(f"no game with id {game_id}")


def thd_add_notices(conn: Connection, game_id: int, messages: Iterable[Message]) -> None:
    """Store the board messages an operator's change posted, after everything posted so far."""
    _require_game(conn, game_id)
    messages = list(messages)
    if not messages:
        return
    joins = conn.execute(
        sa.select(sa.func.count()).select_from(join_messages).where(join_messages.c.game_id == game_id)
    ).scalar()
    last = conn.execute(sa.select(sa.func.max(notices.c.seq)).where(notices.c.game_id == game_id)).scalar()
    first = (last or 0) + 1
    conn.execute(
        notices.insert(),
        [
            {
                "game_id": game_id,
                "seq": first + i,
                "joins_before": int(joins or 0),
                "player": m.player,
                "turn": m.turn,
                "subject": m.subject,
                "body": m.body,
            }
            for i, m in enumerate(messages)
        ],
    )


# -- summaries for operators ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GameSummary:
    """One line of `tae-server list-games`: plain values, no states."""

    id: int
    name: str
    seed: int
    custom_map: bool
    board_size: tuple[int, int]  # columns, rows
    turn: int  # turns played
    phase: str  # normal | combat | over
    players: int  # who can play (removed players left out)
    removed: int
    max_players: int
    timer: str
    turn_length: int
    account_creation: bool
    timer_description: str  # the timer in one line (the calendar's schedule and zone)
    timer_brief: str  # the same in a few words
    paused: bool
    auto_add: bool
    winners: tuple[str, ...]  # when the game is over


def thd_game_summaries(conn: Connection, name: str | None = None) -> list[GameSummary]:
    """Every game (or the one named), by id, decoding only each game's last state."""
    query = sa.select(games).order_by(games.c.id)
    if name is not None:
        query = query.where(games.c.name == name)
    rows = conn.execute(query).all()
    summaries = []
    for row in rows:
        counts = conn.execute(
            sa.select(
                sa.func.count(), sa.func.coalesce(sa.func.sum(sa.case((accounts.c.removed, 1), else_=0)), 0)
            ).where(accounts.c.game_id == row.id)
        ).one()
        state = None
        if row.last_turn:
            data = conn.execute(
                sa.select(turns.c.state).where(turns.c.game_id == row.id, turns.c.turn == row.last_turn)
            ).scalar()
            state = codec.decode_state(data) if data is not None else None
        board = state.board if state is not None else _setup_from_row(row).board()
        names = {p.id: p.name for p in state.players} if state is not None else {}
        winners = (
            tuple(names.get(w, str(w)) for w in state.result.winners)
            if state is not None and state.result is not None
            else ()
        )
        summaries.append(
            GameSummary(
                id=row.id,
                name=row.name,
                seed=row.seed,
                custom_map=row.map_text is not None,
                board_size=(max(len(r) for r in board.rows), len(board.rows)),
                turn=row.last_turn,
                phase=state.phase.value if state is not None else ruleset.Phase.NORMAL.value,
                players=int(counts[0]) - int(counts[1]),
                removed=int(counts[1]),
                max_players=row.max_players,
                timer=row.timer_kind,
                turn_length=row.turn_length,
                account_creation=bool(row.account_creation),
                auto_add=bool(row.auto_add),
                winners=winners,
                timer_description=_setup_from_row(row).timer.describe(),
                timer_brief=_setup_from_row(row).timer.brief(),
                paused=bool(row.paused),
            )
        )
    return summaries


# -- loading -------------------------------------------------------------------------------


def thd_load_games(
    conn: Connection, game_ids: Iterable[int] | None = None, all_states: bool = True
) -> list[StoredGame]:
    """Every stored game (or those of `game_ids`) in id order, with everything `Game.restore`
    needs: accounts by player id, join messages, orders (removed ones too) and removals in the
    order they were stored, turns in order with decoded states.

    With `all_states` False only each game's last turn carries its state and events (the others
    have None and ()): that is all a restart needs, and decoding every state of a long game
    would make start-up grow with its age. Replays and audits ask for all of them."""
    wanted = None if game_ids is None else sorted(set(game_ids))

    def where(table):
        return [] if wanted is None else [table.c.game_id.in_(wanted)]

    query = sa.select(games).order_by(games.c.id)
    if wanted is not None:
        query = query.where(games.c.id.in_(wanted))
    stored = {row.id: StoredGame(row.id, _setup_from_row(row)) for row in conn.execute(query)}
    if not stored:
        return []

    for row in conn.execute(
        sa.select(
            games.c.id, games.c.deadline_turn, games.c.deadline, games.c.paused, games.c.paused_left
        ).where(games.c.id.in_(list(stored)))
    ):
        if row.deadline is not None:
            stored[row.id].deadline = (row.deadline_turn, row.deadline)
        if row.paused:
            stored[row.id].paused = (True, row.paused_left)
    for row in conn.execute(
        sa.select(notices).where(*where(notices)).order_by(notices.c.game_id, notices.c.seq)
    ):
        stored[row.game_id].notices.append(
            (row.joins_before, Message(row.player, row.turn, row.subject, row.body))
        )
    for row in conn.execute(
        sa.select(accounts, users.c.username.label("owner"), users.c.password_hash)
        .join(users, users.c.id == accounts.c.user_id)
        .where(*where(accounts))
        .order_by(accounts.c.game_id, accounts.c.player_id)
    ):
        game = stored[row.game_id]
        owner = "" if row.owner == row.username else row.owner
        game.accounts.append(
            Account(row.username, row.password_hash, row.player_id, row.email, row.comment, owner)
        )
        game.join_turns[row.player_id] = row.joined_turn
        if row.removed:
            game.removed_players.add(row.player_id)
    for row in conn.execute(sa.select(attendance).where(*where(attendance))):
        stored[row.game_id].attendance[row.player_id] = Attendance.stored(
            row.player_id, row.presence, row.missed, row.until
        )
    for row in conn.execute(sa.select(finished_turns).where(*where(finished_turns))):
        stored[row.game_id].finished.add((row.turn, row.player))
    for row in conn.execute(
        sa.select(join_messages)
        .where(*where(join_messages))
        .order_by(join_messages.c.game_id, join_messages.c.seq)
    ):
        stored[row.game_id].join_messages.append(
            codec.decode_message([row.player, row.turn, row.subject, row.body, row.mentions or []])
        )
    for row in conn.execute(sa.select(orders).where(*where(orders)).order_by(orders.c.game_id, orders.c.seq)):
        game = stored[row.game_id]
        game.orders.append(
            OrderEntry(row.seq, row.turn, row.player, row.object_id, row.slot, row.type, row.target)
        )
        if row.removed:
            game.removed_orders.add(row.seq)
    for row in conn.execute(sa.select(removed_messages).where(*where(removed_messages))):
        stored[row.game_id].removed_messages.add((row.player, row.message_index))
    last_turn: dict[int, int] = {}
    if not all_states:
        for last in conn.execute(
            sa.select(turns.c.game_id, sa.func.max(turns.c.turn).label("last"))
            .where(*where(turns))
            .group_by(turns.c.game_id)
        ):
            last_turn[last.game_id] = last.last
    for turn in conn.execute(
        sa.select(
            turns.c.game_id,
            turns.c.turn,
            turns.c.state,
            turns.c.messages,
            turns.c.events,
            turns.c.modtime_serial,
        )
        .where(*where(turns))
        .order_by(turns.c.game_id, turns.c.turn)
    ):
        full = all_states or last_turn.get(turn.game_id) == turn.turn
        stored[turn.game_id].turns.append(
            TurnRecord(
                turn.turn,
                # Without all_states only the last turn's state is decoded: a running game
                # needs no other, and replay (which does) asks for all of them.
                codec.decode_state(turn.state) if full else None,  # type: ignore[arg-type]
                codec.decode_messages(turn.messages),
                codec.decode_events(turn.events) if full else (),
                turn.modtime_serial,
            )
        )
    return list(stored.values())


# -- history (the web's turn pages) ------------------------------------------------------------


def thd_turn_record(conn: Connection, game_id: int, turn: int) -> TurnRecord | None:
    """One stored turn, its state decoded; None when the game has no such turn."""
    row = conn.execute(
        sa.select(
            turns.c.turn, turns.c.state, turns.c.messages, turns.c.events, turns.c.modtime_serial
        ).where(turns.c.game_id == game_id, turns.c.turn == turn)
    ).first()
    if row is None:
        return None
    return TurnRecord(
        row.turn,
        codec.decode_state(row.state),
        codec.decode_messages(row.messages),
        codec.decode_events(row.events),
        row.modtime_serial,
    )


def thd_turn_events(conn: Connection, game_id: int, after: int = 0) -> list[tuple[int, tuple]]:
    """(turn, events) of every stored turn after `after`, in order, without decoding states."""
    rows = conn.execute(
        sa.select(turns.c.turn, turns.c.events)
        .where(turns.c.game_id == game_id, turns.c.turn > after)
        .order_by(turns.c.turn)
    )
    return [(row.turn, codec.decode_events(row.events)) for row in rows]
