"""Operator actions on a live game, shared by every way an operator reaches a game.

The running server's request desk (`server.operator_desk`), the command-line tools working on a
database without a server (`server.operations`) and the admin protocol all carry an action out
through these functions, which go through the game service like any player's request: an added
player gets the same Welcome messages as one who joined over the network. Every failure the
operator should read is an `OperationError` with a one-line message.
"""

from __future__ import annotations

from typing import Any

from ruleset import Phase

from .game import Game
from .refusals import Refused, clipped


class OperationError(Exception):
    """An operation that could not be done; the message is one line for the operator."""


async def add_player_to(game: Game, payload: dict[str, Any]) -> str:
    """Add an account through the game service (it gets the Welcome messages); idempotent for
    the same name and password hash, so a request carried out twice adds one player."""
    username = payload["username"]
    existing = game.accounts.get(username)
    if existing is not None:
        if existing.password_hash == payload["password_hash"]:
            return f"player {username!r} is player {existing.player_id} of game {game.setup.name!r}"
        raise OperationError(f"game {game.setup.name!r} already has a player named {username!r}")
    await game.ready()
    try:
        player = await game.create_account(
            username,
            "",
            payload.get("email", ""),
            payload.get("comment", ""),
            creation_setting_applies=False,
            password_hash=payload["password_hash"],
        )
    except Refused as refused:
        raise OperationError(
            f"cannot add {username!r} to game {game.setup.name!r}: {refused.message}"
        ) from None
    return f"player {username!r} added to game {game.setup.name!r} as player {player}"


async def set_password_of(game: Game, payload: dict[str, Any]) -> str:
    """Give a player a new password (its hash, made by the operator's command); doing it twice
    sets the same hash again."""
    username = payload["username"]
    await game.ready()
    try:
        player = await game.set_password(username, password_hash=payload["password_hash"])
    except Refused:
        raise OperationError(f"game {game.setup.name!r} has no player named {clipped(username)}") from None
    name = game.snapshot.usernames.get(player, username)
    return f"password of player {name!r} (player {player}) of game {game.setup.name!r} changed"


async def remove_player_from(game: Game, username: str) -> str:
    await game.ready()
    try:
        player = await game.remove_player(username)
    except Refused:
        raise OperationError(f"game {game.setup.name!r} has no player named {username!r}") from None
    return f"player {username!r} (player {player}) removed from game {game.setup.name!r}"


async def end_turn_of(game: Game, turn: int | None = None) -> str:
    """End the open turn now (or, given `turn`, make sure that turn has ended). Turns are
    numbered as the TP Universe counts them: the open turn is `game.state.turn`."""
    turn = game.state.turn if turn is None else turn
    if game.state.turn > turn:
        return f"turn {turn} of game {game.setup.name!r} has ended; the game is at turn {game.state.turn}"
    if game.state.phase is Phase.OVER:
        raise OperationError(f"game {game.setup.name!r} is over")
    await game.end_turn()
    if game.state.turn <= turn:
        raise OperationError(f"turn {turn} of game {game.setup.name!r} did not end (see the server log)")
    return f"turn {turn} of game {game.setup.name!r} ended" + (
        " and the game is over" if game.state.phase is Phase.OVER else f"; turn {game.state.turn} begins"
    )
