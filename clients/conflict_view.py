"""The conflict of a combat turn as a client sees it: who fights whom, where, how strong, and which
of my fleets may reinforce; and whether this turn is a combat turn at all (``turn_phase``).

The COMBAT! message posted when a combat turn starts references (spec/protocol.md §7.2) the two
players (the attacker first), both leaders and their systems, and, for an external conflict, the
unification system (R16–R18, R26a). Everything else comes from the board in the cache, as the
server computes it (ruleset ``initial_strength``): in an internal conflict (a revolt, R17) each
leader's strength is the scientist colonies next to it; in an external one (a war, R16) the
colonies of the leaders' kind in each leader's region. Reinforcements are scientist colonists in
an internal conflict and colonists of the leaders' kind in an external one (R18); my fleets the
server lets Reinforce are listed.

Regions: TP04 sends them (the Region parameter); in TP03 they are computed here without the
unification system, which is not a region member while the conflict is pending. For servers whose
messages have no references, REF's COMBAT! sentence gives the names and strengths
(``from_references`` False; leaders and systems are then unknown).
"""

from __future__ import annotations

from dataclasses import dataclass

from protocol import BoardMessage

from .game_api import TaeGame
from .game_messages import COMBAT, object_references, parse_ref_combat, player_references
from .tae_model import REINFORCE, ColonyKind, FleetKind, FleetView, SystemView, compute_regions

__all__ = ["ConflictView", "Side", "running_conflict", "turn_phase"]


@dataclass(frozen=True, slots=True)
class Side:
    """One side of the conflict: the player, their leader and the system it stands on."""

    player_id: int | None
    name: str
    leader_id: int | None = None
    system: SystemView | None = None
    strength: int | None = None

    def to_dict(self, me: int | None) -> dict[str, object]:
        system = self.system
        return {
            "player": self.player_id,
            "name": self.name,
            "me": me is not None and self.player_id == me,
            "leader": self.leader_id,
            "system": None if system is None else {"id": system.id, "x": system.x, "y": system.y},
            "strength": self.strength,
        }


@dataclass(frozen=True, slots=True)
class ConflictView:
    """The running conflict (see the module docstring). ``kind`` is the leaders' kind;
    ``reinforcements`` the colonists that count; ``my_fleets`` my fleets that may Reinforce."""

    turn: int
    internal: bool
    kind: ColonyKind | None
    attacker: Side
    defender: Side
    unification: SystemView | None
    reinforcements: ColonyKind | None
    my_fleets: tuple[int, ...]
    from_references: bool

    def side_of(self, player_id: int | None) -> Side | None:
        for side in (self.attacker, self.defender):
            if player_id is not None and side.player_id == player_id:
                return side
        return None

    def to_dict(self, me: int | None) -> dict[str, object]:
        unification = self.unification
        return {
            "turn": self.turn,
            "type": "internal" if self.internal else "external",
            "leader_kind": self.kind.value if self.kind else None,
            "attacker": self.attacker.to_dict(me),
            "defender": self.defender.to_dict(me),
            "unification": None
            if unification is None
            else {"id": unification.id, "x": unification.x, "y": unification.y},
            "reinforcements": self.reinforcements.value if self.reinforcements else None,
            "my_reinforcements": list(self.my_fleets),
            "tie_goes_to": "defender",
        }


def turn_phase(game: TaeGame) -> str:
    """ "over", "combat" or "normal". A combat turn is one with this turn's COMBAT! message, or
    one TP04's TimeRemaining names so; without either, a turn in which some of my fleets may
    Reinforce, or in which none of them may take any order, is a combat turn."""
    if game.is_over:
        return "over"
    remaining = game.cache.time_remaining
    if remaining is not None and "combat" in (remaining.turn_name or "").lower():
        return "combat"
    if running_conflict(game) is not None:
        return "combat"
    mine = game.my_fleets()
    try:
        reinforce: int | None = game.order_desc(REINFORCE).id
    except KeyError:
        reinforce = None
    if mine and any(reinforce in f.order_types for f in mine):
        return "combat"
    if mine and not any(f.order_types for f in mine):
        return "combat"
    return "normal"


def running_conflict(game: TaeGame) -> ConflictView | None:
    """The conflict fought this turn, from this turn's COMBAT! message; None in a normal turn."""
    turn = game.turn
    if turn is None or game.is_over:
        return None
    posted = game.messages(COMBAT)
    if not posted or posted[-1].turn != turn:
        return None
    message = posted[-1]
    players = player_references(message)
    if len(players) >= 2:
        return _from_references(game, message, players[0], players[1])
    return _from_sentence(game, message)


def _my_reinforcements(game: TaeGame) -> tuple[int, ...]:
    try:
        reinforce = game.order_desc(REINFORCE).id
    except KeyError:
        return ()
    return tuple(f.id for f in game.my_fleets() if reinforce in f.order_types)


def _from_references(game: TaeGame, message: BoardMessage, attacker: int, defender: int) -> ConflictView:
    by_id = {view.id: view for view in game.systems().values()}
    leaders: dict[int, FleetView] = {}
    systems: list[SystemView] = []
    for object_id in object_references(message):
        fleet = game.fleet(object_id)
        if fleet is not None and fleet.kind is FleetKind.LEADER and fleet.owner is not None:
            leaders.setdefault(fleet.owner, fleet)
        elif object_id in by_id:
            systems.append(by_id[object_id])
    standing = {fleet.system_id for fleet in leaders.values()}
    unification = next((s for s in systems if s.id not in standing), None)
    internal = unification is None
    kind = next((f.colony_kind for f in leaders.values() if f.colony_kind is not None), None)
    sides = []
    for player_id in (attacker, defender):
        leader = leaders.get(player_id)
        system = by_id.get(leader.system_id) if leader is not None and leader.system_id is not None else None
        strength = None
        if system is not None and kind is not None:
            strength = _strength(game, system, kind, internal, unification)
        sides.append(
            Side(
                player_id,
                game.player_name(player_id) or f"player {player_id}",
                leader.id if leader is not None else None,
                system,
                strength,
            )
        )
    return ConflictView(
        turn=message.turn,
        internal=internal,
        kind=kind,
        attacker=sides[0],
        defender=sides[1],
        unification=unification,
        reinforcements=ColonyKind.SCIENTIST if internal else kind,
        my_fleets=_my_reinforcements(game),
        from_references=True,
    )


def _from_sentence(game: TaeGame, message: BoardMessage) -> ConflictView | None:
    said = parse_ref_combat(message.body)
    if said is None:
        return None
    ids = {player.name: pid for pid, player in game.cache.players.items()}
    if game.cache.me is not None:
        ids.setdefault(game.cache.me.name, game.cache.me.id)
    return ConflictView(
        turn=message.turn,
        internal=said.internal,
        kind=None,
        attacker=Side(ids.get(said.attacker), said.attacker, strength=said.attacker_strength),
        defender=Side(ids.get(said.defender), said.defender, strength=said.defender_strength),
        unification=None,
        reinforcements=ColonyKind.SCIENTIST if said.internal else None,
        my_fleets=_my_reinforcements(game),
        from_references=False,
    )


def _strength(
    game: TaeGame, system: SystemView, kind: ColonyKind, internal: bool, unification: SystemView | None
) -> int:
    """The ruleset's ``initial_strength``, on the board as the cache shows it."""
    squares = game.systems()
    x, y = system.x, system.y
    if internal:
        around = [squares.get(p) for p in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1))]
        return sum(1 for view in around if view is not None and view.colony is ColonyKind.SCIENTIST)
    region = _region_of(game, system, unification)
    return sum(1 for view in region if view.colony is kind)


def _region_of(game: TaeGame, start: SystemView, unification: SystemView | None) -> list[SystemView]:
    squares = game.systems()
    if game.regions_from_server:
        if not start.region:
            return []
        return [view for view in squares.values() if view.region == start.region]
    regions = compute_regions(squares.values(), without=(unification.id,) if unification is not None else ())
    label = regions.get(start.id)
    if label is None:
        return []
    return [view for view in squares.values() if regions.get(view.id) == label]
