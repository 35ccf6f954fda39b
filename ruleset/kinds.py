"""The four kinds of colonists and leaders, the five score categories, and fleet roles.

A colonist kind and the leader of the same kind share one value, and that value is also the index
of the score category the kind feeds (Merchant -> Money, Scientist -> Technology,
Settler -> People, Mining -> Raw Materials), so scoring is an index operation.
"""

from enum import IntEnum


class Kind(IntEnum):
    """Colonist and leader kinds, in REF's pool and score-key order."""

    MERCHANT = 0
    SCIENTIST = 1
    SETTLER = 2
    MINING = 3

    @property
    def label(self) -> str:
        """Lower-case name used in scenario files and their results."""
        return _KIND_LABELS[self]


_KIND_LABELS = ("merchant", "scientist", "settler", "mining")
KINDS = tuple(Kind)

# Conflicts queued by one colonization are fought in this order of leader type (R16).
EXTERNAL_CONFLICT_ORDER = (Kind.SETTLER, Kind.SCIENTIST, Kind.MERCHANT, Kind.MINING)


class Score(IntEnum):
    """Indices into a player's score tuple (REF's score keys 1..5, minus one)."""

    MONEY = 0
    TECHNOLOGY = 1
    PEOPLE = 2
    RAW = 3
    ARTIFACTS = 4

    @property
    def label(self) -> str:
        return self.name.lower()


SCORE_TITLES = ("Money", "Technology", "People", "Raw Materials", "Alien Artifacts")
#: The score categories by name, wherever a program reads them (JSON answers, standings).
SCORE_KEYS = ("money", "technology", "people", "raw_materials", "artifacts")


class Role(IntEnum):
    """What a fleet is: it decides the orders it takes."""

    COLONIST = 0
    LEADER = 1
    BOMBER = 2


# The pool a game starts with (R3): 153 colonists besides the 10 artifact systems.
FULL_POOL = (30, 57, 30, 36)
HAND_SIZE = 6
STARTING_BOMBERS = 2

# Fleet names and per-fleet design names, as REF publishes them (ruleset.md §2.3, §2.4).
COLONIST_FLEET_NAME = "Colonist Fleet"
LEADER_FLEET_NAMES = ("Merchant Leader", "Scientist Leader", "Settler Leader", "Mining Leader")
BOMBER_NAME = "Bomber"
COLONIST_DESIGN_NAMES = ("MerchantShip", "ScientistShip", "SettlerShip", "MiningShip")
LEADER_DESIGN_NAMES = ("MerchantLeaderShip", "ScientistLeaderShip", "SettlerLeaderShip", "MiningLeaderShip")
BOMBER_DESIGN_NAME = "Bomber"
