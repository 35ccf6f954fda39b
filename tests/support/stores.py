"""Test helpers around a game store."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from server.model.writes import StoreTurn


def hold_turns(store: Any, answer: Callable[[], Any]) -> Callable[[], None]:
    """Make the store answer every end of turn with `answer()` (a Deferred that never fires: a
    commit under way or a process that died; one the test fires or fails later), other writes as
    before. Returns the call that puts the store back."""
    write = store.write

    def held(game_id: int, game_write) -> Any:
        if any(isinstance(step, StoreTurn) for step in game_write.steps):
            return answer()
        return write(game_id, game_write)

    store.write = held
    return lambda: setattr(store, "write", write)


def on_writes_with(monkeypatch: Any, store: Any, step_type: type, answer: Callable[..., Any]) -> None:
    """Make every write of the store that has a step of `step_type` (an account, a finished
    flag …) answered by `answer(write, game_id, game_write)`, where `write` is the store's own
    write: a test makes it fail (the database is away) or pass it on."""
    write = store.write

    def routed(game_id: int, game_write) -> Any:
        if any(isinstance(step, step_type) for step in game_write.steps):
            return answer(write, game_id, game_write)
        return write(game_id, game_write)

    monkeypatch.setattr(store, "write", routed)
