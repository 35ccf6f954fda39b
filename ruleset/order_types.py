"""The five order types as tpserver-cpp's TaE registers them: ids, names and descriptions (R6).

They sit apart from `ruleset.orders` (the submission checks) because the table of target
conditions (`ruleset.conditions`) is keyed by them and the submission checks use that table.
"""

from __future__ import annotations

from enum import IntEnum


class OrderType(IntEnum):
    """Order type ids as tpserver-cpp's TaE registers them (ruleset.md §4.1)."""

    COLONIZE_MINING = 0
    COLONIZE = 1
    MOVE = 2
    ATTACK = 3
    REINFORCE = 4

    @property
    def title(self) -> str:
        return ORDER_NAMES[self]

    @property
    def takes_target(self) -> bool:
        """Every order names a star system, but Reinforce (R6, R18)."""
        return self is not OrderType.REINFORCE


ORDER_TYPES = tuple(OrderType)  # by id: ORDER_TYPES[order.type] is quicker than OrderType(order.type)

ORDER_NAMES = {
    OrderType.COLONIZE_MINING: "ColonizeMining",
    OrderType.COLONIZE: "Colonize",
    OrderType.MOVE: "Move",
    OrderType.ATTACK: "Attack",
    OrderType.REINFORCE: "Reinforce",
}
ORDER_DESCRIPTIONS = {
    OrderType.COLONIZE_MINING: "Colonize a given system with Mining Robots",
    OrderType.COLONIZE: "Colonize a given system",
    OrderType.MOVE: "Move to a given system",
    OrderType.ATTACK: "Attack a given system",
    OrderType.REINFORCE: "Send reinforcements to a conflict",
}
TARGET_PARAMETER_NAME = "Star System"
TARGET_PARAMETER_DESCRIPTION = "The star system associated with this order"
ORDER_TYPES_BY_NAME = {name: order_type for order_type, name in ORDER_NAMES.items()}
