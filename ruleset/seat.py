"""A seat's view of one turn: what the AI (the stand-in, the computer players, the bot) decides from.

A `SeatView` is the player's R27 view (`visible_to`: their own colonist kinds and scores, the
public board, never an opponent's hand or score), the board, the order types the player's fleets
take now, the orders the player already gave this turn, and the turn order of the coming normal
turn (R12: every player is told it). `seat_view` is the only place that reads the full state, and
it passes on nothing more, so two states that differ only in what the player cannot see give the
same `SeatView`, hence the same decision. A client builds the same value from what the wire told
it (`clients.seat_frames`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .board import Board
from .kinds import Kind
from .orders import Order, OrderType, allowed_order_types
from .state import GameState
from .visibility import PlayerView, visible_to


@dataclass(frozen=True, slots=True)
class SeatView:
    """Everything the AI knows when it plays `player`'s seat for one turn."""

    player: int
    view: PlayerView
    board: Board
    allowed: Mapping[int, tuple[OrderType, ...]]  # own fleet id -> order types it takes now
    accepted: tuple[Order, ...] = ()  # the player's own orders already accepted this turn
    rotation: tuple[int, ...] = ()  # player ids in the order their orders run next normal turn


def seat_view(state: GameState, player: int, accepted: Sequence[Order] = ()) -> SeatView:
    """What `player` sees of `state` (R27), with the order types of their own fleets and their
    own accepted orders of the coming turn (other players' orders are never passed on)."""
    allowed = {
        fleet.id: allowed_order_types(state, fleet.id)
        for fleet in state.fleets.values()
        if fleet.owner == player
    }
    own = tuple(order for order in accepted if order.player == player)
    return SeatView(player, visible_to(state, player), state.board, allowed, own, state.rotation_order())


@dataclass(frozen=True, slots=True)
class PublicPieces:
    """The public pieces of a view, as `ruleset.conditions.refusal` reads them."""

    board: Board
    destroyed: frozenset[int]
    colonies: Mapping[int, Kind]
    artifacts: frozenset[int]
    unification_cells: frozenset[int]


def public_pieces(seat: SeatView) -> PublicPieces:
    view = seat.view
    return PublicPieces(seat.board, view.destroyed, view.colonies, view.artifacts, view.unification)
