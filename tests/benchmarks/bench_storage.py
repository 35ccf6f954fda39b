"""Storage speed: the end of a turn with its commit, and loading stored games at start-up.

    python -m tests.benchmarks storage

* End of turn: `ruleset.resolve_turn` plus `DatabaseStore.commit_turn` of the resulting
  TurnRecord, run the way the server runs it (the commit on the one database thread, the
  Deferred fired after COMMIT), for every turn of complete 4-player games of random players on
  the default map. Median and 95th percentile, on SQLite (a temporary file, WAL,
  synchronous=FULL) and on PostgreSQL when TAE_TEST_DATABASE_URL (or the local default below)
  connects; PostgreSQL runs in a schema of its own that is dropped afterwards.
* Change records and the outbox in the turn's transaction: every turn of the same games is
  committed three ways, one after the other, each into a game of its own: the turn alone
  (`commit_turn`, as before revision 0006c), the turn with its `TurnEnded` change record and the
  next deadline (`write`), and that with the turn's notifications too (one "turn_started" for
  each of the 4 players, each with 2 channels: 8 outbox rows). The medians' differences are
  what the record and the outbox rows add to an end of turn.
* Start-up: 100 stored games (4 accounts and their join messages, every turn and order of a
  complete game) loaded with `load_games` and rebuilt with `Game.restore`.
"""

from __future__ import annotations

import contextlib
import os
import queue
import secrets
import statistics
import tempfile
import time
from pathlib import Path

from sqlalchemy.engine import make_url
from twisted.internet.task import Clock
from twisted.python.failure import Failure

from ruleset import DEFAULT_BOARD, add_player, game_rng, join_rng, new_game, resolve_turn
from ruleset.simulator import RandomPlayer
from server.database import DatabaseStore, SyncDatabase, create_engine
from server.database import games as q
from server.database.state_codec import dumps, encode_state
from server.game.game import Game
from server.model.changes import TurnEnded
from server.model.outbox_entry import OutboxEntry
from server.model.store import Account, GameSetup, OrderEntry, TurnRecord
from server.model.writes import GameWrite, StoreDeadline, StoreTurn

TURN_GAMES = 6  # complete games whose every turn is timed (about 160 turns)
LOAD_GAMES = 100
PLAYERS = 4
LOCAL_POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
PLAYER = RandomPlayer()


class PumpedReactor:
    """What DatabaseStore needs of a reactor: results come back through a queue pumped here."""

    def __init__(self):
        self.calls: queue.Queue = queue.Queue()

    def callFromThread(self, f, *args, **kwargs):
        self.calls.put((f, args, kwargs))

    def addSystemEventTrigger(self, *args):
        return None

    def removeSystemEventTrigger(self, trigger):
        pass

    def wait(self, d, timeout=60.0):
        out = []
        d.addBoth(out.append)
        deadline = time.monotonic() + timeout
        while not out:
            f, args, kwargs = self.calls.get(timeout=max(0.01, deadline - time.monotonic()))
            f(*args, **kwargs)
        if isinstance(out[0], Failure):
            out[0].raiseException()
        return out[0]


def joined(seed: int):
    """A new game on the default board with players P1..P4, and the messages their joining posted."""
    state = new_game(DEFAULT_BOARD, seed)
    accounts = []
    for pid in range(1, PLAYERS + 1):
        state, messages = add_player(state, f"P{pid}", join_rng(seed, pid))
        accounts.append((Account(f"P{pid}", "scrypt$bench", pid), messages))
    return state, accounts


def orders_for(state, seed):
    turn = state.turn + 1
    return [o for p in state.players for o in PLAYER(state, p.id, game_rng(seed, turn, f"player {p.id}"))]


def time_turns(url) -> tuple[list[float], list[float]]:
    """Seconds per end of turn (resolve + commit, Deferred fired) over TURN_GAMES games, and
    seconds of resolve_turn alone in those."""
    reactor = PumpedReactor()
    store = DatabaseStore(url, reactor)
    durations = []
    resolving = []
    try:
        reactor.wait(store.upgrade())
        for seed in range(TURN_GAMES):
            game_id = reactor.wait(
                store.create_game(GameSetup(f"turns {seed} {secrets.token_hex(3)}", seed=seed))
            )
            state, accounts = joined(seed)
            for account, messages in accounts:
                reactor.wait(store.add_account(game_id, account, messages))
            serial = 0
            while state.phase.value != "over" and state.turn < 300:
                orders = orders_for(state, seed)
                start = time.perf_counter()
                outcome = resolve_turn(state, orders, game_rng(seed, state.turn + 1))
                resolving.append(time.perf_counter() - start)
                serial += 1
                record = TurnRecord(
                    outcome.state.turn, outcome.state, outcome.messages, outcome.events, serial
                )
                reactor.wait(store.commit_turn(game_id, record))
                durations.append(time.perf_counter() - start)
                state = outcome.state
    finally:
        reactor.wait(store.close())
    return durations, resolving


CHANNELS_PER_PLAYER = 2


def turn_started_entries(game_id: int, state, now: float) -> tuple[OutboxEntry, ...]:
    """What the notifications store with a turn: one "turn_started" per player (the payload of
    `server.notifications.events`, in size and shape)."""
    entries = []
    for player in state.players:
        key = f"{game_id}:{state.turn}:turn_started:{player.id}"
        payload = {
            "key": key,
            "event": "turn_started",
            "game": f"game {game_id}",
            "turn": state.turn,
            "phase": state.phase.value,
            "player": player.name,
            "title": f"game {game_id}: turn {state.turn} has started",
            "text": f"Turn {state.turn} of game {game_id} has started (your orders are awaited). "
            "It ends at 2026-12-04 20:00 UTC (in 1 d) or when everyone has finished.",
            "deadline": now + 86400,
            "deadline_utc": "2026-12-05 20:00 UTC",
            "seconds_left": 86400,
        }
        entries.append(OutboxEntry(game_id, player.id, key, "turn_started", payload))
    return tuple(entries)


def time_records_and_outbox(url) -> dict[str, list[float]]:
    """Seconds per commit of the same turns: the turn alone, with its change record, and with
    its change record and outbox rows (see the module docstring)."""
    reactor = PumpedReactor()
    store = DatabaseStore(url, reactor)
    ways = ("turn alone", "with its record", "with record and outbox")
    timings: dict[str, list[float]] = {way: [] for way in ways}
    try:
        reactor.wait(store.upgrade())
        for seed in range(TURN_GAMES):
            state, accounts = joined(seed)
            ids = {}
            for way in ways:
                ids[way] = reactor.wait(
                    store.create_game(GameSetup(f"{way} {seed} {secrets.token_hex(3)}", seed=seed))
                )
                for account, messages in accounts:
                    reactor.wait(store.add_account(ids[way], account, messages))
                    for channel in range(CHANNELS_PER_PLAYER):
                        target = f"https://hooks.example/{account.player_id}/{channel}"
                        reactor.wait(
                            store.notifications.add_channel(
                                ids[way], account.player_id, "webhook", target, "json", 5
                            )
                        )
            serial = 0
            while state.phase.value != "over" and state.turn < 300:
                outcome = resolve_turn(state, orders_for(state, seed), game_rng(seed, state.turn + 1))
                serial += 1
                record = TurnRecord(
                    outcome.state.turn, outcome.state, outcome.messages, outcome.events, serial
                )
                now = time.time()
                change = TurnEnded(outcome.state.turn, outcome.state.phase.value, now + 86400)
                steps = (StoreTurn(record), StoreDeadline(outcome.state.turn + 1, now + 86400))
                order = ways[serial % 3 :] + ways[: serial % 3]  # no way always goes first
                for way in order:
                    game_id = ids[way]
                    if way == "turn alone":
                        call = store.commit_turn(game_id, record)
                    elif way == "with its record":
                        call = store.write(game_id, GameWrite(change, steps, now))
                    else:
                        entries = turn_started_entries(game_id, outcome.state, now)
                        call = store.write(game_id, GameWrite(change, steps, now, entries))
                    start = time.perf_counter()
                    reactor.wait(call)
                    timings[way].append(time.perf_counter() - start)
                state = outcome.state
    finally:
        reactor.wait(store.close())
    return timings


def populate(db: SyncDatabase, games: int) -> int:
    """Store `games` complete games (one transaction each); the number of turns stored."""
    stored_turns = 0
    for seed in range(1000, 1000 + games):
        state, accounts = joined(seed)
        steps = []
        while state.phase.value != "over" and state.turn < 300:
            orders = orders_for(state, seed)
            outcome = resolve_turn(state, orders, game_rng(seed, state.turn + 1))
            steps.append((state.turn + 1, orders, outcome))
            state = outcome.state
        stored_turns += len(steps)

        def store_game(conn, seed=seed, accounts=accounts, steps=steps):
            game_id = q.thd_create_game(conn, GameSetup(f"load {seed}", seed=seed))
            for account, messages in accounts:
                q.thd_add_account(conn, game_id, account, messages)
            seq = 0
            for turn, orders, outcome in steps:
                for order in orders:
                    seq += 1
                    q.thd_record_order(
                        conn,
                        game_id,
                        OrderEntry(seq, turn, order.player, order.fleet, 0, order.type, order.target),
                    )
                q.thd_commit_turn(
                    conn, game_id, TurnRecord(turn, outcome.state, outcome.messages, outcome.events, turn)
                )

        db.run(store_game)
    return stored_turns


def time_load(url) -> tuple[float, float, int]:
    """(seconds for load_games, seconds for Game.restore of all, turns stored)."""
    with SyncDatabase(url) as db:
        db.upgrade()
        turns = populate(db, LOAD_GAMES)
    with SyncDatabase(url) as db:  # a fresh engine: nothing cached, as at start-up
        start = time.perf_counter()
        stored = db.load_games(all_states=False)  # what the server loads at start-up
        loaded = time.perf_counter()
        games = [Game.restore(s, db, Clock()) for s in stored]
        restored = time.perf_counter()
    assert len(games) == LOAD_GAMES
    return loaded - start, restored - loaded, turns


def report(label: str, databases) -> None:
    """`databases()` is a context manager giving the URL of an empty database."""
    with databases() as url:
        durations, resolving = time_turns(url)
    ms = sorted(d * 1000 for d in durations)
    p95 = ms[int(0.95 * (len(ms) - 1))]
    print(
        f"{label}: end of turn (resolve_turn + commit_turn), {len(ms)} turns of {TURN_GAMES} "
        f"4-player games: median {statistics.median(ms):.2f} ms, p95 {p95:.2f} ms, max {ms[-1]:.2f} ms "
        f"(resolve_turn alone: median {statistics.median(resolving) * 1000:.2f} ms)",
        flush=True,
    )
    with databases() as url:
        timings = time_records_and_outbox(url)
    medians = {way: statistics.median(t) * 1000 for way, t in timings.items()}
    alone, record, outbox = medians.values()
    print(
        f"{label}: commit of an end of turn ({len(timings['turn alone'])} turns, median): turn alone "
        f"{alone:.2f} ms; with its change record and deadline {record:.2f} ms (+{record - alone:.2f} ms); "
        f"with record, deadline and {PLAYERS * CHANNELS_PER_PLAYER} outbox rows {outbox:.2f} ms "
        f"(outbox in the transaction: +{outbox - record:.2f} ms; all: +{outbox - alone:.2f} ms)",
        flush=True,
    )
    with databases() as url:
        load_s, restore_s, turns = time_load(url)
    print(
        f"{label}: start-up with {LOAD_GAMES} stored games ({turns} turns): load_games "
        f"{load_s * 1000:.0f} ms + Game.restore {restore_s * 1000:.0f} ms = "
        f"{(load_s + restore_s) * 1000:.0f} ms ({(load_s + restore_s) * 1000 / LOAD_GAMES:.2f} ms per game)",
        flush=True,
    )


@contextlib.contextmanager
def sqlite_databases():
    with tempfile.TemporaryDirectory() as tmp:
        yield f"sqlite:///{Path(tmp) / 'tae.db'}"


def postgres_databases():
    """A context-manager factory for private schemas, or (None, why not)."""
    base = os.environ.get("TAE_TEST_DATABASE_URL") or LOCAL_POSTGRES
    try:
        base_url = make_url(base)
        if base_url.get_backend_name() != "postgresql":
            return None, f"{base_url.get_backend_name()} is not PostgreSQL"
        admin = create_engine(base_url, connect_args={"connect_timeout": 3})
        with admin.connect() as conn:
            conn.exec_driver_sql("SELECT 1")
    except Exception as exc:
        return None, f"{base} does not connect ({type(exc).__name__})"

    @contextlib.contextmanager
    def databases():
        schema = f"tae_bench_{secrets.token_hex(4)}"
        with admin.begin() as conn:
            conn.exec_driver_sql(f'CREATE SCHEMA "{schema}"')
        try:
            yield base_url.update_query_dict({"options": f"-csearch_path={schema}"})
        finally:
            with admin.begin() as conn:
                conn.exec_driver_sql(f'DROP SCHEMA "{schema}" CASCADE')

    return databases, admin


def main() -> None:
    size = len(dumps(encode_state(joined(0)[0])))
    print(f"encoded state of a new 4-player game: {size} bytes of JSON", flush=True)
    report("SQLite", sqlite_databases)
    databases, admin = postgres_databases()
    if databases is None:
        print(f"PostgreSQL: skipped: {admin}")
        return
    try:
        report("PostgreSQL", databases)
    finally:
        admin.dispose()


if __name__ == "__main__":
    main()
