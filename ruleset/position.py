"""A mutable working copy of a game state, used while a turn is resolved.

It keeps the derived region labels (R5) cached: adding a member extends or merges labels in
place, anything that removes a member drops the cache and the next lookup recomputes it. It also
remembers what earlier orders of the turn did to each system, so that a later order that fails
because of it can say so (R26a).
"""

from __future__ import annotations

from dataclasses import replace

from . import messages as text
from .board import Board
from .kinds import Kind, Role
from .messages import Phrase
from .regions import label_regions
from .state import Conflict, FinalResult, Fleet, GameState, Phase


class Position:
    """The pieces of a game, mutable; `freeze()` gives the next immutable `GameState`."""

    def __init__(self, state: GameState):
        self.base = state
        self.board: Board = state.board
        self.neighbours = state.board.neighbours
        self.names = {p.id: p.name for p in state.players}
        self.scores = {p.id: list(p.scores) for p in state.players}
        self.fleets: dict[int, Fleet] = dict(state.fleets)
        self.leader_at: dict[int, int] = dict(state.leader_at)
        self.leader_on: dict[int, int] = {cell: fid for fid, cell in state.leader_at.items()}
        self.colonies: dict[int, Kind] = dict(state.colonies)
        self.artifacts: set[int] = set(state.artifacts)
        self.destroyed: set[int] = set(state.destroyed)
        self.pool: list[int] = list(state.pool)
        self.conflicts: list[Conflict] = list(state.conflicts)
        self.removed = state.removed
        self.next_object_id = state.next_object_id
        self.phase = state.phase
        # What the turn's orders did so far: system -> who changed it last; leaders that moved.
        self.changed_by: dict[int, Phrase] = {}
        self.arrived: set[int] = set()
        self._labels: dict[int, int] | None = None
        self._unification: set[int] | None = None

    # -- regions -------------------------------------------------------------------------

    @property
    def unification_cells(self) -> set[int]:
        """Pending unification systems: cells of queued external conflicts (R16)."""
        if self._unification is None:
            self._unification = {c.unification for c in self.conflicts if c.unification is not None}
        return self._unification

    def conflicts_changed(self) -> None:
        """Call after the conflict queue changes: pending unification systems may have changed."""
        self._unification = None
        self._labels = None

    def labels(self) -> dict[int, int]:
        """Cell -> region label for every region member."""
        if self._labels is None:
            members = set(self.colonies)
            members.update(self.leader_on)
            members.difference_update(self.unification_cells)
            self._labels = label_regions(self.board, members)
        return self._labels

    def _invalidate(self) -> None:
        self._labels = None

    def add_member(self, cell: int) -> None:
        """`cell` became a member: extend or merge the cached labels without a full recount."""
        labels = self._labels
        if labels is None:
            return
        around = {labels[n] for n in self.neighbours[cell] if n in labels}
        if not around:
            labels[cell] = cell
            return
        target = min(around | {cell})
        labels[cell] = target
        stale = around - {target}
        if stale:
            for member, label in labels.items():
                if label in stale:
                    labels[member] = target

    def bordering_regions(self, cell: int) -> set[int]:
        labels = self.labels()
        return {labels[n] for n in self.neighbours[cell] if n in labels}

    # -- leaders -------------------------------------------------------------------------

    def leaders_in(self, label: int, kind: Kind | None = None) -> list[int]:
        """Leader fleet ids on the board in region `label` (of `kind`, if given), ascending."""
        labels = self.labels()
        found = [
            fid
            for fid, cell in self.leader_at.items()
            if labels.get(cell) == label and (kind is None or self.fleets[fid].kind is kind)
        ]
        found.sort()
        return found

    def the_leader(self, label: int, kind: Kind) -> int | None:
        """The leader of `kind` that acts for region `label` (R13, R19a).

        While an internal conflict is pending, the region holds two leaders of that kind: the
        incumbent (the defender) acts, the challenger does not.
        """
        found = self.leaders_in(label, kind)
        if len(found) > 1:
            challengers = {c.attacker for c in self.conflicts if c.internal}
            found = [fid for fid in found if fid not in challengers] or found
        return found[0] if found else None

    def conflict_leader_in(self, label: int) -> int | None:
        """The lowest-id leader of region `label` that is in a pending conflict (R14, R17), if any."""
        if not self.conflicts:
            return None
        labels = self.labels()
        involved = sorted({fid for c in self.conflicts for fid in (c.attacker, c.defender)})
        for fid in involved:
            cell = self.leader_at.get(fid)
            if cell is not None and labels.get(cell) == label:
                return fid
        return None

    def place_leader(self, fleet_id: int, cell: int) -> None:
        self.leader_at[fleet_id] = cell
        self.leader_on[cell] = fleet_id
        self.add_member(cell)

    def send_home(self, fleet_id: int) -> None:
        cell = self.leader_at.pop(fleet_id, None)
        if cell is not None:
            del self.leader_on[cell]
            self._invalidate()

    def borders_scientist(self, cell: int) -> bool:
        colonies = self.colonies
        return any(colonies.get(n) is Kind.SCIENTIST for n in self.neighbours[cell])

    def withdraw_unsupported_leaders(self) -> list[tuple[int, int]]:
        """R21: leaders with no orthogonally adjacent scientist colony return home.

        Returns (leader, the cell it left) for each, in ascending leader id."""
        gone = sorted((fid, cell) for fid, cell in self.leader_at.items() if not self.borders_scientist(cell))
        for fid, _ in gone:
            self.send_home(fid)
        return gone

    # -- colonies and fleets -------------------------------------------------------------

    def remove_colony(self, cell: int) -> None:
        if self.colonies.pop(cell, None) is not None:
            self.removed += 1
        self.artifacts.discard(cell)
        self._invalidate()

    def consume(self, fleet_id: int) -> None:
        del self.fleets[fleet_id]

    def new_fleet(self, owner: int, role: Role, kind: Kind | None) -> Fleet:
        fleet = Fleet(self.next_object_id, owner, role, kind)
        self.fleets[fleet.id] = fleet
        self.next_object_id += 1
        return fleet

    def owner(self, fleet_id: int) -> int:
        return self.fleets[fleet_id].owner

    # -- names, for messages ------------------------------------------------------------

    def system(self, cell: int) -> Phrase:
        return text.system(self.board, cell)

    def player(self, player_id: int) -> Phrase:
        return text.player(player_id, self.names[player_id])

    def piece(self, fleet_id: int, viewer: int | None = None) -> Phrase:
        """A fleet with its owner: "bo's Mining Leader" ("your Mining Leader" for `viewer`)."""
        fleet = self.fleets[fleet_id]
        return text.piece(fleet_id, fleet.name, fleet.owner, self.names[fleet.owner], viewer)

    # -- freezing ------------------------------------------------------------------------

    def freeze(
        self, *, turn: int, rotation: int, phase: Phase, result: FinalResult | None = None
    ) -> GameState:
        base = self.base
        players = tuple(
            replace(p, scores=(s[0], s[1], s[2], s[3], s[4]))
            for p in base.players
            for s in (self.scores[p.id],)
        )
        return GameState(
            board=base.board,
            seed=base.seed,
            turn=turn,
            phase=phase,
            rotation=rotation,
            players=players,
            fleets=self.fleets,
            leader_at=self.leader_at,
            colonies=self.colonies,
            artifacts=frozenset(self.artifacts),
            destroyed=frozenset(self.destroyed),
            pool=(self.pool[0], self.pool[1], self.pool[2], self.pool[3]),
            conflicts=tuple(self.conflicts),
            removed=self.removed,
            next_object_id=self.next_object_id,
            result=result,
        )
