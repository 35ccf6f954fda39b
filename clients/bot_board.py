"""The bot's local model of the board: regions and the rules an order must pass (R4, R5, R9, R10,
R14, R20, R21), recomputed only when the board changes.

``Geometry`` is what never changes in a game (squares, terrain, neighbours, system ids);
``Board`` is a mutable copy of the board as a ``View`` shows it, with derived regions and the
questions a strategy asks ("can a colonist of this kind go here", "which leaders does this
bombing send home"), and the changes an order makes (``colonize``, ``place``, ``bomb``).
"""

from __future__ import annotations

from collections.abc import Mapping

from .bot_view import HABITABLE, KINDS, MINING, SCIENTIST, UNINHABITABLE, LeaderInfo, Pos, Square, View
from .tae_model import ColonyKind

__all__ = ["Board", "Geometry"]


class Geometry:
    """What never changes in a game: squares, terrain, neighbours, system ids."""

    __slots__ = ("terrain", "system_id", "neighbours", "by_system", "positions")

    def __init__(self, squares: Mapping[Pos, Square]):
        self.terrain = {pos: s.terrain for pos, s in squares.items()}
        self.system_id = {pos: s.system_id for pos, s in squares.items()}
        self.by_system = {s.system_id: pos for pos, s in squares.items()}
        self.positions = tuple(sorted(squares))
        self.neighbours = {
            (x, y): tuple(n for n in ((x, y - 1), (x - 1, y), (x + 1, y), (x, y + 1)) if n in squares)
            for (x, y) in squares
        }


_NO_LABELS: frozenset[int] = frozenset()


class Board:
    """A mutable copy of the board as the view shows it, with derived regions (computed once
    per change, with everything the strategy asks about a region)."""

    __slots__ = (
        "geo",
        "colony",
        "artifact",
        "destroyed",
        "leaders",
        "leader_at",
        "at_pos",
        "pending",
        "fighting",
        "_labels",
        "_groups",
        "_leaders_in",
        "_counts",
        "_artifacts",
        "_border",
        "_frontier",
        "_empty",
    )

    def __init__(
        self,
        geo: Geometry,
        colony: dict,
        artifact: set,
        destroyed: set,
        leaders: dict[int, LeaderInfo],
        leader_at: dict[int, Pos],
        pending: set,
    ):
        self.geo = geo
        self.colony = colony
        self.artifact = artifact
        self.destroyed = destroyed
        self.leaders = leaders
        self.leader_at = leader_at
        self.at_pos = {pos: lid for lid, pos in leader_at.items()}
        self.pending = pending
        self.fighting: set[int] = set()  # leaders in a conflict queued this turn (R14, R17)
        self.invalidate()

    @classmethod
    def from_view(cls, view: View, geo: Geometry) -> Board:
        colony = {pos: s.colony for pos, s in view.squares.items() if s.colony is not None}
        artifact = {pos for pos, s in view.squares.items() if s.artifact}
        destroyed = {pos for pos, s in view.squares.items() if s.destroyed}
        leaders = {l.id: l for l in view.leaders}
        leader_at = {l.id: l.pos for l in view.leaders if l.pos is not None and l.pos in view.squares}
        occupied = set(leader_at.values())
        pending = set()
        if view.exact_regions:
            pending = {
                pos
                for pos, s in view.squares.items()
                if s.region == 0 and not s.destroyed and (s.colony is not None or pos in occupied)
            }
        return cls(geo, colony, artifact, destroyed, leaders, leader_at, pending)

    def copy(self) -> Board:
        board = Board(
            self.geo,
            dict(self.colony),
            set(self.artifact),
            set(self.destroyed),
            self.leaders,
            dict(self.leader_at),
            set(self.pending),
        )
        board.fighting = set(self.fighting)
        return board

    def invalidate(self) -> None:
        # Keyed by region label; lookups take a label or None ("no region") and find nothing.
        self._labels: dict[Pos, int] | None = None
        self._groups: dict[int | None, list[Pos]] = {}
        self._leaders_in: dict[int | None, list[int]] = {}
        self._counts: dict[int | None, dict[ColonyKind, int]] = {}
        self._artifacts: dict[int | None, int] = {}
        self._border: dict[Pos, frozenset[int]] = {}
        self._frontier: dict[tuple[int | None, str], frozenset[Pos]] = {}
        self._empty: dict[str, tuple[Pos, ...]] = {}

    # -- regions (R5) ----------------------------------------------------------------------

    @property
    def labels(self) -> dict[Pos, int]:
        if self._labels is None:
            self._derive()
        assert self._labels is not None
        return self._labels

    def _derive(self) -> None:
        members = (set(self.colony) | set(self.at_pos)) - self.destroyed - self.pending
        labels: dict[Pos, int] = {}
        groups: dict[int | None, list[Pos]] = {}
        neighbours, system_id = self.geo.neighbours, self.geo.system_id
        for start in members:
            if start in labels:
                continue
            component, stack = [start], [start]
            labels[start] = -1
            while stack:
                for n in neighbours[stack.pop()]:
                    if n in members and n not in labels:
                        labels[n] = -1
                        component.append(n)
                        stack.append(n)
            label = min(system_id[p] for p in component)
            for p in component:
                labels[p] = label
            groups[label] = component
        counts: dict[int | None, dict[ColonyKind, int]] = {}
        artifacts: dict[int | None, int] = {}
        for pos, kind in self.colony.items():
            at = labels.get(pos)
            if at is not None:
                per = counts.setdefault(at, {})
                per[kind] = per.get(kind, 0) + 1
        for pos in self.artifact:
            at = labels.get(pos)
            if at is not None:
                artifacts[at] = artifacts.get(at, 0) + 1
        leaders_in: dict[int | None, list[int]] = {}
        for pos, lid in self.at_pos.items():
            at = labels.get(pos)
            if at is not None:
                leaders_in.setdefault(at, []).append(lid)
        for found in leaders_in.values():
            found.sort()
        self._labels, self._groups, self._counts = labels, groups, counts
        self._artifacts, self._leaders_in = artifacts, leaders_in

    def cells(self, label: int | None) -> list[Pos]:
        if self._labels is None:
            self._derive()
        return self._groups.get(label, [])

    def bordering(self, pos: Pos) -> frozenset[int]:
        found = self._border.get(pos)
        if found is None:
            labels = self.labels
            found = frozenset(labels[n] for n in self.geo.neighbours[pos] if n in labels) or _NO_LABELS
            self._border[pos] = found
        return found

    def region_of(self, pos: Pos) -> int | None:
        return self.labels.get(pos)

    def leaders_in(self, label: int | None, kind: ColonyKind | None = None) -> list[int]:
        if self._labels is None:
            self._derive()
        found = self._leaders_in.get(label, [])
        if kind is not None:
            leaders = self.leaders
            found = [lid for lid in found if leaders[lid].kind is kind]
        return found

    def the_leader(self, label: int, kind: ColonyKind) -> int | None:
        if self._labels is None:
            self._derive()
        leaders = self.leaders
        for lid in self._leaders_in.get(label, ()):
            if leaders[lid].kind is kind:
                return lid
        return None

    def owner(self, leader_id: int) -> int:
        return self.leaders[leader_id].owner

    def count_kind(self, label: int | None, kind: ColonyKind) -> int:
        if self._labels is None:
            self._derive()
        return self._counts.get(label, {}).get(kind, 0)

    def artifacts_in(self, label: int | None) -> int:
        if self._labels is None:
            self._derive()
        return self._artifacts.get(label, 0)

    def frontier(self, label: int | None, terrain: str) -> frozenset[Pos]:
        """Empty squares next to region ``label`` that border no other region, of one terrain
        ('.' or 'M'; '*' for both): where colonies will join that region alone (R13)."""
        key = (label, terrain)
        found = self._frontier.get(key)
        if found is None:
            cells = set()
            geo_terrain, neighbours = self.geo.terrain, self.geo.neighbours
            for cell in self.cells(label):
                for n in neighbours[cell]:
                    if n in cells or not self.empty(n):
                        continue
                    if terrain != "*" and geo_terrain[n] != terrain:
                        continue
                    if len(self.bordering(n)) == 1:
                        cells.add(n)
            found = frozenset(cells)
            self._frontier[key] = found
        return found

    # -- squares ---------------------------------------------------------------------------

    def empty_squares(self, terrain: str) -> tuple[Pos, ...]:
        """Empty, undestroyed squares of one terrain ('.' or 'M'), or, for 'L', the squares a
        leader may enter if regions allow: empty, habitable, next to a scientist colony (R9)."""
        found = self._empty.get(terrain)
        if found is None:
            geo_terrain = self.geo.terrain
            if terrain == "L":
                found = tuple(p for p in self.empty_squares(HABITABLE) if self.borders_scientist(p))
            else:
                found = tuple(p for p in self.geo.positions if geo_terrain[p] == terrain and self.empty(p))
            self._empty[terrain] = found
        return found

    def empty(self, pos: Pos) -> bool:
        return pos not in self.colony and pos not in self.at_pos and pos not in self.destroyed

    def borders_scientist(self, pos: Pos) -> bool:
        colony = self.colony
        return any(colony.get(n) is SCIENTIST for n in self.geo.neighbours[pos])

    def scientists_around(self, pos: Pos) -> int:
        colony = self.colony
        return sum(1 for n in self.geo.neighbours[pos] if colony.get(n) is SCIENTIST)

    def can_colonize(self, pos: Pos, kind: ColonyKind) -> bool:
        """R10 and the first part of R14 (three leader regions)."""
        if not self.empty(pos) or (kind is MINING) != (self.geo.terrain[pos] == UNINHABITABLE):
            return False
        around = self.bordering(pos)
        if len(around) >= 3 and sum(1 for label in around if self.leaders_in(label)) >= 3:
            return False
        if len(around) >= 2 and self.fighting and any(self.in_conflict(label) for label in around):
            return False
        return True

    def in_conflict(self, label: int) -> bool:
        return any(lid in self.fighting for lid in self.leaders_in(label))

    def can_move_to(self, pos: Pos) -> bool:
        """R9 for a leader already lifted from the board."""
        if not (self.geo.terrain[pos] == HABITABLE and self.empty(pos) and self.borders_scientist(pos)):
            return False
        around = self.bordering(pos)
        return len(around) == 0 or (
            len(around) == 1 and not (self.fighting and self.in_conflict(next(iter(around))))
        )

    def can_attack(self, pos: Pos) -> bool:
        """R20."""
        return pos not in self.destroyed and pos not in self.artifact and pos not in self.pending

    # -- changes ---------------------------------------------------------------------------

    def lift(self, leader_id: int) -> None:
        pos = self.leader_at.pop(leader_id, None)
        if pos is not None:
            del self.at_pos[pos]
            self.invalidate()

    def place(self, leader_id: int, pos: Pos) -> None:
        self.lift(leader_id)
        self.leader_at[leader_id] = pos
        self.at_pos[pos] = leader_id
        self.invalidate()

    def colonize(self, pos: Pos, kind: ColonyKind, war: bool = False) -> None:
        if war:  # R16: the leaders of each kind present on two sides go to war
            around = sorted(self.bordering(pos))
            for kind_at_war in KINDS:
                found = [lid for label in around if (lid := self.the_leader(label, kind_at_war)) is not None]
                if len(found) >= 2:
                    self.fighting.update(found[:2])
            self.pending.add(pos)
        self.colony[pos] = kind
        self.invalidate()

    def bomb(self, pos: Pos) -> list[int]:
        """Destroy a square (R20) and withdraw unsupported leaders (R21); the leaders sent home."""
        self.destroyed.add(pos)
        self.colony.pop(pos, None)
        self.artifact.discard(pos)
        home = []
        if pos in self.at_pos:
            home.append(self.at_pos[pos])
            self.lift(self.at_pos[pos])
        for lid, at in list(self.leader_at.items()):
            if not self.borders_scientist(at):
                home.append(lid)
                self.lift(lid)
        self.invalidate()
        return home
