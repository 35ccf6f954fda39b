"""The TaE ruleset: Tigris and Euphrates in space, as pure deterministic functions.

No I/O, no clock, no global random, standard library only. The server and the simulator call:

* `new_game(board, seed)` and `add_player(state, name, rng)` to set a game up (R1–R3);
* `allowed_order_types(state, object_id)` and `check_order(state, order, accepted)` when an order
  is probed or inserted (R6–R11) — a `Problem` carries the TP Fail code;
* `resolve_turn(state, orders, game_rng(seed, turn))` to play a turn (R12–R26);
* `visible_to(state, player_id)` for what one player may see (R27).
"""

from .board import DEFAULT_BOARD, DEFAULT_MAP_TEXT, Board, MapError, parse_map
from .execution import Event
from .final_scoring import final_result
from .kinds import Kind, Role, Score
from .messages import Message
from .orders import (
    ORDER_NAMES,
    ORDER_TYPES_BY_NAME,
    Order,
    OrderType,
    Problem,
    ProblemCode,
    acting_players,
    allowed_order_types,
    check_order,
)
from .randomness import game_rng, join_rng
from .regions import label_regions
from .setup import SetupError, add_player, new_game
from .state import Conflict, FinalResult, Fleet, GameState, Phase, Player
from .turn import GameOverError, TurnOutcome, resolve_turn
from .visibility import FleetView, PlayerView, visible_to

__all__ = [
    "Board",
    "Conflict",
    "DEFAULT_BOARD",
    "DEFAULT_MAP_TEXT",
    "Event",
    "ProblemCode",
    "FinalResult",
    "Fleet",
    "GameOverError",
    "GameState",
    "Kind",
    "MapError",
    "Message",
    "ORDER_NAMES",
    "ORDER_TYPES_BY_NAME",
    "Order",
    "OrderType",
    "Phase",
    "Player",
    "Problem",
    "Role",
    "Score",
    "SetupError",
    "TurnOutcome",
    "add_player",
    "acting_players",
    "allowed_order_types",
    "check_order",
    "final_result",
    "game_rng",
    "join_rng",
    "label_regions",
    "new_game",
    "parse_map",
    "resolve_turn",
    "FleetView",
    "PlayerView",
    "visible_to",
]
