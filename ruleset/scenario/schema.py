"""The typed schema of a scenario file (scenario-format.md), checked with msgspec.

`parse(text)` reads the TOML and checks every key and type in one pass against the structs
below; what the schema cannot say (a coordinate on the board, a player's name, two pieces on one
system) is checked when the position is set up (`ruleset.scenario.setup`). Every failure is a
`ScenarioError` whose one-line message names the key, in the wording the tool has always used:
"players[1]: unknown key 'handd'", "seed: expected an integer, not 'abc'", ….
"""

from __future__ import annotations

import re
import tomllib
from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET as UNSET  # re-exported: the rest of the tool does not import msgspec
from msgspec import Meta, Struct, UnsetType, field

from ..kinds import STARTING_BOMBERS


class ScenarioError(ValueError):
    """A malformed scenario file; the message names the key or line."""


KindName = Literal["merchant", "scientist", "settler", "mining"]
Count = Annotated[int, Meta(ge=0)]
Coordinate = tuple[int, int]  # [x, y]


class Table(Struct, forbid_unknown_fields=True, kw_only=True):
    """A TOML table: unknown keys are errors."""


class Scores(Table):
    money: Count = 0
    technology: Count = 0
    people: Count = 0
    raw: Count = 0
    artifacts: Count = 0


class Pool(Table):
    merchant: Count = 0
    scientist: Count = 0
    settler: Count = 0
    mining: Count = 0


class PlayerEntry(Table):
    name: str
    hand: list[KindName] | UnsetType = UNSET
    bombers: Count = STARTING_BOMBERS
    scores: Scores = field(default_factory=Scores)


class ColonyEntry(Table):
    at: Coordinate
    kind: KindName


class LeaderEntry(Table):
    owner: str
    kind: KindName
    at: Coordinate


class OrderEntry(Table):
    player: str
    order: str
    fleet: str | UnsetType = UNSET
    target: Coordinate | UnsetType = UNSET
    count: Count | UnsetType = UNSET


class TurnEntry(Table):
    orders: list[OrderEntry] = []


class ScenarioFile(Table):
    title: str | UnsetType = UNSET
    seed: int = 0
    map: str | UnsetType = UNSET
    first: str | UnsetType = UNSET
    destroyed: list[Coordinate] = []
    players: list[PlayerEntry] = []
    pool: Pool | UnsetType = UNSET
    colonies: list[ColonyEntry] = []
    leaders: list[LeaderEntry] = []
    turns: list[TurnEntry] = []


def parse(text: str) -> ScenarioFile:
    """The scenario in `text`, checked against the schema; ScenarioError when it does not fit."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ScenarioError(f"not valid TOML: {error}") from None
    try:
        return msgspec.convert(data, ScenarioFile)
    except msgspec.ValidationError as error:
        raise ScenarioError(_explain(str(error), data)) from None


# -- msgspec's messages in the tool's words ------------------------------------------------------

_AT = re.compile(r"^(?P<detail>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.DOTALL)
_PART = re.compile(r"\.(\w+)|\[(\d+)\]")
_COORDINATE_KEYS = {"at", "target"}
_EXPECTED = {
    "int": "an integer",
    "str": "a string",
    "array": "a list",
    "object": "a table",
}


def _explain(message: str, data: Any) -> str:
    """ "Object contains unknown field `handd` - at `$.players[1]`" -> "players[1]: unknown key 'handd'"."""
    found = _AT.match(message)
    assert found is not None  # the pattern matches any text
    detail = found["detail"]
    parts: list[str | int] = [
        name if name else int(index) for name, index in _PART.findall(found["path"] or "")
    ]
    coordinate = _coordinate(parts)
    if coordinate is not None:
        value = _value_at(data, coordinate)
        return f"{_where(coordinate)}: a coordinate is [x, y] with two integers, not {value!r}"
    where = _where(parts)
    prefix = f"{where}: " if where else ""
    value = _value_at(data, parts)
    if m := re.fullmatch(r"Object contains unknown field `(.*)`", detail):
        return f"{prefix}unknown key {m[1]!r}"
    if m := re.fullmatch(r"Object missing required field `(.*)`", detail):
        return f"{prefix}missing key {m[1]!r}"
    if m := re.fullmatch(r"Expected `int` >= (-?\d+)", detail):
        return f"{prefix}{value!r} is below {m[1]}"
    if re.fullmatch(r"Invalid enum value .*", detail):
        return f"{prefix}unknown kind {value!r} (merchant, scientist, settler or mining)"
    if m := re.fullmatch(r"Expected `(\w+)`(?:, got `\w+`)?", detail):
        return f"{prefix}expected {_EXPECTED.get(m[1], m[1])}, not {value!r}"
    return f"{prefix}{detail}"


def _coordinate(parts: list[str | int]) -> list[str | int] | None:
    """The path of the coordinate an error is in (`colonies[0].at`, `destroyed[2]`), if it is in one."""
    for i, part in enumerate(parts):
        if part in _COORDINATE_KEYS:
            return parts[: i + 1]
        if i == 0 and part == "destroyed" and len(parts) > 1:
            return parts[:2]
    return None


def _where(parts: list[str | int]) -> str:
    where = ""
    for part in parts:
        where += f"[{part}]" if isinstance(part, int) else (f".{part}" if where else part)
    return where


def _value_at(data: Any, parts: list[str | int]) -> Any:
    for part in parts:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return None
    return data
