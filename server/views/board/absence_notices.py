"""What everyone is told when a seat changes hands (`server.model.attendance`): every text, in one place.

Each notice goes to every player's board (the player it is about too, who reads it on their
return), names the player with a TP reference, and says who plays the seat now. Notices carry
the number of the last played turn, like the messages of a player joining, so they follow that
turn's messages on every board. Nothing private is in them: no vacation dates, no missed counts
beyond the game's public setting.
"""

from __future__ import annotations

from ruleset import GameState, Message
from ruleset.messages import Phrase, compose, message, player

ABSENT = "Absent player"
BACK = "Player back"
VACATION = "Vacation"
RESIGNED = "Resigned"


def _to_everyone(state: GameState, subject: str, body: Phrase) -> tuple[Message, ...]:
    return tuple(message(p.id, state.turn, subject, body) for p in state.players)


def _who(state: GameState, player_id: int) -> Phrase:
    return player(player_id, state.player(player_id).name)


def became_absent(state: GameState, player_id: int, missed: int) -> tuple[Message, ...]:
    turns = "turn" if missed == 1 else f"{missed} turns in a row"
    return _to_everyone(
        state,
        ABSENT,
        compose(
            _who(state, player_id),
            f" missed {turns}. The stand-in plays their seat from now on, until they give an order"
            " or say they are back.",
        ),
    )


def back_again(state: GameState, player_id: int) -> tuple[Message, ...]:
    """An absent player gave an order, finished a turn or said they are back (never a login)."""
    return _to_everyone(
        state, BACK, compose(_who(state, player_id), " is back and plays their own seat again.")
    )


def vacation_started(state: GameState, player_id: int) -> tuple[Message, ...]:
    return _to_everyone(
        state,
        VACATION,
        compose(
            _who(state, player_id), " is on vacation. The stand-in plays their seat until they are back."
        ),
    )


def vacation_ended(state: GameState, player_id: int) -> tuple[Message, ...]:
    return _to_everyone(
        state, BACK, compose(_who(state, player_id), " is back from vacation and plays their own seat again.")
    )


def resigned(state: GameState, player_id: int) -> tuple[Message, ...]:
    return _to_everyone(
        state,
        RESIGNED,
        compose(_who(state, player_id), " resigned. The stand-in plays their seat to the end of the game."),
    )
