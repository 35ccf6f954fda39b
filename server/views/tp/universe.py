"""The Thousand Parsec view of a TaE game: objects, their tree, and what each player sees.

Compatible with tpserver-cpp's TaE (spec/ruleset.md §2–§3, ARCHITECTURE.md § Identities):
object 0 the Universe, 1 the Galaxy, then each board system followed by its planet, then per
player a home system, a home planet and the fleets. Leaders on the board are children of their
star system; every other fleet sits at its owner's home planet. This module builds plain data
from the ruleset's state, once per state (`universe_of`); `server.views.tp.frames` turns it into
protocol messages. What a player may see comes from `ruleset.visible_to` (R27).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ruleset import GameState, Kind
from ruleset.board import UNINHABITABLE
from ruleset.regions import region_of_each_member
from server.model.snapshot import GameSnapshot

UNIVERSE, GALAXY, STAR_SYSTEM, PLANET, FLEET = 0, 1, 2, 3, 4
UNIVERSE_ID, GALAXY_ID = 0, 1

UNIVERSE_SIZE = 1_000_000_000_000
GALAXY_SIZE = 100_000_000_000
SYSTEM_SIZE = 60_000
PLANET_SIZE = 2
FLEET_SIZE = 2
GRID = 80_000

# Planet resources (spec/ruleset.md §3.2).
RES_UNINHABITABLE, RES_DESTROYED, RES_ARTIFACT = 1, 2, 3
RES_COLONY = {Kind.MERCHANT: 4, Kind.SCIENTIST: 5, Kind.SETTLER: 6, Kind.MINING: 7}


@dataclass(frozen=True, slots=True)
class SpaceObject:
    """One object as every player sees it; per-player parts (queues) are looked up separately."""

    id: int
    type: int
    name: str
    size: int
    position: tuple[int, int, int]
    parent: int
    children: tuple[int, ...]
    turn: int = 0  # Universe: the turn counter ("Year")
    inhabitable: int = 0  # Star system status
    destroyed: int = 0
    region: int = 0
    owner: int = 0  # Planet / fleet owner (and its order queue's), 0 = nobody
    resources: tuple[tuple[int, int], ...] = ()
    has_queue: bool = False
    ships: tuple[tuple[int, int], ...] = ()  # (design id, count)


def board_position(x: int, y: int) -> tuple[int, int, int]:
    return (1 + GRID * x, 1 + GRID * (y + 1), 0)


def home_position(player_id: int) -> tuple[int, int, int]:
    return (1 + GRID * player_id, 1, 0)


class Universe:
    """All objects of one game state, built once per state and shared by every session."""

    def __init__(self, state: GameState):
        board = state.board
        self.state = state
        objects: dict[int, SpaceObject] = {}
        leaders_on: dict[int, list[int]] = {}
        for fleet_id, cell in state.leader_at.items():
            leaders_on.setdefault(cell, []).append(fleet_id)
        at_home: dict[int, list[int]] = {}
        for fleet in state.fleets.values():
            if fleet.id not in state.leader_at:
                at_home.setdefault(fleet.owner, []).append(fleet.id)

        labels = region_of_each_member(
            board, state.colonies, state.leader_at.values(), state.unification_cells
        )
        systems = [board.system_id(cell) for cell in range(board.size)]
        systems += [p.home_system for p in state.players]
        objects[UNIVERSE_ID] = SpaceObject(
            UNIVERSE_ID, UNIVERSE, "The Universe", UNIVERSE_SIZE, (0, 0, 0), 0, (GALAXY_ID,), turn=state.turn
        )
        objects[GALAXY_ID] = SpaceObject(
            GALAXY_ID, GALAXY, "The Fertile Galaxy", GALAXY_SIZE, (0, -6000, 0), UNIVERSE_ID, tuple(systems)
        )
        for cell, (x, y) in enumerate(board.coords):
            system_id, planet_id = board.system_id(cell), board.planet_id(cell)
            position = board_position(x, y)
            label = labels.get(cell)
            objects[system_id] = SpaceObject(
                system_id,
                STAR_SYSTEM,
                board.system_name(cell),
                SYSTEM_SIZE,
                position,
                GALAXY_ID,
                (planet_id, *sorted(leaders_on.get(cell, ()))),
                inhabitable=0 if board.terrain[cell] == UNINHABITABLE else 1,
                destroyed=1 if cell in state.destroyed else 0,
                region=0 if label is None else board.system_id(label),
            )
            resources = []
            if board.terrain[cell] == UNINHABITABLE:
                resources.append((RES_UNINHABITABLE, 1))
            if cell in state.destroyed:
                resources.append((RES_DESTROYED, 1))
            if cell in state.artifacts:
                resources.append((RES_ARTIFACT, 1))
            kind = state.colonies.get(cell)
            if kind is not None:
                resources.append((RES_COLONY[kind], 1))
            objects[planet_id] = SpaceObject(
                planet_id,
                PLANET,
                board.planet_name(cell),
                PLANET_SIZE,
                position,
                system_id,
                (),
                resources=tuple(resources),
                has_queue=True,
            )
        for player in state.players:
            position = home_position(player.id)
            objects[player.home_system] = SpaceObject(
                player.home_system,
                STAR_SYSTEM,
                f"{player.name}'s System",
                SYSTEM_SIZE,
                position,
                GALAXY_ID,
                (player.home_planet,),
                inhabitable=1,
                destroyed=1,
            )
            objects[player.home_planet] = SpaceObject(
                player.home_planet,
                PLANET,
                f"{player.name}'s Home Planet",
                PLANET_SIZE,
                position,
                player.home_system,
                tuple(sorted(at_home.get(player.id, ()))),
                owner=player.id,
                has_queue=True,
            )
        for fleet in state.fleets.values():
            at = state.leader_at.get(fleet.id)
            if at is None:
                parent = state.player(fleet.owner).home_planet
                position = home_position(fleet.owner)
            else:
                parent = board.system_id(at)
                position = board_position(*board.coords[at])
            objects[fleet.id] = SpaceObject(
                fleet.id,
                FLEET,
                fleet.name,
                FLEET_SIZE,
                position,
                parent,
                (),
                owner=fleet.owner,
                has_queue=True,
                ships=((fleet.id, 1),),
            )
        self.objects = objects
        self.ids = sorted(objects)

    def __iter__(self) -> Iterator[SpaceObject]:
        return (self.objects[i] for i in self.ids)

    def get(self, object_id: int) -> SpaceObject | None:
        return self.objects.get(object_id)


def universe_of(snapshot: GameSnapshot) -> Universe:
    """The objects of the snapshot's state, built once per state (snapshots share it)."""
    return snapshot.of_state("tp-universe", lambda: Universe(snapshot.state))
