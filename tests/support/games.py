"""New games for tests: a Game on a memory store and a task.Clock, with no turn deadline."""

from __future__ import annotations

from twisted.internet.task import Clock

from server.game.game import Game
from server.model.store import GameSetup, MemoryStore
from server.model.timer_settings import TimerSettings


def new_game(name: str = "tae", clock: Clock | None = None, **setup) -> tuple[MemoryStore, Game]:
    """(store, game); `setup` are GameSetup fields (`timer=` gives a deadline)."""
    store = MemoryStore()
    setup.setdefault("timer", TimerSettings(turn_length=0))
    game_setup = GameSetup(name, **setup)
    game_id = store.create_game(game_setup)
    return store, Game(game_id, game_setup, game_setup.initial_state(), store, clock or Clock())


def logs_in(game: Game, username: str, password: str) -> int | None:
    """The player id a login gets, or None when it is refused (the game hashes inline)."""
    from server.model.refusals import Refused

    out: list = []
    game.authenticate(username, password).addBoth(out.append)
    assert out, "the login did not finish"
    if isinstance(out[0], Exception) or hasattr(out[0], "check"):
        if out[0].check(Refused):
            return None
        out[0].raiseException()
    return out[0]
