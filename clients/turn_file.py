"""The turn file: a whole turn's orders in TOML or JSON, checked before anything is sent.

TOML::

    turn = 3            # optional: refuse the file if the game is at another turn (the number
                        # TP clients and `tae-client status` show; the first turn is 0)
    when = "normal"     # optional: refuse it in a turn of the other kind ("normal" or "combat")
    replace = true      # optional: this turn's orders already queued are replaced
    [[orders]]
    fleet = "colonist:merchant"   # an id or a name (clients.fleet_refs)
    order = "Colonize"            # ColonizeMining, Colonize, Move, Attack, Reinforce (or 0-4)
    target = [3, 2]               # [x, y], "x,y" or a star system id
    [[orders]]
    fleet = "scientist-leader"
    order = "Move"
    target = "4,2"

JSON: the same as an object (``{"turn": 3, "orders": [{...}, ...]}``) or just the list of
orders. In combat turns, ``{order = "Reinforce", count = 2}`` sends two eligible colonists;
``fleet`` is optional there and narrows the choice (``colonist:scientist``, an id).

The form is one msgspec schema (``_TurnSchema`` for the file, ``_EntrySchema`` for each entry);
fleet names and targets are then read by ``clients.fleet_refs``. ``load_turn_file`` and
``parse_turn_data`` raise ``TurnFileError`` with one line that names the
file and the entry ("turn.toml: order 2: unknown key 'targt' …"). Nothing here talks to a
server: whether the orders make sense in the game is for the probe (``clients.turn_submission``).
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

from .fleet_refs import FleetSelector, Target, parse_fleet_selector, parse_target
from .schema_errors import KeyProblem, Problem, key_problem

__all__ = [
    "ORDER_TYPES",
    "OrderEntry",
    "TurnFile",
    "TurnFileError",
    "load_turn_file",
    "parse_turn_data",
    "detect_format",
    "parse_turn_text",
]

#: TaE order types by id (spec/ruleset.md §4.1) and whether they take a "Star System" target.
ORDER_TYPES: dict[int, tuple[str, bool]] = {
    0: ("ColonizeMining", True),
    1: ("Colonize", True),
    2: ("Move", True),
    3: ("Attack", True),
    4: ("Reinforce", False),
}
_ORDER_BY_NAME = {name.lower(): type_id for type_id, (name, _) in ORDER_TYPES.items()}
_ORDER_ALIASES = {"colonize-mining": 0, "colonize_mining": 0, "colonizemining": 0}
REINFORCE = 4
MAX_ORDERS = 1000
MAX_FILE_BYTES = 1 << 20


class TurnFileError(ValueError):
    """The turn file cannot be used; the message is one line naming the file and entry."""


@dataclass(frozen=True, slots=True)
class OrderEntry:
    """One entry of the file, checked for form (not yet against the game).

    ``number`` is 1-based, as reported to the user. ``order_type`` is the TaE order type id.
    ``count`` is for Reinforce only (how many fleets); 1 otherwise.
    """

    number: int
    fleet: FleetSelector | None
    order_type: int
    target: Target | None = None
    count: int = 1

    @property
    def order_name(self) -> str:
        return ORDER_TYPES[self.order_type][0]

    def describe(self) -> str:
        """A short human description: "Move scientist-leader → 4,2"."""
        fleet = self.fleet.text if self.fleet is not None else "any fleet"
        text = f"{self.order_name} {fleet}"
        if self.order_type == REINFORCE and (self.count != 1 or self.fleet is None):
            text += f" ×{self.count}"
        if self.target is not None:
            text += f" → {self.target}"
        return text


@dataclass(frozen=True, slots=True)
class TurnFile:
    source: str
    orders: tuple[OrderEntry, ...]
    turn: int | None = None
    replace: bool = False
    when: str | None = None  # "normal" or "combat": only for a turn of that kind


def load_turn_file(path: str, file_format: str | None = None) -> TurnFile:
    """Read and check a turn file. ``path`` "-" is standard input. The format is ``toml`` or
    ``json`` by ``file_format``, else by the extension, else detected (``detect_format``)."""
    source = "<stdin>" if path == "-" else path
    try:
        if path == "-":
            raw = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
        else:
            with open(path, "rb") as file:
                raw = file.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise TurnFileError(f"{source}: no such file") from None
    except IsADirectoryError:
        raise TurnFileError(f"{source}: is a directory") from None
    except OSError as error:
        raise TurnFileError(f"{source}: cannot read: {error.strerror or error}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise TurnFileError(f"{source}: larger than {MAX_FILE_BYTES} bytes; not a turn file")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise TurnFileError(f"{source}: not UTF-8 text (byte {error.start})") from None
    if file_format is None and path != "-":
        suffix = Path(path).suffix.lower()
        if suffix in (".toml", ".json"):
            file_format = suffix[1:]
        elif suffix:
            raise TurnFileError(
                f"{source}: unknown extension {suffix!r}: name it .toml or .json, or give --format"
            )
    return parse_turn_text(text, source, file_format)


_JSON_START = re.compile(r"^\s*(\{|\[\s*(\{|\]))")


def detect_format(text: str) -> str:
    """ "json" for a JSON object or list of objects, else "toml" (a TOML file may start with
    ``[[orders]]``, which is why a lone "[" is not enough to say JSON)."""
    return "json" if _JSON_START.match(text) else "toml"


def parse_turn_text(text: str, source: str = "<text>", file_format: str | None = None) -> TurnFile:
    """Parse a turn file's text: ``file_format`` "toml" or "json", None to detect it."""
    detected = file_format is None
    file_format = detect_format(text) if file_format is None else file_format.lower()
    hint = ""
    if detected:
        other = "toml" if file_format == "json" else "json"
        hint = f" (read as {file_format.upper()}; give --format {other} if it is {other.upper()})"
    if file_format == "json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise TurnFileError(
                f"{source}: not valid JSON: {error.msg} (line {error.lineno}, column {error.colno}){hint}"
            ) from None
    elif file_format == "toml":
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise TurnFileError(f"{source}: not valid TOML: {error}{hint}") from None
    else:
        raise TurnFileError(f"{source}: unknown format {file_format!r} (toml or json)")
    return parse_turn_data(data, source)


class _TurnSchema(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """The top level of a turn file. Entries are checked one by one (``_EntrySchema``), so that
    an error names its entry."""

    turn: Annotated[int, msgspec.Meta(ge=0)] | None = None
    when: Literal["normal", "combat"] | None = None
    replace: bool = False
    orders: Annotated[list[Any], msgspec.Meta(max_length=MAX_ORDERS)]


class _EntrySchema(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """One ``[[orders]]`` entry; names and targets are then read by ``clients.fleet_refs``."""

    order: int | str
    fleet: int | str | None = None
    target: int | str | list[int] | None = None
    count: Annotated[int, msgspec.Meta(ge=0, le=100)] | None = None


_TOP_KEYS = tuple(_TurnSchema.__struct_fields__)
_ENTRY_KEYS = ("fleet", "order", "target", "count")


def parse_turn_data(data: object, source: str = "<data>") -> TurnFile:
    """Check decoded TOML/JSON data (see the module docstring)."""
    if isinstance(data, list):
        data = {"orders": data}
    try:
        top = msgspec.convert(data, _TurnSchema)
    except msgspec.ValidationError as error:
        raise TurnFileError(f"{source}: {_top_problem(key_problem(error), data)}") from None
    entries = tuple(_entry(raw, number, source) for number, raw in enumerate(top.orders, 1))
    return TurnFile(source, entries, top.turn, top.replace, top.when)


def _top_problem(problem: KeyProblem, data: object) -> str:
    value = data.get(problem.key) if isinstance(data, Mapping) and problem.key else None
    if problem.problem is Problem.NOT_A_TABLE:
        return "expected a table with 'orders' (or a list of orders)"
    if problem.problem is Problem.UNKNOWN:
        return f"unknown key {problem.key!r} (allowed: {', '.join(_TOP_KEYS)})"
    if problem.key == "orders":
        if problem.problem is Problem.MISSING:
            return "no 'orders' (an empty turn is 'orders = []')"
        if isinstance(value, list):
            return f"more than {MAX_ORDERS} orders"
        return "'orders' must be a list of tables ([[orders]] in TOML)"
    if problem.key == "turn":
        return f"'turn' must be a whole number ≥ 0, not {value!r}"
    if problem.key == "when":
        return f'\'when\' must be "normal" or "combat", not {value!r}'
    return f"'replace' must be true or false, not {value!r}"


def _entry(raw: object, number: int, source: str) -> OrderEntry:
    where = f"{source}: order {number}"
    try:
        checked = msgspec.convert(raw, _EntrySchema)
    except msgspec.ValidationError as error:
        raise TurnFileError(f"{where}: {_entry_problem(key_problem(error), raw)}") from None
    try:
        order_type = parse_order_type(checked.order)
    except ValueError as error:
        raise TurnFileError(f"{where}: {error}") from None
    name, takes_target = ORDER_TYPES[order_type]
    fleet = None
    if checked.fleet is not None:
        try:
            fleet = parse_fleet_selector(checked.fleet)
        except ValueError as error:
            raise TurnFileError(f"{where}: {error}") from None
    elif order_type != REINFORCE:
        raise TurnFileError(f"{where}: {name} needs a 'fleet' (an id or a name like bomber)")
    target = None
    if takes_target:
        if checked.target is None:
            raise TurnFileError(f"{where}: {name} needs a 'target' ([x, y] or a system id)")
        try:
            target = parse_target(checked.target)
        except ValueError as error:
            raise TurnFileError(f"{where}: {error}") from None
    elif checked.target is not None:
        raise TurnFileError(f"{where}: {name} takes no target")
    count = 1
    if checked.count is not None:
        if order_type != REINFORCE:
            raise TurnFileError(f"{where}: 'count' is only for Reinforce")
        count = checked.count
        if fleet is not None and fleet.by_id and count > 1:
            raise TurnFileError(f"{where}: fleet {fleet.id} is one fleet; count must be 0 or 1")
    return OrderEntry(number, fleet, order_type, target, count)


def _entry_problem(problem: KeyProblem, raw: object) -> str:
    value = raw.get(problem.key) if isinstance(raw, Mapping) and problem.key else None
    if problem.problem is Problem.NOT_A_TABLE:
        return "expected a table with fleet, order and target"
    if problem.problem is Problem.UNKNOWN:
        return f"unknown key {problem.key!r} (allowed: {', '.join(_ENTRY_KEYS)})"
    if problem.problem is Problem.MISSING:  # only 'order' is required
        return f"no 'order' (one of {_order_names()})"
    if problem.key == "count":
        return "'count' must be a whole number from 0 to 100"
    try:  # the readers of names and targets say best what is wrong with a value
        if problem.key == "order":
            parse_order_type(value)
        elif problem.key == "fleet":
            parse_fleet_selector(value)
        else:
            parse_target(value)
    except ValueError as error:
        return str(error)
    return f"{problem.key!r} cannot be {value!r}"  # pragma: no cover - the readers refuse first


def parse_order_type(value: object) -> int:
    """An order type name (any case) or id → the TaE type id; ValueError."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value in ORDER_TYPES:
            return value
        raise ValueError(f"no order type {value} (0-4: {_order_names()})")
    if isinstance(value, str):
        text = value.strip().lower()
        if text.isdigit() and int(text) in ORDER_TYPES:
            return int(text)
        found = _ORDER_BY_NAME.get(text, _ORDER_ALIASES.get(text))
        if found is not None:
            return found
    raise ValueError(f"unknown order {value!r} (one of {_order_names()})")


def _order_names() -> str:
    return ", ".join(name for name, _ in ORDER_TYPES.values())
