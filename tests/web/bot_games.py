"""Whole games played by the simulator's random players through the web tests' FakeGame."""

from __future__ import annotations

from ruleset import Phase, game_rng
from ruleset.simulator import RandomPlayer


def play_turn(game, strategy: RandomPlayer) -> None:
    """Every player gives the bot's orders (through the game's checks), then all who act finish."""
    state = game.state
    if state.phase is Phase.OVER:
        return
    turn = state.turn + 1
    for player in state.players:
        for order in strategy(state, player.id, game_rng(game.setup.seed, turn, f"player {player.id}")):
            game.insert_order(player.id, order.fleet, -1, order.type, order.target).addErrback(lambda _: None)
    acting = [pid for pid in game.snapshot.acting_players()]
    for pid in acting[:-1]:
        game.finish_turn(pid)
    if acting:
        game.finish_turn(acting[-1])
    if game.state.turn < turn:  # nobody acts (cannot happen in TaE, but never loop)
        game.end_turn()


def play(game, max_turns: int = 600, every=None) -> None:
    """Play until the game is over (or `max_turns`); `every(game)` runs after each turn."""
    strategy = RandomPlayer()
    while game.state.phase is not Phase.OVER and game.state.turn < max_turns:
        play_turn(game, strategy)
        if every is not None:
            every(game)
