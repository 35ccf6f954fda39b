"""The descriptions the TaE server publishes (spec/ruleset.md §3.1, §4.1), and sample objects.

Shared by the protocol tests and tests/benchmarks/bench_protocol.py.
"""

from __future__ import annotations

from protocol import (
    IntegerParam,
    ObjectDesc,
    ObjectParamDesc,
    ObjectParamGroupDesc,
    OrderDesc,
    OrderParamDesc,
    OrderParamType,
    OrderQueueParam,
    PositionParam,
    ReferenceParam,
    ReferenceQuantity,
    ReferenceQuantityListParam,
    ReferenceType,
    ResourceAmount,
    ResourceListParam,
    SizeParam,
    Tp04Object,
    VelocityParam,
)
from protocol import (
    ObjectParamType as O,
)

POSITIONAL = ObjectParamGroupDesc(
    1,
    "Positional",
    "Positional information",
    (
        ObjectParamDesc("Position", O.POSITION_3D, "The position of the object"),
        ObjectParamDesc("Velocity", O.VELOCITY_3D, "The velocity of the object"),
        ObjectParamDesc("Size", O.SIZE, "The size of the object"),
    ),
)
OWNERSHIP = ObjectParamGroupDesc(
    2,
    "Ownership",
    "The ownership of this object",
    (ObjectParamDesc("Owner", O.REFERENCE, "The owner of this object"),),
)
ORDERS = ObjectParamGroupDesc(
    3,
    "Orders",
    "The order queues of the fleet",
    (ObjectParamDesc("Order Queue", O.ORDER_QUEUE, "The queue of orders for this fleet"),),
)

UNIVERSE = ObjectDesc(
    0,
    "Universe",
    "The Universe",
    1,
    (
        POSITIONAL,
        ObjectParamGroupDesc(
            2,
            "Informational",
            "Information about the universe",
            (ObjectParamDesc("Year", O.INTEGER, "The Age of the universe"),),
        ),
    ),
)
GALAXY = ObjectDesc(1, "Galaxy", "The Galaxy Object type", 1, (POSITIONAL,))
STAR_SYSTEM = ObjectDesc(
    2,
    "Star System",
    "A Star System Object",
    1,
    (
        POSITIONAL,
        ObjectParamGroupDesc(
            2,
            "Status",
            "Information on the current status of the star system",
            (
                ObjectParamDesc("Inhabitable", O.INTEGER, "Is the system inhabitable"),
                ObjectParamDesc("Destroyed", O.INTEGER, "Is the star destroyed"),
                ObjectParamDesc("Region", O.INTEGER, "The region this star system belongs to"),
            ),
        ),
    ),
)
PLANET = ObjectDesc(
    3,
    "Planet",
    "A planet object",
    1,
    (
        POSITIONAL,
        OWNERSHIP,
        ORDERS,
        ObjectParamGroupDesc(
            4,
            "Resources",
            "The planets resources",
            (ObjectParamDesc("Resource List", O.RESOURCE_LIST, "The resource list"),),
        ),
    ),
)
FLEET = ObjectDesc(
    4,
    "Fleet",
    "Fleet of ships",
    1,
    (
        POSITIONAL,
        OWNERSHIP,
        ORDERS,
        ObjectParamGroupDesc(
            4,
            "Ships",
            "The information about ships in this fleet",
            (
                ObjectParamDesc("Ship List", O.REFERENCE_QUANTITY_LIST, "The list of ships"),
                ObjectParamDesc("Damage", O.INTEGER, "The damage done to the ships"),
            ),
        ),
    ),
)
OBJECT_DESCS = {desc.id: desc for desc in (UNIVERSE, GALAXY, STAR_SYSTEM, PLANET, FLEET)}

_STAR = OrderParamDesc("Star System", OrderParamType.OBJECT, "The star system associated with this order")
ORDER_DESCS = {
    0: OrderDesc(0, "ColonizeMining", "Colonize a given system with Mining Robots", (_STAR,), 0),
    1: OrderDesc(1, "Colonize", "Colonize a given system", (_STAR,), 0),
    2: OrderDesc(2, "Move", "Move to a given system", (_STAR,), 0),
    3: OrderDesc(3, "Attack", "Attack a given system", (_STAR,), 0),
    4: OrderDesc(4, "Reinforce", "Send reinforcements to a conflict", (), 0),
}


def fleet(object_id: int, owner: int = 1, queue: int = 7, design: int = 12) -> Tp04Object:
    """A TaE colonist fleet as the server shows it to its owner."""
    return Tp04Object(
        id=object_id,
        type=4,
        name="Colonist Fleet",
        description="",
        parent=2,
        contains=(),
        modtime=3,
        groups=(
            (PositionParam(80001, 1, 0), VelocityParam(0, 0, 0), SizeParam(2)),
            (ReferenceParam(ReferenceType.PLAYER, owner),),
            (OrderQueueParam(queue),),
            (
                ReferenceQuantityListParam((ReferenceQuantity(ReferenceType.DESIGN, design, 1),)),
                IntegerParam(0),
            ),
        ),
    )


def star_system(object_id: int, planet: int) -> Tp04Object:
    return Tp04Object(
        id=object_id,
        type=2,
        name=f"{object_id}, 0",
        description="",
        parent=1,
        contains=(planet,),
        modtime=3,
        groups=(
            (PositionParam(object_id * 80000, 80001, 0), VelocityParam(0, 0, 0), SizeParam(60000)),
            (IntegerParam(1), IntegerParam(0), IntegerParam(0)),
        ),
    )


def planet(object_id: int, system: int) -> Tp04Object:
    return Tp04Object(
        id=object_id,
        type=3,
        name=f"Planet {object_id}",
        description="",
        parent=system,
        contains=(),
        modtime=3,
        groups=(
            (PositionParam(system * 80000, 80001, 0), VelocityParam(0, 0, 0), SizeParam(2)),
            (ReferenceParam(ReferenceType.PLAYER, 0),),
            (OrderQueueParam(0),),
            (ResourceListParam((ResourceAmount(3, 1, 0, 0), ResourceAmount(5, 1, 0, 0))),),
        ),
    )


def mixed_objects(count: int) -> list[Tp04Object]:
    """``count`` objects: star systems, their planets and fleets, in thirds."""
    result = []
    for index in range(count):
        object_id = 100 + index
        kind = index % 3
        if kind == 0:
            result.append(star_system(object_id, object_id + 1))
        elif kind == 1:
            result.append(planet(object_id, object_id - 1))
        else:
            result.append(fleet(object_id, owner=1 + index % 4, queue=index))
    return result
