"""Operator actions on a live game: what each operator command does once its arguments are read.

The operator command table (`server.operating.commands`) names these functions; every channel
reaches them through it: a running server's request desk (`server.operating.desk`), the
command line changing a database without a server (`server.operating.on_database`) and the
admin protocol. They go through the game service like any player's request: an added player
gets the same Welcome messages as one who joined over the network. Every failure the operator
should read is an `OperationError` with a one-line message.
"""

from __future__ import annotations

from collections.abc import Callable

from ruleset import Phase
from ruleset.ai import parse_level
from server.game.game import Game
from server.model.names import kept_apart_from, lookup_key
from server.model.refusals import Refused, clipped
from server.model.store import GameSetup
from server.model.timer_settings import LONGEST_WAIT_S, DeadlineTooFar, NoDeadline, TimerSettingsError
from server.views.board.operator_notices import in_words


class OperationError(Exception):
    """An operation that could not be done; the message is one line for the operator."""


async def add_player_to(
    game: Game, username: str, password_hash: str, email: str = "", comment: str = ""
) -> str:
    """Add a player through the game service (it gets the Welcome messages): a new account, or
    the server's account of that name (it keeps its password). Idempotent for the same name and
    password hash, so a request carried out twice adds one player."""
    existing = game.accounts.get(username)
    if existing is not None:
        if existing.password_hash == password_hash:
            return f"player {username!r} is player {existing.player_id} of game {game.setup.name!r}"
        raise OperationError(f"game {game.setup.name!r} already has a player named {username!r}")
    await game.ready()
    account = await game.find_server_account(username)
    try:
        player = await game.create_account(
            username,
            "",
            email,
            comment,
            creation_setting_applies=False,
            password_hash=password_hash,
        )
    except Refused as refused:
        raise OperationError(
            f"cannot add {username!r} to game {game.setup.name!r}: {refused.message}"
        ) from None
    added = f"player {username!r} added to game {game.setup.name!r} as player {player}"
    if account is not None:  # one account per server: it joins with the password it has
        return f"{added} (the server's account {account[0]!r}, which keeps its own password)"
    return added


async def add_computer_to(game: Game, level_name: str, username: str | None = None) -> str:
    """Add a computer player at `level_name` (`Game.add_computer_player`): a seat the computer
    plays from the start, every turn. Named after its level unless `username` is given."""
    try:
        level = parse_level(level_name)
    except ValueError as error:
        raise OperationError(str(error)) from None
    await game.ready()
    try:
        player = await game.add_computer_player(level, username)
    except Refused as refused:
        shown = "a computer player" if username is None else repr(username)
        raise OperationError(f"cannot add {shown} to game {game.setup.name!r}: {refused.message}") from None
    name = game.snapshot.usernames.get(player, username or "")
    return f"computer player {name!r} ({level.value}) added to game {game.setup.name!r} as player {player}"


async def set_password_of(game: Game, username: str, password_hash: str) -> str:
    """Give a player a new password (its hash, made by the operator's command); doing it twice
    sets the same hash again."""
    await game.ready()
    try:
        player = await game.set_password(username, password_hash=password_hash)
    except Refused:
        raise OperationError(f"game {game.setup.name!r} has no player named {clipped(username)}") from None
    name = game.snapshot.usernames.get(player, username)
    return f"password of player {name!r} (player {player}) of game {game.setup.name!r} changed"


async def join_kept_apart(game: Game, username: str) -> str:
    """Join a player's account kept apart since accounts are one per server (`alice~g2`, made
    by revision 0007a) to the server's account of that name (`alice`): the player then logs in
    with that account's password, in this game too. Doing it twice says so."""
    await game.ready()
    player = game.player_id(username)
    seat = next((a for a in game.accounts.values() if a.player_id == player), None)
    if seat is None:
        raise OperationError(f"game {game.setup.name!r} has no player named {clipped(username)}")
    base = kept_apart_from(seat.account_name)
    if base is None:
        name = game.setup.name
        return f"player {seat.username!r} of game {name!r} plays with the account {seat.account_name!r}"
    main = await game.find_server_account(base)
    if main is None:
        raise OperationError(f"the server has no account named {base!r}")
    if any(lookup_key(a.account_name) == lookup_key(main[0]) for a in game.accounts.values()):
        raise OperationError(f"the account {main[0]!r} plays game {game.setup.name!r} already")
    try:
        await game.move_seat(seat.player_id, main[0], main[1])
    except Refused as refused:
        raise OperationError(f"cannot join {seat.account_name!r} to {main[0]!r}: {refused.message}") from None
    return (
        f"player {seat.username!r} of game {game.setup.name!r} now plays with the account "
        f"{main[0]!r} and its password ({seat.account_name!r} is no more)"
    )


async def remove_player_from(game: Game, username: str) -> str:
    """Remove a player (every player is told); removing them again says so."""
    await game.ready()
    known = game.player_id(username)
    already = known is not None and known in game.removed_players
    try:
        player = await game.remove_player(username)
    except Refused:
        raise OperationError(f"game {game.setup.name!r} has no player named {username!r}") from None
    if already:
        return f"player {username!r} (player {player}) was already removed from game {game.setup.name!r}"
    return f"player {username!r} (player {player}) removed from game {game.setup.name!r}"


def end_turn_refusal(name: str, over: bool, players: int) -> OperationError | None:
    """Why the open turn of a game cannot be ended (it is over, or has no players: tpserver-cpp
    dies of a division by zero there, spec/admin-protocol.md §6), or None. Said alike by the
    game's server and by the command that queues the request for it."""
    if over:
        return OperationError(f"game {name!r} is over")
    if not players:
        return OperationError(f"game {name!r} has no players yet: there is no turn to end")
    return None


async def end_turn_of(game: Game, turn: int | None = None) -> str:
    """End the open turn now (or, given `turn`, make sure that turn has ended). Turns are
    numbered as the TP Universe counts them: the open turn is `game.state.turn`."""
    turn = game.state.turn if turn is None else turn
    await game.ready()  # a turn being resolved now ends first
    if game.state.turn > turn:
        return f"turn {turn} of game {game.setup.name!r} has ended; the game is at turn {game.state.turn}"
    refusal = end_turn_refusal(game.setup.name, game.state.phase is Phase.OVER, len(game.state.players))
    if refusal is not None:
        raise refusal
    # told like every other operator change: a board message to every player (stored first),
    # then the turn's own messages
    await game.tell_turn_ending()
    await game.end_turn()
    if game.state.turn <= turn:
        raise OperationError(f"turn {turn} of game {game.setup.name!r} did not end (see the server log)")
    return f"turn {turn} of game {game.setup.name!r} ended" + (
        " and the game is over" if game.state.phase is Phase.OVER else f"; turn {game.state.turn} begins"
    )


# -- the clock and the settings ------------------------------------------------------------------


async def pause_game(game: Game) -> str:
    """Stop the game's turn clock until `resume_game` (nothing but an operator ends a turn)."""
    if game.state.phase is Phase.OVER:
        raise OperationError(f"game {game.setup.name!r} is over")
    await game.ready()
    if not await game.pause():
        return f"game {game.setup.name!r} is paused already"
    left = game.snapshot.paused_left
    if left is not None:
        kept = f"{in_words(left)} left in turn {game.state.turn}"
    elif game.timer.gives_turns_a_deadline():
        kept = "the turn has no deadline yet: it gets its time when the game resumes"
    else:
        kept = "the turn has no deadline"
    return f"game {game.setup.name!r} paused ({kept}); players were told"


async def resume_game(game: Game) -> str:
    """Start a paused clock again with the time that was left."""
    await game.ready()
    if not await game.resume_clock():
        return f"game {game.setup.name!r} is not paused"
    return f"game {game.setup.name!r} resumed ({_time_left(game)}); players were told"


async def extend_game(game: Game, seconds: float) -> str:
    """Move the open turn's deadline `seconds` later (also while paused); the command table
    has checked `seconds` (more than 0, at most a year)."""
    await game.ready()
    if game.state.phase is Phase.OVER:
        raise OperationError(f"cannot extend game {game.setup.name!r}: the game is over")
    try:
        await game.extend(seconds)
    except NoDeadline as error:
        if game.paused and game.timer.gives_turns_a_deadline():
            raise OperationError(
                f"game {game.setup.name!r} is paused and its open turn has no deadline yet: the turn "
                f"gets its time when it resumes (`tae-server resume {game.setup.name}`); extend it then"
            ) from None
        raise OperationError(
            f"game {game.setup.name!r}: {error} (give it one with `tae-server set "
            f"{game.setup.name} turn_length DURATION`)"
        ) from None
    except DeadlineTooFar:
        raise OperationError(
            f"cannot extend turn {game.state.turn} of game {game.setup.name!r} by {in_words(seconds)}: "
            f"it would end more than {in_words(LONGEST_WAIT_S)} from now, further than Thousand Parsec "
            "clients can be told"
        ) from None
    if game.paused:
        left = game.snapshot.paused_left or 0
        told = f"paused, {in_words(left)} left when resumed"
    else:
        told = _time_left(game)
    return f"turn {game.state.turn} of game {game.setup.name!r} extended by {in_words(seconds)} ({told})"


async def set_setting_of(game: Game, change: Callable[[GameSetup, int], tuple[GameSetup, str]]) -> str:
    """Change settings of a running game: `change(setup, players)` gives the changed setup and
    the change in words (`server.operating.game_settings.changed_setup`), made from the setup
    the game has once no turn is ending."""
    if game.state.phase is Phase.OVER:
        raise OperationError(f"cannot change game {game.setup.name!r}: the game is over")
    await game.ready()
    setup, what = change(game.setup, len(game.state.players))
    if setup == game.setup:
        return f"game {game.setup.name!r}: {what} already"
    clock_touched = setup.timer.moves_the_clock_from(game.setup.timer)
    try:
        await game.change_setup(setup, what)
    except TimerSettingsError as error:
        raise OperationError(f"game {game.setup.name!r}: {error}") from None
    left = f"; {_time_left(game)}" if clock_touched else ""
    return f"game {game.setup.name!r}: {what}{left}; players were told"


async def reinstate_player_in(game: Game, username: str) -> str:
    """Take back a player's removal."""
    await game.ready()
    try:
        player, was_removed = await game.reinstate_player(username)
    except Refused:
        raise OperationError(f"game {game.setup.name!r} has no player named {clipped(username)}") from None
    name = game.snapshot.usernames.get(player, username)
    if not was_removed:
        return f"player {name!r} (player {player}) of game {game.setup.name!r} was not removed"
    return f"player {name!r} (player {player}) reinstated in game {game.setup.name!r}"


def _time_left(game: Game) -> str:
    snapshot = game.snapshot
    if snapshot.paused:
        return "paused"
    seconds = snapshot.seconds_left(game.clock.seconds())
    if seconds >= 0:
        return f"turn {game.state.turn} ends in {in_words(seconds)}"
    if not snapshot.started and game.timer.gives_turns_a_deadline():
        return "no deadline yet: the turn clock starts with the game"
    return "no deadline"
