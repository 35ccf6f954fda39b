"""Creating a game and adding players (R1–R3)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace

from . import messages as text
from .board import DEFAULT_BOARD, Board
from .kinds import FULL_POOL, HAND_SIZE, KINDS, STARTING_BOMBERS, Kind, Role
from .messages import Message
from .pool import draw
from .state import Fleet, GameState, Phase, Player

SERVER_NAME = "tpserver-tae"


class SetupError(ValueError):
    """A game or player that cannot be set up (for example a pool too small for a hand)."""


def new_game(board: Board = DEFAULT_BOARD, seed: int = 0, pool: Sequence[int] = FULL_POOL) -> GameState:
    """A game with no players: the board's artifact systems are scientist colonies (R1)."""
    if len(pool) != 4 or any(n < 0 for n in pool):
        raise SetupError("a pool has four counts, none below zero")
    artifacts = board.artifact_cells()
    return GameState(
        board=board,
        seed=seed,
        colonies={cell: Kind.SCIENTIST for cell in artifacts},
        artifacts=frozenset(artifacts),
        pool=(pool[0], pool[1], pool[2], pool[3]),
        next_object_id=board.first_free_id,
    )


def can_deal_hand(state: GameState) -> bool:
    """Whether the pool holds enough colonists to deal a new player a hand (R2, R3): a game
    refuses a player before `add_player` would fail with "the pool is too small"."""
    return state.phase is not Phase.OVER and sum(state.pool) >= HAND_SIZE


def add_player(
    state: GameState,
    name: str,
    rng: random.Random | None = None,
    *,
    hand: Sequence[Kind] | None = None,
    bombers: int = STARTING_BOMBERS,
    scores: Sequence[int] = (0, 0, 0, 0, 0),
    server_name: str = SERVER_NAME,
) -> tuple[GameState, tuple[Message, ...]]:
    """Add a player (R2): home system and planet, colonists, 4 leaders, bombers; ids in REF's order.

    Without `hand`, 6 colonists are drawn from the pool with `rng`. A given `hand` is taken as is
    and does not touch the pool (scenario files state the pool separately).
    """
    if state.phase is Phase.OVER:
        raise SetupError("the game is over")
    if not name or any(p.name == name for p in state.players):
        raise SetupError(f"player name {name!r} is empty or already taken")
    if hand is not None and len(hand) > HAND_SIZE:
        raise SetupError(f"a hand holds at most {HAND_SIZE} colonists")
    if bombers < 0:
        raise SetupError("bombers cannot be negative")
    if len(scores) != 5 or any(s < 0 for s in scores):
        raise SetupError("scores are five counts, none below zero")
    player_id = len(state.players) + 1
    next_id = state.next_object_id
    pool = list(state.pool)
    if hand is None:
        if rng is None:
            raise SetupError("drawing a hand needs a random stream")
        drawn: list[Kind] = []
        for _ in range(HAND_SIZE):
            kind = draw(pool, rng)
            if kind is None:
                raise SetupError("the pool is too small to deal a hand")
            drawn.append(kind)
        hand = drawn
    player = Player(
        player_id, name, next_id, next_id + 1, (scores[0], scores[1], scores[2], scores[3], scores[4])
    )
    next_id += 2
    fleets = dict(state.fleets)
    for kind in hand:
        fleets[next_id] = Fleet(next_id, player_id, Role.COLONIST, Kind(kind))
        next_id += 1
    for kind in KINDS:
        fleets[next_id] = Fleet(next_id, player_id, Role.LEADER, kind)
        next_id += 1
    for _ in range(bombers):
        fleets[next_id] = Fleet(next_id, player_id, Role.BOMBER, None)
        next_id += 1
    new_state = replace(
        state,
        players=state.players + (player,),
        fleets=fleets,
        pool=(pool[0], pool[1], pool[2], pool[3]),
        next_object_id=next_id,
    )
    posted = [text.message(player_id, state.turn, text.WELCOME, text.welcome(server_name))]
    joined = text.new_player(text.player(player_id, name))
    posted.extend(text.message(other.id, state.turn, text.NEW_PLAYER, joined) for other in state.players)
    return new_state, tuple(posted)
