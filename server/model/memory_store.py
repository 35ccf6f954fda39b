"""`MemoryStore`: the game store that keeps everything in this process (tests, throw-away servers).

It offers what the database store (`server.database`) offers the game service: the reads of
`server.model.store.GameStore`, and `write`, which applies one `server.model.writes.GameWrite`
(its rows, its change record, its notifications) as a unit. The change records are in
`changes`, the notifications the writes caused in `outbox`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ruleset import Event, Message
from server.model.attendance import Attendance
from server.model.changes import ChangeRecord
from server.model.names import lookup_key, username_key
from server.model.outbox_entry import OutboxEntry
from server.model.ratings import NEW_RATING, GameResult, Place, PlayerRecord, RatedAccount, Rating, rate
from server.model.store import Account, ConflictError, GameSetup, OrderEntry, StoredGame, TurnRecord
from server.model.writes import (
    GameWrite,
    MarkReinstated,
    MarkRemoved,
    RateGame,
    StoreAccount,
    StoreAttendance,
    StoreDeadline,
    StoreFinished,
    StoreNotices,
    StoreOrder,
    StoreOwner,
    StorePasswordHash,
    StorePause,
    StoreSetup,
    StoreTurn,
    TakeBackOrder,
    TakeDownMessage,
)


class MemoryStore:
    """A store that keeps games for the life of the process (tests, throw-away servers).

    It has the games and their ratings (`ratings`, `MemoryRatings`): none of the database
    store's other components (the operator request queue, the lease, the notifications' outbox,
    the ended browser sessions: `server.database.components`)."""

    requests: None = None
    lease: None = None
    notifications: None = None
    web_sessions: None = None

    def __init__(self) -> None:
        self.games: dict[int, StoredGame] = {}
        self.changes: dict[int, list[ChangeRecord]] = {}
        self.outbox: list[OutboxEntry] = []
        self.ratings = MemoryRatings(self)
        self._steps: dict[type, Callable[[int, Any], None]] = {
            StoreAccount: lambda g, s: self.add_account(g, s.account, s.messages),
            StoreOrder: lambda g, s: self.record_order(g, s.entry),
            TakeBackOrder: lambda g, s: self.remove_order(g, s.seq),
            TakeDownMessage: lambda g, s: self.remove_message(g, s.player, s.index),
            StoreTurn: lambda g, s: self.commit_turn(g, s.record),
            StoreFinished: lambda g, s: self.record_finished(g, s.turn, s.player),
            StoreAttendance: lambda g, s: self.record_attendance(g, s.rows, s.notices),
            MarkRemoved: lambda g, s: self.remove_player(g, s.player),
            MarkReinstated: lambda g, s: self.reinstate_player(g, s.player),
            StoreNotices: lambda g, s: self.add_notices(g, s.messages),
            StorePause: lambda g, s: self.set_pause(g, s.paused, s.left),
            StoreDeadline: lambda g, s: self.set_deadline(g, s.turn, s.deadline),
            StoreSetup: lambda g, s: self.update_setup(g, s.setup),
            StorePasswordHash: lambda g, s: self.set_password_hash(g, s.player, s.password_hash),
            StoreOwner: lambda g, s: self.set_owner(g, s.player, s.owner, s.password_hash),
            RateGame: lambda g, s: self.ratings.rate_game(g, s.places, s.against_computer, s.ended_at),
        }

    # -- one write of a game -----------------------------------------------------------------

    def write(self, game_id: int, write: GameWrite) -> int:
        """Apply the write's steps, keep its change record and notifications; the sequence."""
        if game_id not in self.games:
            raise KeyError(game_id)
        for step in write.steps:
            self._steps[type(step)](game_id, step)
        records = self.changes.setdefault(game_id, [])
        sequence = len(records) + 1
        records.append(ChangeRecord(game_id, sequence, write.time, write.change))
        self.outbox.extend(write.outbox)
        return sequence

    def find_write(self, game_id: int, write: GameWrite, doubt: Exception) -> int | None:
        """The sequence of the record `write` stored, or None (a memory store always knows)."""
        for record in self.changes.get(game_id, ()):
            if record.time == write.time and record.change == write.change:
                return record.sequence
        return None

    def changes_after(self, game_id: int, after: int = 0) -> list[ChangeRecord]:
        return [r for r in self.changes.get(game_id, ()) if r.sequence > after]

    def close(self) -> None:
        """Nothing to let go: the games live as long as the process."""

    # -- games and their rows ----------------------------------------------------------------

    def create_game(self, setup: GameSetup) -> int:
        game_id = len(self.games) + 1
        self.games[game_id] = StoredGame(game_id, setup)
        return game_id

    def add_account(self, game_id: int, account: Account, messages: tuple[Message, ...]) -> None:
        """A seat; its server account is the one of that name in any game, as the database's
        (`server.database.games.thd_add_account`)."""
        existing = self.account_hash(account.account_name)
        if existing is not None and existing[1] != account.password_hash:
            raise ConflictError(f"an account named {account.account_name!r} was made meanwhile")
        stored = self.games[game_id]
        stored.accounts.append(account)
        stored.join_messages.extend(messages)
        stored.join_turns[account.player_id] = stored.turns[-1].turn if stored.turns else 0

    def record_order(self, game_id: int, entry: OrderEntry) -> None:
        self.games[game_id].orders.append(entry)

    def remove_order(self, game_id: int, seq: int) -> None:
        self.games[game_id].removed_orders.add(seq)

    def remove_message(self, game_id: int, player: int, index: int) -> None:
        self.games[game_id].removed_messages.add((player, index))

    def commit_turn(self, game_id: int, record: TurnRecord) -> None:
        stored = self.games[game_id]
        stored.turns.append(record)
        self.record_attendance(game_id, record.attendance, record.notices)

    def record_attendance(
        self, game_id: int, attendance: tuple[Attendance, ...], notices: tuple[Message, ...]
    ) -> None:
        stored = self.games[game_id]
        for row in attendance:
            stored.attendance[row.player] = row
        stored.join_messages.extend(notices)

    def record_finished(self, game_id: int, turn: int, player: int) -> None:
        self.games[game_id].finished.add((turn, player))

    def remove_player(self, game_id: int, player_id: int) -> None:
        self.games[game_id].removed_players.add(player_id)

    def set_deadline(self, game_id: int, turn: int, deadline: float | None) -> None:
        self.games[game_id].deadline = None if deadline is None else (turn, deadline)

    def reinstate_player(self, game_id: int, player_id: int) -> None:
        self.games[game_id].removed_players.discard(player_id)

    def set_pause(self, game_id: int, paused: bool, left: float | None) -> None:
        self.games[game_id].paused = (paused, left if paused else None)

    def update_setup(self, game_id: int, setup: GameSetup) -> None:
        self.games[game_id].setup = setup

    def add_notices(self, game_id: int, messages: tuple[Message, ...]) -> None:
        stored = self.games[game_id]
        stored.notices.extend((len(stored.join_messages), m) for m in messages)

    def set_password_hash(self, game_id: int, player_id: int, password_hash: str) -> None:
        """The hash of the server account holding the seat: in every game it joined."""
        owner = self._seat(game_id, player_id).account_name
        for stored in self.games.values():
            stored.accounts[:] = [
                replace(a, password_hash=password_hash)
                if username_key(a.account_name) == username_key(owner)
                else a
                for a in stored.accounts
            ]

    def account_hash(self, name: str) -> tuple[str, str] | None:
        """(name, password hash) of the server account `name` (in any game), or None."""
        key = lookup_key(name)
        for stored in self.games.values():
            for account in stored.accounts:
                if key is not None and username_key(account.account_name) == key:
                    return (account.account_name, account.password_hash)
        return None

    def set_owner(self, game_id: int, player_id: int, owner: str, password_hash: str) -> None:
        accounts = self.games[game_id].accounts
        accounts[:] = [
            replace(a, owner="" if owner == a.username else owner, password_hash=password_hash)
            if a.player_id == player_id
            else a
            for a in accounts
        ]

    def _seat(self, game_id: int, player_id: int) -> Account:
        return next(a for a in self.games[game_id].accounts if a.player_id == player_id)

    # -- reads -------------------------------------------------------------------------------

    def turn_record(self, game_id: int, turn: int) -> TurnRecord | None:
        for record in self.games[game_id].turns:
            if record.turn == turn:
                return record
        return None

    def turn_events(self, game_id: int, after: int = 0) -> list[tuple[int, tuple[Event, ...]]]:
        return [(r.turn, tuple(r.events)) for r in self.games[game_id].turns if r.turn > after]

    def load_games(self, game_ids=None, all_states: bool = True) -> list[StoredGame]:
        """Every game (or those of `game_ids`); this store always has every state at hand."""
        return [g for g in self.games.values() if game_ids is None or g.game_id in game_ids]


class MemoryRatings:
    """The ratings of a `MemoryStore`'s games, as the database keeps them
    (`server.database.ratings`): the same rule, the same reads."""

    def __init__(self, store: MemoryStore):
        self._store = store
        self._ratings: dict[str, Rating] = {}  # by account name key
        self._results: dict[int, list[tuple[Place, Rating | None, float | None]]] = {}
        self._ended: dict[int, tuple[float, bool]] = {}

    def _owner(self, game_id: int, player: int) -> str | None:
        for account in self._store.games[game_id].accounts:
            if account.player_id == player:
                return username_key(account.account_name)
        return None

    def rate_game(self, game_id: int, places: tuple[Place, ...], computer: bool, ended_at: float) -> None:
        """Keep a finished game's places and rate it (`thd_rate_game`): once."""
        if game_id in self._results:
            return
        owners = {place.player: self._owner(game_id, place.player) or "" for place in places}
        ranks = [(owners[place.player], place.rank) for place in places if owners[place.player]]
        before = dict(self._ratings)
        after: dict[str, Rating] = {} if computer or len(ranks) < 2 else rate(before, ranks)
        self._ratings.update(after)
        rows: list[tuple[Place, Rating | None, float | None]] = []
        for place in places:
            key = owners[place.player]
            rating = after.get(key)
            old = before.get(key, NEW_RATING)
            rows.append((place, rating, None if rating is None else rating.ordinal - old.ordinal))
        self._results[game_id] = rows
        self._ended[game_id] = (ended_at, computer)

    def table(self, limit: int = 500) -> list[RatedAccount]:
        names = {
            username_key(a.account_name): a.account_name
            for g in self._store.games.values()
            for a in g.accounts
        }
        lines = [RatedAccount(names.get(key, key), rating) for key, rating in self._ratings.items()]
        return sorted(lines, key=lambda line: (-line.rating.ordinal, username_key(line.name)))[:limit]

    def player(self, name: str) -> PlayerRecord | None:
        key = lookup_key(name)
        seats = [
            (game_id, account)
            for game_id, stored in self._store.games.items()
            for account in stored.accounts
            if key is not None and username_key(account.account_name) == key
        ]
        if not seats:
            return None
        results = []
        for game_id, account in seats:
            ended_at, computer = self._ended.get(game_id, (0.0, False))
            for place, rating, change in self._results.get(game_id, ()):
                if place.player == account.player_id:
                    setup = self._store.games[game_id].setup
                    results.append(GameResult(setup.name, place, computer, rating, change, ended_at))
        results.sort(key=lambda result: -result.ended_at)
        assert key is not None
        return PlayerRecord(seats[0][1].account_name, self._ratings.get(key, NEW_RATING), tuple(results))
