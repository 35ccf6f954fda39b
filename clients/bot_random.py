"""``RandomStrategy``: random legal orders from a ``View``, the baseline the bot is measured
against over the wire (``tae-client bot --strategy random``)."""

from __future__ import annotations

import random

from .bot_board import Board, Geometry
from .bot_view import (
    MINING,
    ORDERS_PER_TURN,
    Intent,
    Pos,
    Strategy,
    View,
)
from .tae_model import ATTACK, COLONIZE, COLONIZE_MINING, MOVE, REINFORCE, FleetKind

__all__ = ["RandomStrategy"]


class RandomStrategy(Strategy):
    """Random legal orders from the view: up to two colonizations or leader moves a turn, a
    rare bombing, a random number of reinforcements in a conflict. A baseline over the wire."""

    def __init__(
        self, seed: int | None = None, move_chance: float = 0.2, attack_chance: float = 0.03
    ) -> None:
        self.rng = random.Random(seed)
        self.move_chance = move_chance
        self.attack_chance = attack_chance

    def decide(self, view: View) -> list[Intent]:
        if view.over:
            return []
        rng = self.rng
        eligible = [f.id for f in view.fleets if REINFORCE in f.allowed]
        if eligible:
            return [
                Intent(fid, REINFORCE, None, 0.0, "random")
                for fid in sorted(rng.sample(eligible, rng.randint(0, len(eligible))))
            ]
        geo = Geometry(view.squares)
        board = Board.from_view(view, geo)
        squares = sorted(geo.terrain)
        fleets = [f for f in view.fleets if not f.queued and f.allowed]
        rng.shuffle(fleets)
        intents: list[Intent] = []
        used: set[Pos] = set()
        for fleet in fleets:
            if len(intents) >= ORDERS_PER_TURN:
                break
            if fleet.role is FleetKind.LEADER and MOVE in fleet.allowed:
                if rng.random() >= self.move_chance:
                    continue
                lifted = board.copy()
                lifted.lift(fleet.id)
                options = [p for p in squares if p not in used and lifted.can_move_to(p)]
                order = MOVE
            elif fleet.role is FleetKind.BOMBER and ATTACK in fleet.allowed:
                if rng.random() >= self.attack_chance:
                    continue
                options = [
                    p
                    for p in squares
                    if p not in used and board.can_attack(p) and (p in board.colony or p in board.at_pos)
                ]
                order = ATTACK
            elif fleet.role is FleetKind.COLONIST and fleet.kind is not None:
                order = COLONIZE_MINING if fleet.kind is MINING else COLONIZE
                if order not in fleet.allowed:
                    continue
                options = [p for p in squares if p not in used and board.can_colonize(p, fleet.kind)]
            else:
                continue
            if options:
                pos = rng.choice(options)
                used.add(pos)
                intents.append(Intent(fleet.id, order, geo.system_id[pos], 0.0, "random"))
        return intents
