"""The TaE ruleset: Tigris and Euphrates in space, as pure deterministic functions.

No I/O, no clock, no global random, standard library only (the scenario tool in
`ruleset.scenario` reads files and is the one exception). The server and the simulator call:

* `new_game(board, seed)` and `add_player(state, name, join_rng(seed, player))` to set a game up
  (R1–R3);
* `allowed_order_types(state, object_id)` and `check_order(state, order, accepted)` when an order
  is probed or inserted (R6–R11, R7a) — a `Problem` carries the TP Fail code and the reason;
* `acting_players(state, removed)` for who must act in the next turn;
* `resolve_turn(state, orders, game_rng(seed, turn))` to play a turn (R12–R26a);
* `end_game(state, EndReason.OPERATOR)` when an operator ends a game;
* `visible_to(state, player_id)` for what one player may see (R27);
* `final_standing(state)` for the places, scores and categories of a finished game (R25).

The computer player (`ruleset.ai`: `decide(seat_view(state, player), level, rng)`, levels easy,
normal and hard) decides a seat's orders from its view alone; `python -m ruleset.tournament`
plays the levels against each other.

Board messages (`Message`) carry `Mention`s of the systems, players and fleets they name.
"""

from .board import DEFAULT_BOARD, DEFAULT_MAP_TEXT, Board, MapError, parse_map
from .ending import GameOverError, end_game
from .final_scoring import final_result
from .kinds import Kind, Role, Score
from .messages import Mention, MentionKind, Message
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
from .setup import SetupError, add_player, can_deal_hand, new_game
from .standing import FinalStanding, PlayerStanding, final_standing
from .state import Conflict, EndReason, FinalResult, Fleet, GameState, Phase, Player
from .turn import resolve_turn
from .turn_log import Event, TurnOutcome
from .visibility import FleetView, PlayerView, visible_to

__all__ = [
    "Board",
    "Conflict",
    "DEFAULT_BOARD",
    "DEFAULT_MAP_TEXT",
    "EndReason",
    "Event",
    "FinalResult",
    "FinalStanding",
    "Fleet",
    "FleetView",
    "GameOverError",
    "GameState",
    "Kind",
    "MapError",
    "Mention",
    "MentionKind",
    "Message",
    "ORDER_NAMES",
    "ORDER_TYPES_BY_NAME",
    "Order",
    "OrderType",
    "Phase",
    "Player",
    "PlayerStanding",
    "PlayerView",
    "Problem",
    "ProblemCode",
    "Role",
    "Score",
    "SetupError",
    "can_deal_hand",
    "TurnOutcome",
    "acting_players",
    "add_player",
    "allowed_order_types",
    "check_order",
    "end_game",
    "final_result",
    "final_standing",
    "game_rng",
    "join_rng",
    "label_regions",
    "new_game",
    "parse_map",
    "resolve_turn",
    "visible_to",
]
