"""The TaE bot: plays whole games from the wire alone, many players at once.

One bot's turn is a plan (``clients.plans``), so any transport runs it (``BlockingClient.run``,
``TwistedClient.run``, or the in-memory loopback of the benchmark)::

    update the cache → build a View → strategy.decide(view) → InsertOrder each intent
    (a refusal is logged and the next alternate tried) → FinishedTurn

FinishedTurn carries no turn number, so one that arrives after its turn ended counts for the
next turn, which the player has not seen yet. The bot therefore re-reads the turn counter just
before finishing, and does not finish a combat turn fought by two other players (the server
does not wait for bystanders, R18; finishing would only risk that race).

``run_bots(host, port, names, password, version)`` connects one ``BlockingClient`` per name,
each in its own thread; every bot creates its account (or logs in to it), waits until the others
have joined, then loops: play the turn, wait for the next one (pushed TimeRemaining, or polling
the turn counter), until "GAME OVER!" or ``max_turns``. Every wait has a deadline, so a bot
never hangs: ``timeout`` bounds each request, ``turn_timeout`` each wait for a turn to end,
``deadline`` the whole run. The result of each bot is a ``BotResult``.

The command line is ``tae-client bot`` (``clients.cli_bot``); ``format_results`` is its table.
"""

from __future__ import annotations

import enum
import logging
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

from protocol import FinishedTurn, Version

from .blocking import BlockingClient
from .bot_view import (
    ORDERS_PER_TURN,
    Intent,
    Strategy,
    View,
    intents_summary,
    view_from_game,
)
from .errors import ClientError, RequestFailed
from .game_api import TaeGame
from .plans import Plan
from .seat_frames import AiStrategy
from .tae_model import REINFORCE, Scores
from .tls import TlsOptions

__all__ = [
    "Bot",
    "BotResult",
    "Failure",
    "TurnReport",
    "format_results",
    "play_blocking",
    "run_bots",
]

log = logging.getLogger("clients.bot")

DEFAULT_MAX_TURNS = 500
DEFAULT_TIMEOUT = 30.0
DEFAULT_TURN_TIMEOUT = 900.0
DEFAULT_PASSWORD = "bot-password"  # at least the 6 characters a default server asks for


class Failure(enum.Enum):
    """How a bot's game ended if not at GAME OVER."""

    CONNECTION = "connection"  # could not connect, connection lost, no answer in time
    REFUSED = "refused"  # the server refused the login
    DEADLINE = "deadline"  # the deadline or max_turns passed first
    INTERNAL = "internal"  # a bug in the bot


@dataclass
class TurnReport:
    """What one turn of one bot did."""

    turn: int | None
    over: bool = False
    intents: list[Intent] = field(default_factory=list)
    accepted: list[Intent] = field(default_factory=list)
    refused: list[tuple[Intent, str]] = field(default_factory=list)
    finished: bool = False  # FinishedTurn was sent


#: The five scores' names in every JSON document (the rules' and the JSON API's).
SCORE_NAMES = ("money", "technology", "people", "raw_materials", "artifacts")


@dataclass
class BotResult:
    """How one bot's game went. ``error`` is set when it stopped for any reason other than
    GAME OVER (connection, timeout, ``max_turns``, a bug)."""

    name: str
    version: str = "TP04"
    player_id: int | None = None
    game_over: bool = False
    turn: int | None = None  # the last turn number seen
    turns_played: int = 0  # turns this bot played (decided, and finished if acting)
    final_score: int | None = None  # from the GAME OVER message
    winning_score: int | None = None
    winners: tuple[str, ...] = ()
    won: bool = False
    scores: tuple[int, int, int, int, int] | None = None  # M, T, P, R, A before the wildcards
    orders_accepted: int = 0
    orders_refused: int = 0
    refusals: list[str] = field(default_factory=list)
    error: str | None = None
    failure: Failure | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.game_over and self.error is None

    def stop(self, failure: Failure, error: str) -> None:
        """Record why this bot stopped before GAME OVER."""
        self.failure, self.error = failure, error

    def to_dict(self) -> dict[str, object]:
        data = asdict(self)
        data["failure"] = self.failure.value if self.failure is not None else None
        # by name, as every other document names the scores (M, T, P, R, A)
        data["scores"] = None if self.scores is None else dict(zip(SCORE_NAMES, self.scores, strict=True))
        data["ok"] = self.ok
        return data


class _NamedAdapter(logging.LoggerAdapter):
    def process(self, msg, kwargs):
        return f"[{self.extra['bot']}] {msg}", kwargs


class Bot:
    """One player's decisions and bookkeeping, independent of the transport.

    ``turn_plan(game)`` is one turn as a plan; run it with ``BlockingClient.run``,
    ``TwistedClient.run`` or any other transport. ``stalled`` counts the turns in a row in which
    nothing changed on the board (the strategy uses it to keep the game moving).
    """

    def __init__(
        self,
        name: str,
        strategy: Strategy | None = None,
        *,
        logger: logging.Logger | logging.LoggerAdapter | None = None,
    ) -> None:
        self.name = name
        self.strategy = strategy or AiStrategy()
        self.log = logger or _NamedAdapter(log, {"bot": name})
        self.result = BotResult(name)
        self.stalled = 0
        self._last_board: tuple | None = None
        self._last_turn: int | None = None

    def turn_plan(self, game: TaeGame) -> Plan[TurnReport]:
        """Update, decide, send the orders, finish the turn. Returns a ``TurnReport``; when the
        game is over nothing is sent and the report says ``over``."""
        yield from game.cache.update()
        report = TurnReport(game.turn)
        self._note(game)
        if game.is_over:
            report.over = True
            return report
        view = view_from_game(game, stalled=self.stalled)
        intents = self.strategy.decide(view)
        report.intents = intents
        yield from self._send(game, view, intents, report)
        if view.bystander:
            # Not our fight: the server does not wait for us, and a FinishedTurn that arrived
            # after this turn ended would count for the next one, unplayed.
            report.finished = False
        else:
            # Same reason: do not finish a turn that has ended meanwhile (a deadline passed).
            turn = yield from game.refresh_turn()
            report.finished = turn == report.turn
            if report.finished:
                yield FinishedTurn()
        self.result.turns_played += 1
        self.log.debug("turn %s: %s", game.turn, intents_summary(report.accepted))
        return report

    # ------------------------------------------------------------------------------------

    def _note(self, game: TaeGame) -> None:
        """Keep the result and the stall counter up to date with what the cache shows."""
        result = self.result
        result.player_id = game.player_id
        result.turn = game.turn
        result.version = game.version.name
        scores: Scores | None = game.scores()
        if scores is not None:
            result.scores = (
                scores.money,
                scores.technology,
                scores.people,
                scores.raw_materials,
                scores.artifacts,
            )
        ended = game.game_over
        if ended is not None:
            result.game_over = True
            result.winners, result.final_score = ended.winners, ended.final_score
            result.winning_score = ended.winning_score
            standing = ended.standing_of(game.player_id)
            result.won = standing.rank == 1 if standing is not None else self.name in ended.winners
        if game.turn != self._last_turn:
            board = tuple(
                sorted(
                    (pos, s.colony, s.destroyed, s.leaders)
                    for pos, s in game.systems().items()
                    if s.colony is not None or s.destroyed or s.leaders
                )
            )
            self.stalled = self.stalled + 1 if board == self._last_board else 0
            self._last_board = board
            self._last_turn = game.turn

    def _send(self, game: TaeGame, view: View, intents: list[Intent], report: TurnReport):
        """Insert the chosen intents; replace a refused one by the next compatible alternate."""
        chosen = [i for i in intents if not i.alternate]
        spare = [i for i in intents if i.alternate]
        used_fleets = {f.id for f in view.fleets if f.queued}
        used_targets = {t for f in view.fleets for (_n, t) in f.queued if t is not None}
        limited = sum(1 for f in view.fleets for (n, _t) in f.queued if n != REINFORCE)
        while chosen:
            intent = chosen.pop(0)
            if intent.fleet in used_fleets or (intent.target is not None and intent.target in used_targets):
                continue
            if intent.order != REINFORCE and limited >= ORDERS_PER_TURN:
                continue
            problem = None
            try:
                message = game.build_order(intent.fleet, intent.order, intent.target)
            except (KeyError, ValueError) as error:
                problem = str(error)
            else:
                try:
                    yield message
                except RequestFailed as error:
                    problem = str(error)
            if problem is None:
                report.accepted.append(intent)
                self.result.orders_accepted += 1
                used_fleets.add(intent.fleet)
                if intent.target is not None:
                    used_targets.add(intent.target)
                if intent.order != REINFORCE:
                    limited += 1
                continue
            report.refused.append((intent, problem))
            self.result.orders_refused += 1
            self.result.refusals.append(
                f"turn {game.turn}: {intent.order} {intent.fleet}->{intent.target}: {problem}"
            )
            self.log.info(
                "turn %s: %s on fleet %s refused: %s", game.turn, intent.order, intent.fleet, problem
            )
            # Try the best alternate that fits instead.
            while spare:
                candidate = spare.pop(0)
                if candidate.fleet in used_fleets or candidate.target in used_targets:
                    continue
                chosen.insert(0, candidate)
                break


# ------------------------------------------------------------------------------------------
# Playing over a blocking connection
# ------------------------------------------------------------------------------------------


def play_blocking(
    client: BlockingClient,
    bot: Bot,
    *,
    max_turns: int = DEFAULT_MAX_TURNS,
    timeout: float = DEFAULT_TIMEOUT,
    turn_timeout: float = DEFAULT_TURN_TIMEOUT,
    deadline: float | None = None,
) -> BotResult:
    """Play until GAME OVER (or ``max_turns`` turns, or the ``deadline``, a ``time.monotonic``
    value) on a logged-in client. Client errors end the game for this bot and are recorded."""
    result = bot.result
    try:
        while True:
            report = client.run(bot.turn_plan(client.game), timeout)
            if report.over:
                break
            if result.turns_played >= max_turns:
                result.stop(Failure.DEADLINE, f"stopped after {max_turns} turns without GAME OVER")
                break
            if client.game.turn != report.turn:
                continue  # the turn ended while we played it: play the new one at once
            wait = turn_timeout
            if deadline is not None:
                wait = min(wait, deadline - time.monotonic())
                if wait <= 0:
                    result.stop(Failure.DEADLINE, "the deadline passed before GAME OVER")
                    break
            client.wait_for_next_turn(timeout=wait, poll_interval=min(5.0, max(wait, 0.1)), update=False)
    except ClientError as error:
        result.stop(Failure.CONNECTION, f"{type(error).__name__}: {error}")
        bot.log.warning("stopped: %s", result.error)
    return result


def _play_one(
    host: str,
    port: int,
    name: str,
    password: str,
    version: Version,
    game: str | None,
    strategy: Strategy,
    barrier: threading.Barrier,
    *,
    max_turns: int,
    timeout: float,
    turn_timeout: float,
    deadline: float | None,
    result_slot: list[BotResult | None],
    index: int,
    tls: TlsOptions | None,
) -> None:
    bot = Bot(name, strategy)
    result_slot[index] = bot.result
    bot.result.version = version.name
    started = time.monotonic()
    client = None
    try:
        client = BlockingClient.connect(host, port, version=version, timeout=timeout, tls=tls)
        try:
            client.login(f"{name}@{game}" if game else name, password, create=True)
        except RequestFailed as error:
            barrier.abort()
            bot.result.stop(Failure.REFUSED, f"login refused: {error.fail.message}")
            return
        try:
            barrier.wait(
                timeout=turn_timeout
                if deadline is None
                else max(0.1, min(turn_timeout, deadline - time.monotonic()))
            )
        except threading.BrokenBarrierError:
            bot.log.info("not every bot joined; playing anyway")
        play_blocking(
            client, bot, max_turns=max_turns, timeout=timeout, turn_timeout=turn_timeout, deadline=deadline
        )
    except ClientError as error:
        barrier.abort()
        bot.result.stop(Failure.CONNECTION, f"{type(error).__name__}: {error}")
        bot.log.warning("stopped: %s", bot.result.error)
    except Exception as error:  # a bug: report it, never take the other bots down
        barrier.abort()
        bot.result.stop(Failure.INTERNAL, f"{type(error).__name__}: {error}\n{traceback.format_exc()}")
        bot.log.error("crashed: %s", bot.result.error)
    finally:
        bot.result.seconds = time.monotonic() - started
        if client is not None:
            try:
                client.close()
            except Exception:  # pragma: no cover - closing never matters here
                pass


def _version(value) -> Version:
    if isinstance(value, Version):
        return value
    text = str(value).strip().lower().removeprefix("tp").removeprefix("0.").lstrip("0")
    return Version(int(text))


def run_bots(
    host: str,
    port: int,
    names: Sequence[str],
    password: str,
    version: Version | str | int = Version.TP04,
    game: str | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    timeout: float = DEFAULT_TIMEOUT,
    *,
    turn_timeout: float = DEFAULT_TURN_TIMEOUT,
    deadline: float | None = None,
    strategy: Callable[[str], Strategy] | None = None,
    tls: TlsOptions | None = None,
) -> list[BotResult]:
    """Play one bot per name against the server, all at once (one thread each); return their
    results in the order of ``names``.

    ``version``: ``Version`` or "tp03"/"tp04"/3/4. ``game``: join ``name@game``. ``timeout``:
    seconds for each request; ``turn_timeout``: for each wait for a turn to end; ``deadline``:
    seconds for the whole run (bots still playing then are reported with an error).
    ``strategy(name)`` makes each bot's strategy (default ``AiStrategy()``: the computer player at
    `normal`); ``tls`` connects
    over TLS.
    """
    version = _version(version)
    names = list(names)
    if not names:
        return []
    if len(set(names)) != len(names):
        raise ValueError("bot names must be different")
    make = strategy or (lambda _name: AiStrategy())
    ends = None if deadline is None else time.monotonic() + deadline
    barrier = threading.Barrier(len(names))
    results: list[BotResult | None] = [None] * len(names)
    threads = []
    for index, name in enumerate(names):
        thread = threading.Thread(
            target=_play_one,
            name=f"bot-{name}",
            daemon=True,
            args=(host, port, name, password, version, game, make(name), barrier),
            kwargs=dict(
                max_turns=max_turns,
                timeout=timeout,
                turn_timeout=turn_timeout,
                deadline=ends,
                result_slot=results,
                index=index,
                tls=tls,
            ),
        )
        thread.start()
        threads.append(thread)
    for thread in threads:
        thread.join(None if ends is None else max(0.0, ends - time.monotonic()) + timeout + 1)
    final = []
    for name, thread, result in zip(names, threads, results):
        result = result or BotResult(name, version=version.name)
        if thread.is_alive() and result.error is None:
            result.stop(Failure.DEADLINE, "still playing when the deadline passed")
        final.append(result)
    return final


def format_results(results: Sequence[BotResult], elapsed: float | None = None) -> str:
    """A small table of bot results."""
    lines = [
        f"{'bot':<16} {'player':>6} {'turn':>5} {'final':>5} {'M/T/P/R/A':<16} "
        f"{'orders':>6} {'refused':>7}  result"
    ]
    for r in results:
        scores = "/".join(str(s) for s in r.scores) if r.scores else "-"
        if r.error:
            outcome = f"ERROR {r.error.splitlines()[0]}"
        elif r.game_over:
            outcome = "WON" if r.won else "lost"
            if r.won and len(r.winners) > 1:
                outcome = "shared win"
        else:
            outcome = "not over"
        lines.append(
            f"{r.name:<16} {r.player_id if r.player_id is not None else '-':>6} "
            f"{r.turn if r.turn is not None else '-':>5} "
            f"{r.final_score if r.final_score is not None else '-':>5} {scores:<16} "
            f"{r.orders_accepted:>6} {r.orders_refused:>7}  {outcome}"
        )
    if elapsed is not None:
        lines.append(f"{len(results)} bots in {elapsed:.1f} s")
    return "\n".join(lines)
