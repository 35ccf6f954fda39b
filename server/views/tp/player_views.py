"""What one player may see of a snapshot (R27), as the ruleset decides it, computed once per state.

Player id 0 is nobody: the public view (spectators, the web game page) shows every object and no
colonist type and no score of anyone.
"""

from __future__ import annotations

from ruleset import PlayerView, visible_to
from server.model.snapshot import GameSnapshot

PUBLIC = 0


def player_view(snapshot: GameSnapshot, viewer: int) -> PlayerView:
    """`ruleset.visible_to(snapshot.state, viewer)`, shared by every reader of that state."""
    return snapshot.of_state(("player-view", viewer), lambda: visible_to(snapshot.state, viewer))
