"""Replaying a stored game from its setup and order log, to check what the store holds.

The ruleset is deterministic (ARCHITECTURE.md, Determinism): the setup, the players in the
order they joined (each after the turn they joined at) and the accepted orders of each turn
(in submission order, taken-back ones left out) give every turn again. `replay` recomputes them
and `check_replay` compares with the stored turns: any difference means the store, or the
server, lost or invented something.
"""

from __future__ import annotations

from dataclasses import dataclass

import ruleset
from ruleset import GameState, Order, game_rng, join_rng, resolve_turn
from server.model.store import StoredGame


@dataclass(frozen=True, slots=True)
class ReplayedTurn:
    turn: int
    state: GameState
    messages: tuple
    events: tuple


def _join(state: GameState, stored: StoredGame, after_turn: int) -> GameState:
    for account in sorted(stored.accounts, key=lambda a: a.player_id):
        if stored.join_turns.get(account.player_id, 0) == after_turn and account.player_id > len(
            state.players
        ):
            state, _ = ruleset.add_player(
                state, account.username, join_rng(stored.setup.seed, account.player_id)
            )
    return state


def replay(stored: StoredGame, turns: int | None = None) -> tuple[GameState, list[ReplayedTurn]]:
    """The game's state after `turns` turns (all stored ones by default), from the setup and the
    order log alone, with every replayed turn; players who joined after it are added too."""
    last = stored.turns[-1].turn if stored.turns else 0
    turns = last if turns is None else turns
    live = sorted((e for e in stored.orders if e.seq not in stored.removed_orders), key=lambda e: e.seq)
    state = _join(stored.setup.initial_state(), stored, 0)
    done: list[ReplayedTurn] = []
    for turn in range(1, turns + 1):
        orders = [Order(e.player, e.object_id, e.type, e.target) for e in live if e.turn == turn]
        outcome = resolve_turn(state, orders, game_rng(stored.setup.seed, turn))
        state = _join(outcome.state, stored, turn)
        done.append(ReplayedTurn(turn, outcome.state, outcome.messages, outcome.events))
    return state, done


def check_replay(stored: StoredGame) -> list[str]:
    """Differences between the stored turns and their replay (empty: they agree)."""
    problems = []
    numbers = [t.turn for t in stored.turns]
    if numbers != list(range(1, len(numbers) + 1)):
        problems.append(f"stored turns are not 1..{len(numbers)}: {numbers}")
        return problems
    _, replayed = replay(stored)
    for record, again in zip(stored.turns, replayed):
        if record.state != again.state:
            problems.append(f"turn {record.turn}: the stored state differs from the replay")
        if tuple(record.messages) != tuple(again.messages):
            problems.append(f"turn {record.turn}: the stored messages differ from the replay")
        if tuple(record.events) != tuple(again.events):
            problems.append(f"turn {record.turn}: the stored events differ from the replay")
    late = [e.seq for e in stored.orders if e.turn > len(numbers) + 1]
    if late:
        problems.append(f"orders for turns not yet open: {late}")
    return problems
