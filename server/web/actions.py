"""The writes a web form or an API call may make, read from its fields and sent to the game.

Both the player page and the JSON API come through here, so an order is read, probed and
inserted the same way whichever way it arrives. Bad input is refused with a `Problem` (code
FRAME, as TP refuses a malformed frame); the game's own refusals arrive as `Refused`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from twisted.internet import defer

from ruleset import ORDER_TYPES_BY_NAME, OrderType, Problem, ProblemCode
from ruleset.orders import ORDER_NAMES
from server.model.refusals import CONFIRM_RESIGN, Refused, clipped
from server.model.snapshot import GameSnapshot
from server.views.web.documents import order_type_for
from server.web.contract import ServedGame


def bad_input(text: str) -> Refused:
    return Refused(Problem(ProblemCode.FRAME, text))


@dataclass(frozen=True, slots=True)
class OrderRequest:
    fleet: int
    order_type: int
    target: int
    slot: int = -1


def _integer(fields: Mapping[str, Any], name: str, default: int | None = None) -> int:
    value = fields.get(name, default)
    if value is None or value == "":
        if default is not None:
            return default
        raise bad_input(f"'{name}' is missing.")
    if isinstance(value, bool):
        raise bad_input(f"'{name}' must be a whole number.")
    if isinstance(value, int):
        return value
    try:
        return int(str(value).strip())
    except ValueError:
        raise bad_input(f"'{name}' must be a whole number.") from None


def read_order(snapshot: GameSnapshot, fields: Mapping[str, Any]) -> OrderRequest:
    """An order from `fleet`, `target` (or `system`, "x, y"), and optionally `type` (a number or
    a name such as "Colonize", in any case; by default the order the fleet takes now) and `slot` (-1, the
    default, appends)."""
    fleet = _integer(fields, "fleet")
    raw_type = fields.get("type")
    if raw_type is None or raw_type == "":
        order_type = order_type_for(snapshot, fleet)
    elif isinstance(raw_type, str) and not raw_type.strip().lstrip("+-").isdigit():
        order_type = _order_type_named(raw_type)
    else:
        order_type = _integer(fields, "type")
    takes_target = order_type not in ORDER_NAMES or OrderType(order_type).takes_target
    if not takes_target:
        target = _integer(fields, "target", 0)
    elif fields.get("target") in (None, "") and fields.get("system"):
        target = _system_named(snapshot, str(fields["system"]))
    else:
        target = _integer(fields, "target")
    slot = _integer(fields, "slot", -1)
    return OrderRequest(fleet, order_type, target, slot)


_ORDER_TYPES_BY_FOLDED_NAME = {
    name.casefold(): order_type for name, order_type in ORDER_TYPES_BY_NAME.items()
}
_LISTED_ORDER_NAMES = ", ".join(
    ORDER_NAMES[t]
    for t in (
        OrderType.COLONIZE,
        OrderType.COLONIZE_MINING,
        OrderType.MOVE,
        OrderType.ATTACK,
        OrderType.REINFORCE,
    )
)


def _order_type_named(text: str) -> int:
    """The order type called `text` ("Colonize", "colonizemining": the case does not matter)."""
    found = _ORDER_TYPES_BY_FOLDED_NAME.get(text.strip().casefold())
    if found is None:
        raise bad_input(f"unknown order type {clipped(text)} ({_LISTED_ORDER_NAMES}; or the type's number).")
    return int(found)


def _system_named(snapshot: GameSnapshot, text: str) -> int:
    """The star-system id of a system written as its name, "x, y"."""
    x_text, _, y_text = text.partition(",")
    try:
        x, y = int(x_text.strip()), int(y_text.strip())
    except ValueError:
        raise bad_input(f"{text!r} is not a system: write its column and row, like 4, 7.") from None
    board = snapshot.state.board
    cell = board.cell_at(x, y)
    if cell is None:
        raise bad_input(f"There is no system {x}, {y} on this board.")
    return board.system_id(cell)


def probe(game: ServedGame, player: int, order: OrderRequest) -> Problem | None:
    return game.check_order(player, order.fleet, order.order_type, order.target)


async def place(game: ServedGame, player: int, order: OrderRequest) -> int:
    """Probe, then insert: fires with the slot, or fails with Refused and inserts nothing."""
    problem = probe(game, player, order)
    if problem is not None:
        raise Refused(problem)
    return await defer.maybeDeferred(
        game.insert_order, player, order.fleet, order.slot, order.order_type, order.target
    )


async def remove(game: ServedGame, player: int, fields: Mapping[str, Any]) -> None:
    await defer.maybeDeferred(game.remove_order, player, _integer(fields, "fleet"), _integer(fields, "slot"))


async def finish(game: ServedGame, player: int) -> None:
    await defer.maybeDeferred(game.finish_turn, player)


async def come_back(game: ServedGame, player: int) -> Any:
    """The player says "I am back" (the player page's button, POST /api/games/NAME/back): the
    Attendance, or Refused when the stand-in does not play the seat (or it cannot come back)."""
    return await defer.maybeDeferred(game.come_back, player)


async def start_vacation(game: ServedGame, player: int, fields: Mapping[str, Any]) -> Any:
    days = fields.get("days")
    if isinstance(days, bool) or not isinstance(days, int):
        raise bad_input("'days' must be a whole number of days.")
    return await defer.maybeDeferred(game.start_vacation, player, days)


async def end_vacation(game: ServedGame, player: int) -> Any:
    return await defer.maybeDeferred(game.end_vacation, player)


async def resign(game: ServedGame, player: int, fields: Mapping[str, Any]) -> Any:
    if fields.get("confirm") is not True:
        raise Refused(CONFIRM_RESIGN)
    return await defer.maybeDeferred(game.resign, player)


def _text(fields: Mapping[str, Any], name: str) -> str:
    value = fields.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise bad_input(f"'{name}' must be a text.")
    return value


async def create_account(web: Any, request: Any, game: ServedGame, fields: Mapping[str, Any]) -> int:
    """A new account from a form or a JSON document (`username`, `password`, `email`), through
    the login brake (`web.logins`: it hashes a password, and an address may create only so
    many accounts)."""
    username = _text(fields, "username")
    password = _text(fields, "password")
    if not password:
        raise bad_input("A password is needed.")
    email = _text(fields, "email")
    # the server's existing account joining with its password is a password check, not a new
    # account: it does not count against the address's account creations
    player, _ = await web.logins.check(
        request,
        game.snapshot.name,
        username,
        lambda: game.create_or_join(username, password, email, "joined on the web"),
        creating=await game.would_create(username),
        new_account=lambda made: not made[1],
    )
    return player
