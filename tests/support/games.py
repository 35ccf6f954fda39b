"""New games for tests: a Game on a memory store and a task.Clock, with no turn deadline."""

from __future__ import annotations

from twisted.internet.task import Clock

from server.game.game import Game
from server.model.memory_store import MemoryStore
from server.model.store import GameSetup
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


def legal_orders(game: Game, player: int) -> list[tuple[int, int, int]]:
    """(fleet, order type, target system) of orders the player may give now, at most one per
    fleet, as the ruleset checks them (each alone: two of them may not go together)."""
    from ruleset import Order, allowed_order_types, check_order

    state = game.snapshot.state
    systems = [state.board.system_id(cell) for cell in range(len(state.board.terrain))]
    found = []
    for fleet in state.fleets_of(player):
        for order_type in allowed_order_types(state, fleet.id):
            allowed = (
                s for s in systems if check_order(state, Order(player, fleet.id, order_type, s), []) is None
            )
            target = next(allowed, None)
            if target is not None:
                found.append((fleet.id, int(order_type), target))
                break
    return found
