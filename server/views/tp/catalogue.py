"""The fixed catalogues of a TaE game as protocol messages: order and object descriptions,
the design category, components, properties and planet resources (spec/ruleset.md §3–§4).

They never change while the server runs, so their frames are built once. Their modtime is a
fixed epoch: bump `CATALOGUE_MODTIME` whenever any of them changes, or clients keep stale copies.
"""

from __future__ import annotations

from protocol import (
    Category,
    Component,
    ObjectDesc,
    OrderDesc,
    OrderParamType,
    Property,
    Resource,
)
from protocol import (
    ObjectParamType as P,
)
from protocol.objects import ObjectParamDesc, ObjectParamGroupDesc
from protocol.orders import OrderParamDesc
from protocol.records import IdText
from ruleset.orders import (
    ORDER_DESCRIPTIONS,
    ORDER_NAMES,
    TARGET_PARAMETER_DESCRIPTION,
    TARGET_PARAMETER_NAME,
    OrderType,
)

CATALOGUE_MODTIME = 1_764_000_000

# -- order types (ids 0-4, as tpserver-cpp's TaE registers them) ------------------------------

ORDER_DESCS = {
    int(t): OrderDesc(
        int(t),
        ORDER_NAMES[t],
        ORDER_DESCRIPTIONS[t],
        ()
        if t is OrderType.REINFORCE
        else (OrderParamDesc(TARGET_PARAMETER_NAME, OrderParamType.OBJECT, TARGET_PARAMETER_DESCRIPTION),),
        CATALOGUE_MODTIME,
    )
    for t in OrderType
}

# -- object types (TP04 descriptions; group and parameter names are client-visible, §3.3) ------


def _group(group_id: int, name: str, description: str, *params: tuple[str, int, str]) -> ObjectParamGroupDesc:
    return ObjectParamGroupDesc(
        group_id, name, description, tuple(ObjectParamDesc(n, t, d) for n, t, d in params)
    )


POSITIONAL = _group(
    1,
    "Positional",
    "Describes the position",
    ("Position", P.POSITION_3D, "The position of the object"),
    ("Velocity", P.VELOCITY_3D, "The velocity of the object"),
    ("Size", P.SIZE, "The diameter of the object"),
)
OWNERSHIP = _group(
    2, "Ownership", "The ownership of this object", ("Owner", P.REFERENCE, "The owner of this object")
)
ORDERS = _group(
    3,
    "Orders",
    "The order queues of the object",
    ("Order Queue", P.ORDER_QUEUE, "The queue of orders for this object"),
)

OBJECT_DESCS = {
    0: ObjectDesc(
        0,
        "Universe",
        "The Universe",
        CATALOGUE_MODTIME,
        (
            POSITIONAL,
            _group(
                2,
                "Informational",
                "Information about the universe",
                ("Year", P.INTEGER, "The current turn number"),
            ),
        ),
    ),
    1: ObjectDesc(1, "Galaxy", "A galaxy", CATALOGUE_MODTIME, (POSITIONAL,)),
    2: ObjectDesc(
        2,
        "Star System",
        "A star system",
        CATALOGUE_MODTIME,
        (
            POSITIONAL,
            _group(
                2,
                "Status",
                "The status of the star system",
                ("Inhabitable", P.INTEGER, "1 if colonists other than mining robots can live here"),
                ("Destroyed", P.INTEGER, "1 if a bomber destroyed this system"),
                ("Region", P.INTEGER, "The region the system belongs to, 0 for none"),
            ),
        ),
    ),
    3: ObjectDesc(
        3,
        "Planet",
        "A planet",
        CATALOGUE_MODTIME,
        (
            POSITIONAL,
            OWNERSHIP,
            ORDERS,
            _group(
                4,
                "Resources",
                "The resources of the planet",
                ("Resource List", P.RESOURCE_LIST, "The colonies, artifacts and terrain of the planet"),
            ),
        ),
    ),
    4: ObjectDesc(
        4,
        "Fleet",
        "A fleet",
        CATALOGUE_MODTIME,
        (
            POSITIONAL,
            OWNERSHIP,
            ORDERS,
            _group(
                4,
                "Ships",
                "The ships in the fleet",
                ("Ship List", P.REFERENCE_QUANTITY_LIST, "The ships of the fleet"),
                ("Damage", P.INTEGER, "The damage of the fleet"),
            ),
        ),
    ),
}

# -- designs: one category, nine components, two properties (ruleset.md §3.3) -----------------

SHIPS_CATEGORY = 1
CATEGORIES = {SHIPS_CATEGORY: Category(SHIPS_CATEGORY, CATALOGUE_MODTIME, "Ships", "The Ships category")}

PASSENGERS, BOMBS = 1, 2
PASSENGER_NAMES = (
    "Merchants",
    "Scientists",
    "Settlers",
    "Mining Robots",
    "Merchant Leader",
    "Lead Scientist",
    "Government Official",
    "Mining Foreman",
)
_PASSENGERS_DISPLAY = (
    "(lambda (design bits) (let ((n (floor (list-ref bits 0)))) (cons n (cond "
    + " ".join(f'((= n {i}) "{name}")' for i, name in enumerate(PASSENGER_NAMES, start=1))
    + ' (else "Nobody")))))'
)
PROPERTIES = {
    PASSENGERS: Property(
        PASSENGERS,
        CATALOGUE_MODTIME,
        (SHIPS_CATEGORY,),
        0,
        "Passengers",
        "Passengers",
        "Who travels in this ship",
        _PASSENGERS_DISPLAY,
        '(lambda (design) (cons #t ""))',
    ),
    BOMBS: Property(
        BOMBS,
        CATALOGUE_MODTIME,
        (SHIPS_CATEGORY,),
        0,
        "Bombs",
        "Bombs",
        "The bombs this ship carries",
        "(lambda (design bits) (let ((n (floor (list-ref bits 0)))) (cons n (number->string n))))",
        '(lambda (design) (cons #t ""))',
    ),
}
COMPONENT_NAMES = (
    "MerchantCargo",
    "ScientistCargo",
    "SettlerCargo",
    "MiningCargo",
    "MerchantLeaderCargo",
    "ScientistLeaderCargo",
    "SettlerLeaderCargo",
    "MiningLeaderCargo",
    "Weapon",
)
WEAPON = 9
COMPONENTS = {
    i: Component(
        i,
        CATALOGUE_MODTIME,
        (SHIPS_CATEGORY,),
        name,
        "Bombs that destroy a star system" if i == WEAPON else f"Carries {PASSENGER_NAMES[i - 1]}",
        '(lambda (design) (cons #t ""))',
        (IdText(BOMBS, "(lambda (design) 1)"),)
        if i == WEAPON
        else (IdText(PASSENGERS, f"(lambda (design) {i})"),),
    )
    for i, name in enumerate(COMPONENT_NAMES, start=1)
}

# -- planet resources (ruleset.md §3.2) ----------------------------------------------------

_RESOURCES = (
    (1, "Uninhabitable planet", "Uninhabitable planets", "Only mining robots can colonize this planet"),
    (2, "Destroyed Star System", "Destroyed Star Systems", "A bomber destroyed this star system"),
    (3, "Alien Artifact", "Alien Artifacts", "An alien artifact: a wildcard in the final scoring"),
    (4, "Monetary Asset", "Monetary Assets", "A merchant colony"),
    (5, "Technological Advancement", "Technological Advancements", "A scientist colony"),
    (6, "Team of People", "Teams of People", "A settler colony"),
    (7, "Raw Material", "Raw Materials", "A mining colony"),
)
RESOURCES = {
    rid: Resource(rid, singular, plural, "", "", text, 0, 0, CATALOGUE_MODTIME)
    for rid, singular, plural, text in _RESOURCES
}
