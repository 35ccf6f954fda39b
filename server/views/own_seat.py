"""What a player is told about their own seat while the stand-in plays it, on every surface.

Reading the game never takes a seat back from the stand-in (`server.model.attendance`): only an
order, a finished turn or "I am back" do. So whatever a player reads while the stand-in plays
for them says so, and how to take the seat back, in these words: the TP Player frame they get
of themselves (its race, `server.views.tp.frames.player_message`, which `tae-client status`
shows), their page and the API's "my view" and seat documents (`server.views.web.documents`).
The note is the player's own: nobody else's frame, page or document carries it (they see only
the public seat label, `GameSnapshot.seat_label`).
"""

from __future__ import annotations

from server.model.attendance import Presence
from server.model.snapshot import GameSnapshot

ABSENT_NOTE = "You missed turns, so the stand-in plays your seat; give an order or say you are back."
VACATION_NOTE = (
    "You are on vacation, so the stand-in plays your seat until it ends; say you are back to end it now."
)
RESIGNED_NOTE = "You resigned, so the stand-in plays your seat to the end of the game."

_NOTES = {
    Presence.ABSENT: ABSENT_NOTE,
    Presence.VACATION: VACATION_NOTE,
    Presence.RESIGNED: RESIGNED_NOTE,
}


def own_seat_note(snapshot: GameSnapshot, player: int) -> str | None:
    """The note for `player` about their own seat, or None when they play it themselves (or
    nobody plays it: a removed player's seat)."""
    if player in snapshot.removed_players:
        return None
    return _NOTES.get(snapshot.presence(player))
