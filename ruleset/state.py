"""The state of a game of TaE as immutable values.

`GameState` holds only what cannot be derived: regions (R5) and pending unification systems are
computed from it. The mappings inside a state are never mutated after construction; turn
resolution works on a mutable copy (`ruleset.position.Position`) and freezes a new state.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum

from .board import Board
from .kinds import (
    BOMBER_DESIGN_NAME,
    BOMBER_NAME,
    COLONIST_DESIGN_NAMES,
    COLONIST_FLEET_NAME,
    LEADER_DESIGN_NAMES,
    LEADER_FLEET_NAMES,
    Kind,
    Role,
)

_NO_CELLS: frozenset[int] = frozenset()


class Phase(str, Enum):
    """What the next turn is."""

    NORMAL = "normal"
    COMBAT = "combat"
    OVER = "over"


_COMBAT = Phase.COMBAT  # (a plain name: reading an enum member goes through EnumType's __getattr__ hook)


@dataclass(frozen=True, slots=True)
class Fleet:
    """A colonist fleet, a leader or a bomber. `kind` is None for bombers."""

    id: int
    owner: int
    role: Role
    kind: Kind | None

    @property
    def name(self) -> str:
        if self.kind is None:
            return BOMBER_NAME
        if self.role is Role.COLONIST:
            return COLONIST_FLEET_NAME
        return LEADER_FLEET_NAMES[self.kind]

    @property
    def design_name(self) -> str:
        if self.kind is None:
            return BOMBER_DESIGN_NAME
        if self.role is Role.COLONIST:
            return COLONIST_DESIGN_NAMES[self.kind]
        return LEADER_DESIGN_NAMES[self.kind]

    @property
    def colonist_kind(self) -> Kind:
        """The kind of a colonist or leader (bombers have none: ValueError)."""
        if self.kind is None:
            raise ValueError(f"fleet {self.id} is a bomber, which has no kind")
        return self.kind


@dataclass(frozen=True, slots=True)
class Player:
    """A player: id (from 1, dense), name, home objects and scores (M, T, P, R, A)."""

    id: int
    name: str
    home_system: int
    home_planet: int
    scores: tuple[int, int, int, int, int] = (0, 0, 0, 0, 0)


@dataclass(frozen=True, slots=True)
class Conflict:
    """A queued or running conflict between two leaders of one kind (R16, R17).

    `unification` is the cell of the pending unification system of an external conflict.
    Strengths are None until the conflict starts (R19).
    """

    internal: bool
    kind: Kind
    attacker: int
    defender: int
    unification: int | None = None
    attacker_strength: int | None = None
    defender_strength: int | None = None

    @property
    def reinforcement_kind(self) -> Kind:
        return Kind.SCIENTIST if self.internal else self.kind

    @property
    def started(self) -> bool:
        return self.attacker_strength is not None


class EndReason(str, Enum):
    """Why a game ended."""

    ARTIFACTS = "artifacts"  # at most two artifacts left on the board (R12(3))
    POOL = "pool"  # a refill needed a colonist from an empty pool (R24)
    STALEMATE = "stalemate"  # no colonist fleet had a valid target (R24a)
    OPERATOR = "operator"  # the operator ended the game (`ruleset.end_game`)


@dataclass(frozen=True, slots=True)
class FinalResult:
    """Final scores after wildcard artifacts (R25), the winner(s), by player id, and why the game ended."""

    final: Mapping[int, int]
    distributed: Mapping[int, tuple[int, int, int, int]]
    winners: tuple[int, ...]
    reason: EndReason


@dataclass(frozen=True, slots=True)
class GameState:
    """Everything about a game between two turns.

    * `turn`: turns played so far (the next turn is `turn + 1`).
    * `rotation`: normal turns played so far plus the set-up offset; the next normal turn starts
      with the player at index `rotation % len(players)` in ascending id order (R12).
    * `fleets`: every fleet in existence by id, in ascending id order.
    * `leader_at`: leader fleet id -> cell, for leaders on the board (absent = at home).
    * `colonies`: cell -> kind. Artifact systems are scientist colonies.
    * `artifacts`: cells still carrying an artifact.
    * `conflicts`: queued conflicts, first to be fought first; when `phase` is COMBAT the first
      one has started and is fought in the next turn. When the game is over, the conflicts left
      unfought (R25a): their unification systems stay out of the regions.
    * `removed`: colonists gone from the game (lost wars, bombed colonies, reinforcements).
    """

    board: Board
    seed: int = 0
    turn: int = 0
    phase: Phase = Phase.NORMAL
    rotation: int = 0
    players: tuple[Player, ...] = ()
    fleets: Mapping[int, Fleet] = field(default_factory=dict)
    leader_at: Mapping[int, int] = field(default_factory=dict)
    colonies: Mapping[int, Kind] = field(default_factory=dict)
    artifacts: frozenset[int] = frozenset()
    destroyed: frozenset[int] = frozenset()
    pool: tuple[int, int, int, int] = (0, 0, 0, 0)
    conflicts: tuple[Conflict, ...] = ()
    removed: int = 0
    next_object_id: int = 0
    result: FinalResult | None = None
    # The region labels (R5) turn resolution had computed for exactly these colonies, leaders
    # and conflicts (by identity), so that the next turn need not flood-fill the board again. A
    # cache, not part of the value: not compared, not stored; `replace()` with other pieces
    # makes it stale, and `cached_region_labels` then ignores it.
    region_cache: (
        tuple[Mapping[int, Kind], Mapping[int, int], tuple[Conflict, ...], Mapping[int, int]] | None
    ) = field(default=None, compare=False, repr=False)

    # -- lookups --------------------------------------------------------------------------

    def cached_region_labels(self) -> Mapping[int, int] | None:
        """Cell -> region label of every region member, if turn resolution left them for this state."""
        cache = self.region_cache
        if (
            cache is not None
            and cache[0] is self.colonies
            and cache[1] is self.leader_at
            and cache[2] is self.conflicts
        ):
            return cache[3]
        return None

    def player(self, player_id: int) -> Player:
        return self.players[player_id - 1]

    def has_player(self, player_id: int) -> bool:
        return 1 <= player_id <= len(self.players)

    def player_by_name(self, name: str) -> Player | None:
        for player in self.players:
            if player.name == name:
                return player
        return None

    def fleets_of(self, player_id: int) -> list[Fleet]:
        return [f for f in self.fleets.values() if f.owner == player_id]

    def hand(self, player_id: int) -> list[Fleet]:
        """The player's colonist fleets, in ascending id."""
        return [f for f in self.fleets.values() if f.owner == player_id and f.role is Role.COLONIST]

    def leader(self, player_id: int, kind: Kind) -> Fleet | None:
        for f in self.fleets.values():
            if f.owner == player_id and f.role is Role.LEADER and f.kind is kind:
                return f
        return None

    def rotation_order(self) -> tuple[int, ...]:
        """Player ids in the order their orders run in the next normal turn."""
        ids = [p.id for p in self.players]
        if not ids:
            return ()
        start = self.rotation % len(ids)
        return tuple(ids[start:] + ids[:start])

    @property
    def unification_cells(self) -> frozenset[int]:
        """Pending unification systems: cells of queued external conflicts (R16)."""
        if not self.conflicts:
            return _NO_CELLS
        return frozenset(c.unification for c in self.conflicts if c.unification is not None)

    @property
    def active_conflict(self) -> Conflict | None:
        """The conflict fought in the next turn, when that turn is a combat turn."""
        if self.phase is _COMBAT and self.conflicts:
            return self.conflicts[0]
        return None
