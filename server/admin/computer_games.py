"""A game against the computer in one click: a player's own new game with computer players.

A logged-in player (the home page's form, `POST /api/games`) asks for 1 to 5 computer players
at one level and a turn length; `ComputerGames.start` makes a game with the server's `[game]`
settings (map, limits) but its own name (`vs-computer-N`), timer (a turn ends when everyone
finished, or at the turn length) and seats: the player's account first, then the computer
players (`Game.add_computer_player`), which take their seats at once and play every turn as the
stand-in does. The game then starts: it has all the players it is for and takes no others.

The operator bounds it (`server.config.limits`): `computer_games_per_account` open games per
account (0, the default: nobody may start one) and `computer_games_max` on the server. A game
against the computer is one not over whose seats all but one are computer players; it counts
for the account holding the other seat until that player resigns, and on the server until it
is over (its computer players play on at each deadline). Counting from the games themselves
needs nothing stored besides them, and holds across restarts.
"""

from __future__ import annotations

from dataclasses import replace

from ruleset import Phase, Problem, ProblemCode
from ruleset.ai import LEVEL_NAMES, Level
from server.admin.backend import CommandFailed
from server.admin.live import LiveBackend, new_game_setup
from server.config.limits import Limits
from server.game.game import Game
from server.model.attendance import Presence
from server.model.names import lookup_key
from server.model.refusals import NO_COMPUTER_GAMES, Refused
from server.model.snapshot import GameSnapshot
from server.model.timer_settings import TimerSettings

COMPUTER_PLAYERS_MAX = 5
TURN_LENGTH_MIN = 60  # seconds
TURN_LENGTH_MAX = 7 * 86400
NAME_PREFIX = "vs-computer-"


def _bad(message: str) -> Refused:
    return Refused(Problem(ProblemCode.FRAME, message))


def computer_game_request(players: object, level: object, turn_length: object) -> tuple[int, Level, int]:
    """The checked request: (computer players, level, turn length in seconds); Refused (FRAME)
    with a one-line reason for anything else."""
    if isinstance(players, str) and players.strip().isdigit():
        players = int(players)
    if isinstance(players, bool) or not isinstance(players, int) or not 1 <= players <= COMPUTER_PLAYERS_MAX:
        raise _bad(f"computer_players must be a whole number from 1 to {COMPUTER_PLAYERS_MAX}.")
    if not isinstance(level, str) or level.strip().lower() not in LEVEL_NAMES:
        raise _bad(f"level must be one of {', '.join(LEVEL_NAMES)}.")
    if isinstance(turn_length, str) and turn_length.strip().isdigit():
        turn_length = int(turn_length)
    if (
        isinstance(turn_length, bool)
        or not isinstance(turn_length, int)
        or not TURN_LENGTH_MIN <= turn_length <= TURN_LENGTH_MAX
    ):
        raise _bad(
            f"turn_length must be a number of seconds from {TURN_LENGTH_MIN} to {TURN_LENGTH_MAX} (7 days)."
        )
    return players, Level(level.strip().lower()), turn_length


def against_the_computer(snapshot: GameSnapshot) -> tuple[str, bool] | None:
    """The account playing the one seat of a game against the computer that is not a computer
    player's, and whether it still plays it (False: resigned or removed; the computer players
    play on until the game ends, at each deadline). None: the game is over, or is not one."""
    if snapshot.phase is Phase.OVER:
        return None
    people = [
        player
        for player in snapshot.owners
        if (seat := snapshot.attendance.get(player)) is None or seat.presence is not Presence.COMPUTER
    ]
    if len(people) != 1 or len(snapshot.owners) < 2:
        return None
    seat = snapshot.attendance.get(people[0])
    left = people[0] in snapshot.removed_players or (seat is not None and seat.presence is Presence.RESIGNED)
    return snapshot.owners[people[0]], not left


class ComputerGames:
    """Starts games against the computer on `backend`'s server, within `limits`."""

    def __init__(self, backend: LiveBackend, limits: Limits):
        self.backend = backend
        self.limits = limits
        self._starting: list[str] = []  # account keys of the games being made

    @property
    def offered(self) -> bool:
        return self.limits.computer_games_per_account > 0

    def open_games(self) -> list[tuple[str, bool]]:
        """(account key, still played by it) of each open game against the computer."""
        games = [against_the_computer(game.snapshot) for game in self.backend.directory.games.values()]
        return [(lookup_key(owner) or owner, played) for owner, played in filter(None, games)]

    def _check_room(self, key: str) -> None:
        games = self.open_games() + [(starting, True) for starting in self._starting]
        mine = sum(owner == key and played for owner, played in games)
        if mine >= self.limits.computer_games_per_account:
            raise Refused(
                Problem(
                    ProblemCode.UNAVAILABLE_TEMPORARILY,
                    f"You have {mine} open games against the computer, the most this server allows: "
                    "finish or resign one first.",
                )
            )
        # a game its player left still runs (the computer players play on): it counts here
        if self.limits.computer_games_max and len(games) >= self.limits.computer_games_max:
            raise Refused(
                Problem(
                    ProblemCode.UNAVAILABLE_TEMPORARILY,
                    "This server runs as many games against the computer as it can: try again later.",
                )
            )

    def _free_name(self, skipped: set[str]) -> str:
        taken = set(self.backend.directory.games) | skipped
        number = 1
        while f"{NAME_PREFIX}{number}" in taken:
            number += 1
        return f"{NAME_PREFIX}{number}"

    async def start(self, account: str, computer_players: object, level: object, turn_length: object) -> Game:
        """A new game: `account` (logged in) takes the first seat, `computer_players` computer
        players at `level` the others (as a request gives them: `computer_game_request`); it
        starts at once. Refused when not offered, for bad values or beyond a limit."""
        if not self.offered:
            raise Refused(NO_COMPUTER_GAMES)
        computer_players, level, turn_length = computer_game_request(computer_players, level, turn_length)
        key = lookup_key(account) or account
        self._check_room(key)
        self._starting.append(key)
        try:
            return await self._make(account, computer_players, level, turn_length)
        finally:
            self._starting.remove(key)

    async def _make(self, account: str, computer_players: int, level: Level, turn_length: int) -> Game:
        backend = self.backend
        seats = computer_players + 1
        skipped: set[str] = set()
        for _ in range(3):  # a name taken meanwhile (a game made from the command line): the next
            name = self._free_name(skipped)
            defaults = replace(
                backend.game_defaults,
                timer=TimerSettings(kind="playersfinished", turn_length=turn_length, turn_players_min=seats),
                max_players=seats,
                auto_add=False,
                account_creation=False,  # nobody else joins it, not even before its seats are taken
            )
            others = f"{computer_players} computer player{'s' if computer_players > 1 else ''}"
            try:
                setup = new_game_setup(defaults, name, backend.new_seed(), int(backend.clock.seconds()))
            except CommandFailed as failed:  # the server's [game] settings cannot make a game
                raise Refused(Problem(ProblemCode.UNAVAILABLE_PERMANENTLY, str(failed))) from None
            setup = replace(setup, description=f"{account} against {others} ({level.value})")
            try:
                game = await backend.start_game(setup)
                break
            except CommandFailed:
                skipped.add(name)
        else:
            raise Refused(Problem(ProblemCode.UNAVAILABLE_TEMPORARILY, "No free game name: try again."))
        comment = "started a game against the computer"
        await game.join_account(account, "", comment, creation_setting_applies=False)
        for _ in range(computer_players):
            await game.add_computer_player(level)
        return game
