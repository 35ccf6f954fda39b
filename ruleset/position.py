"""A mutable working copy of a game state, used while a turn is resolved.

It keeps the derived region labels (R5) cached and up to date in place: adding a member extends
or merges labels, removing members relabels only the regions they were in (which may split). It also
remembers what earlier orders of the turn did to each system, so that a later order that fails
because of it can say so (R26a).
"""

from __future__ import annotations

from . import messages as text
from .board import Board
from .kinds import Kind, Role
from .messages import Phrase
from .regions import label_regions
from .state import Conflict, FinalResult, Fleet, GameState, Phase, Player

_SCIENTIST = Kind.SCIENTIST  # (a plain name: reading an enum member goes through EnumType's __getattr__ hook)


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
        # What the turn's orders did so far: system -> who changed it last (player, and the fleet
        # id and name when a fleet did); leaders that moved.
        self.changed_by: dict[int, tuple[int, int | None, str]] = {}
        self.arrived: set[int] = set()
        cached = state.cached_region_labels()
        self._labels: dict[int, int] | None = None if cached is None else dict(cached)
        # (computed now: `conflicts_changed` compares it with the systems after a change)
        unification: set[int] = set()
        for conflict in self.conflicts:
            if conflict.unification is not None:
                unification.add(conflict.unification)
        self._unification: set[int] | None = unification
        self._bordering: dict[int, set[int]] = {}  # cell -> bordering region labels, for _labels
        self._region_leaders: dict[int, list[int]] | None = None  # label -> its leaders, for _labels
        self._players: dict[int, Phrase] = {}

    # -- regions -------------------------------------------------------------------------

    @property
    def unification_cells(self) -> set[int]:
        """Pending unification systems: cells of queued external conflicts (R16)."""
        if self._unification is None:
            self._unification = {c.unification for c in self.conflicts if c.unification is not None}
        return self._unification

    def conflicts_changed(self) -> None:
        """Call after the conflict queue changes: pending unification systems may have changed.

        A system that stopped being one becomes a region member; one that became one leaves."""
        before = self.unification_cells
        self._unification = None
        after = self.unification_cells
        if self._labels is None:
            return
        self._remove_members(after - before)
        for cell in sorted(before - after):
            if cell in self.colonies or cell in self.leader_on:
                self.add_member(cell)

    def labels(self) -> dict[int, int]:
        """Cell -> region label for every region member."""
        if self._labels is None:
            members = set(self.colonies)
            members.update(self.leader_on)
            members.difference_update(self.unification_cells)
            self._labels = label_regions(self.board, members)
        return self._labels

    def _remove_members(self, cells: set[int]) -> None:
        """`cells` stopped being members: relabel what is left of the regions they were in."""
        labels = self._labels
        if labels is None:
            return
        touched: set[int] = set()
        for cell in cells:
            label = labels.pop(cell, None)
            if label is None:
                continue
            self._bordering.clear()
            # A member with at most one neighbour in its region, which is not the region's label
            # (its lowest cell), leaves the rest connected and labelled as it was.
            linked = 0
            for n in self.neighbours[cell]:
                if labels.get(n) == label:
                    linked += 1
            if linked > 1 or label == cell:
                touched.add(label)
        if not touched:
            return
        self._region_leaders = None  # (a leader leaving the board has forgotten it already)
        rest = {cell for cell, label in labels.items() if label in touched}
        for cell in rest:
            del labels[cell]
        neighbours = self.neighbours
        for start in sorted(rest):
            if start in labels:
                continue
            labels[start] = start
            stack = [start]
            while stack:
                for n in neighbours[stack.pop()]:
                    if n in rest and n not in labels:
                        labels[n] = start
                        stack.append(n)

    def add_member(self, cell: int) -> None:
        """`cell` became a member: extend or merge the cached labels without a full recount."""
        labels = self._labels
        if labels is None:
            return
        self._bordering.clear()
        around = set()
        for n in self.neighbours[cell]:  # (a loop: a comprehension is a call of its own in 3.11)
            label = labels.get(n)
            if label is not None:
                around.add(label)
        if not around:
            labels[cell] = cell
            return
        target = min(min(around), cell)
        labels[cell] = target
        if len(around) == 1 and target in around:
            return
        self._region_leaders = None
        # The regions that merged touch `cell`: relabel their members by a walk from it, rather
        # than a pass over every member of the board.
        stale = around - {target}
        neighbours = self.neighbours
        stack = [cell]
        while stack:
            for n in neighbours[stack.pop()]:
                if labels.get(n) in stale:
                    labels[n] = target
                    stack.append(n)

    def bordering_regions(self, cell: int) -> set[int]:
        """Labels of the regions orthogonally next to `cell` (do not change the set returned)."""
        found = self._bordering.get(cell)
        if found is None:
            labels = self.labels()
            found = self._bordering[cell] = set()
            for n in self.neighbours[cell]:
                label = labels.get(n)
                if label is not None:
                    found.add(label)
        return found

    # -- leaders -------------------------------------------------------------------------

    def leaders_in(self, label: int, kind: Kind | None = None) -> list[int]:
        """Leader fleet ids on the board in region `label` (of `kind`, if given), ascending."""
        found = [
            fid
            for fid in self._leaders_by_region().get(label, ())
            if kind is None or self.fleets[fid].kind is kind
        ]
        found.sort()
        return found

    def _leaders_by_region(self) -> dict[int, list[int]]:
        """Region label -> the leaders on the board in it (kept until a member or a leader changes)."""
        found = self._region_leaders
        if found is None:
            labels = self.labels()
            found = {}
            for fid, cell in self.leader_at.items():
                label = labels.get(cell)
                if label is not None:
                    found.setdefault(label, []).append(fid)
            self._region_leaders = found
        return found

    def acting_leaders(self, label: int) -> dict[Kind, int]:
        """For each kind, the leader that acts for region `label` (R13, R19a).

        While an internal conflict is pending, the region holds two leaders of that kind: the
        incumbent (the defender) acts, the challenger does not. Otherwise the lowest id acts.
        """
        found: dict[Kind, list[int]] = {}
        fleets = self.fleets
        for fid in self._leaders_by_region().get(label, ()):
            kind = fleets[fid].kind
            assert kind is not None
            found.setdefault(kind, []).append(fid)
        acting: dict[Kind, int] = {}
        for kind, fids in found.items():
            if len(fids) > 1:
                challengers = {c.attacker for c in self.conflicts if c.internal}
                fids = [fid for fid in fids if fid not in challengers] or fids
            acting[kind] = min(fids)
        return acting

    def the_leader(self, label: int, kind: Kind) -> int | None:
        """The leader of `kind` that acts for region `label` (`acting_leaders`)."""
        return self.acting_leaders(label).get(kind)

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
        self._region_leaders = None
        self.leader_at[fleet_id] = cell
        self.leader_on[cell] = fleet_id
        self.add_member(cell)

    def send_home(self, fleet_id: int) -> None:
        self._region_leaders = None
        cell = self.leader_at.pop(fleet_id, None)
        if cell is not None:
            del self.leader_on[cell]
            self._remove_members({cell})

    def borders_scientist(self, cell: int) -> bool:
        colonies = self.colonies
        return any(colonies.get(n) is _SCIENTIST for n in self.neighbours[cell])

    def withdraw_unsupported_leaders(self) -> list[tuple[int, int]]:
        """R21: leaders with no orthogonally adjacent scientist colony return home.

        Returns (leader, the cell it left) for each, in ascending leader id."""
        gone = sorted((fid, cell) for fid, cell in self.leader_at.items() if not self.borders_scientist(cell))
        self._region_leaders = None
        for fid, cell in gone:
            self.leader_at.pop(fid)
            del self.leader_on[cell]
        self._remove_members({cell for _, cell in gone})
        return gone

    # -- colonies and fleets -------------------------------------------------------------

    def remove_colonies(self, cells: list[int]) -> None:
        """Colonies removed from the game (bombed, lost in a war); their systems become empty."""
        for cell in cells:
            if self.colonies.pop(cell, None) is not None:
                self.removed += 1
            self.artifacts.discard(cell)
        self._remove_members(set(cells))

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
        found = self._players.get(player_id)
        if found is None:
            found = self._players[player_id] = text.player(player_id, self.names[player_id])
        return found

    def changer(self, cell: int) -> Phrase | None:
        """Who changed `cell` earlier this turn: "bo" (a colony) or "bo's Bomber"; None if nobody."""
        change = self.changed_by.get(cell)
        if change is None:
            return None
        player_id, fleet_id, fleet_name = change
        if fleet_id is None:
            return self.player(player_id)
        return text.piece(fleet_id, fleet_name, player_id, self.names[player_id])

    def piece(self, fleet_id: int, viewer: int | None = None) -> Phrase:
        """A fleet with its owner: "bo's Mining Leader" ("your Mining Leader" for `viewer`)."""
        fleet = self.fleets[fleet_id]
        return text.piece(fleet_id, fleet.name, fleet.owner, self.names[fleet.owner], viewer)

    # -- freezing ------------------------------------------------------------------------

    def freeze(
        self, *, turn: int, rotation: int, phase: Phase, result: FinalResult | None = None
    ) -> GameState:
        base = self.base
        scores = self.scores
        # A player whose scores did not change this turn is the same value: kept, not rebuilt.
        players = tuple(
            p
            if list(p.scores) == scores[p.id]
            else Player(p.id, p.name, p.home_system, p.home_planet, _scores(scores[p.id]))
            for p in base.players
        )
        conflicts = tuple(self.conflicts)
        labels = self._labels
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
            conflicts=conflicts,
            removed=self.removed,
            next_object_id=self.next_object_id,
            result=result,
            region_cache=None if labels is None else (self.colonies, self.leader_at, conflicts, labels),
        )


def _scores(values: list[int]) -> tuple[int, int, int, int, int]:
    return values[0], values[1], values[2], values[3], values[4]
