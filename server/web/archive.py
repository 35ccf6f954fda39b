"""Played turns read back from the game store, for the history and the past-turn pages.

`StoreArchive(store).load_turn(game_id, turn)` uses the store's own `load_turn` when it has one.
A store without it gives every turn of a game at once (`load_games([id], all_states=True)`);
those are kept, so a game's history is read from the database once per process, and only for
the turns played before the process started (later ones come with the snapshots).
"""

from __future__ import annotations

from typing import Any

from twisted.internet import defer

from ..store import TurnRecord


class StoreArchive:
    def __init__(self, store: Any):
        self.store = store
        self._turns: dict[int, dict[int, TurnRecord]] = {}

    def load_turn(self, game_id: int, turn: int) -> Any:
        direct = getattr(self.store, "load_turn", None)
        if direct is not None:
            return direct(game_id, turn)
        known = self._turns.get(game_id)
        if known is not None and turn in known:
            return known[turn]
        d = defer.maybeDeferred(self.store.load_games, [game_id], all_states=True)

        def loaded(games) -> TurnRecord | None:
            self._turns[game_id] = {r.turn: r for g in games if g.game_id == game_id for r in g.turns}
            return self._turns[game_id].get(turn)

        return d.addCallback(loaded)
