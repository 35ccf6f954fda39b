"""Game values as JSON-able data and back, exactly: what the database keeps of a game.

`decode_state(encode_state(s)) == s` for every state the ruleset can produce, and the decoded
state is indistinguishable in use too: mappings come back as dicts with int keys in the same
insertion order (fleets in ascending id), enums as enums, tuples as tuples, sets as frozensets.
Mappings are written as lists of [key, value] pairs rather than JSON objects, so that neither
the key type nor the order depends on the JSON layer (PostgreSQL's jsonb, for one, reorders keys).

Only lists, strings, ints, bools and None are produced, so `json.loads(json.dumps(x)) == x` and
a stored value can be compared with a freshly encoded one. A state carries `"v": STATE_VERSION`;
a later format bumps it and keeps a decoder for the old one. Fields added within a version are
optional when decoding, so rows written before them still decode: a final result without its
end reason (stored before R24a and the operator's end existed) ended by artifacts when at most two
were left on the board and by the empty pool otherwise; a message without mentions has none.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from ruleset import DEFAULT_BOARD, Board, EndReason, Event, GameState, Mention, MentionKind, Message
from ruleset.kinds import Kind, Role
from ruleset.state import Conflict, FinalResult, Fleet, Phase, Player
from ruleset.turn import GAME_ENDING_ARTIFACTS
from server.model.store import GameSetup
from server.model.timer_settings import TimerSettings

STATE_VERSION = 1

JSON = Any  # a value made of dicts, lists, str, int, bool and None


class CodecError(ValueError):
    """Stored data that does not decode: wrong version, missing field or wrong shape."""


# Enum members by value: a dict lookup is several times faster than calling the enum class,
# and a state holds a few hundred of them.
_KIND = {int(k): k for k in Kind}
_ROLE = {int(r): r for r in Role}
_KIND_OR_NONE: dict[int | None, Kind | None] = {int(k): k for k in Kind}
_KIND_OR_NONE[None] = None
_MENTION_KIND = {int(k): k for k in MentionKind}

# -- boards --------------------------------------------------------------------------------


@lru_cache(maxsize=32)
def _board(rows: tuple[str, ...]) -> Board:
    """Boards are immutable and the same for every turn of a game: build each once."""
    if rows == DEFAULT_BOARD.rows:
        return DEFAULT_BOARD
    return Board.from_rows(rows)


# -- game states ---------------------------------------------------------------------------


def encode_state(state: GameState) -> dict[str, JSON]:
    """A GameState as a JSON-able dict (see the module docstring for the guarantees)."""
    result = state.result
    return {
        "v": STATE_VERSION,
        "board": list(state.board.rows),
        "seed": state.seed,
        "turn": state.turn,
        "phase": state.phase.value,
        "rotation": state.rotation,
        "players": [[p.id, p.name, p.home_system, p.home_planet, list(p.scores)] for p in state.players],
        "fleets": [
            [f.id, f.owner, int(f.role), None if f.kind is None else int(f.kind)]
            for f in state.fleets.values()
        ],
        "leader_at": [[fleet, cell] for fleet, cell in state.leader_at.items()],
        "colonies": [[cell, int(kind)] for cell, kind in state.colonies.items()],
        "artifacts": sorted(state.artifacts),
        "destroyed": sorted(state.destroyed),
        "pool": list(state.pool),
        "conflicts": [
            [
                c.internal,
                int(c.kind),
                c.attacker,
                c.defender,
                c.unification,
                c.attacker_strength,
                c.defender_strength,
            ]
            for c in state.conflicts
        ],
        "removed": state.removed,
        "next_object_id": state.next_object_id,
        "result": None
        if result is None
        else {
            "final": [[pid, score] for pid, score in result.final.items()],
            "distributed": [[pid, list(values)] for pid, values in result.distributed.items()],
            "winners": list(result.winners),
            "reason": result.reason.value,
        },
    }


def decode_state(data: dict[str, JSON]) -> GameState:
    """The GameState that `encode_state` encoded; CodecError when `data` is not one."""
    try:
        version = data["v"]
        if version != STATE_VERSION:
            raise CodecError(
                f"game state format {version!r} is not supported (this server reads format {STATE_VERSION})"
            )
        artifacts = frozenset(data["artifacts"])
        return GameState(
            board=_board(tuple(data["board"])),
            seed=data["seed"],
            turn=data["turn"],
            phase=Phase(data["phase"]),
            rotation=data["rotation"],
            players=tuple(
                Player(pid, name, system, planet, tuple(scores))
                for pid, name, system, planet, scores in data["players"]
            ),
            fleets={
                fid: Fleet(fid, owner, _ROLE[role], _KIND_OR_NONE[kind])
                for fid, owner, role, kind in data["fleets"]
            },
            leader_at={fleet: cell for fleet, cell in data["leader_at"]},
            colonies={cell: _KIND[kind] for cell, kind in data["colonies"]},
            artifacts=artifacts,
            destroyed=frozenset(data["destroyed"]),
            pool=tuple(data["pool"]),
            conflicts=tuple(
                Conflict(bool(internal), _KIND[kind], attacker, defender, unification, a_strength, d_strength)
                for internal, kind, attacker, defender, unification, a_strength, d_strength in data[
                    "conflicts"
                ]
            ),
            removed=data["removed"],
            next_object_id=data["next_object_id"],
            result=_decode_result(data["result"], len(artifacts)),
        )
    except CodecError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise CodecError(f"stored game state does not decode: {exc!r}") from exc


def _decode_result(data: dict[str, JSON] | None, artifacts_left: int) -> FinalResult | None:
    if data is None:
        return None
    if "reason" in data:
        reason = EndReason(data["reason"])
    else:  # stored before the reason was: only these two ends existed
        reason = EndReason.ARTIFACTS if artifacts_left <= GAME_ENDING_ARTIFACTS else EndReason.POOL
    return FinalResult(
        final={pid: score for pid, score in data["final"]},
        distributed={pid: tuple(values) for pid, values in data["distributed"]},
        winners=tuple(data["winners"]),
        reason=reason,
    )


# -- messages and events -------------------------------------------------------------------


def encode_message(message: Message) -> list[JSON]:
    """[player, turn, subject, body, [[mention kind, id], ...]]."""
    mentions = [[int(m.kind), m.id] for m in message.mentions]
    return [message.player, message.turn, message.subject, message.body, mentions]


def decode_message(data: list[JSON]) -> Message:
    """A stored message; rows written before messages had mentions have four fields."""
    try:
        if isinstance(data, list) and len(data) == 4:
            player, turn, subject, body = data
            return Message(player, turn, subject, body)
        player, turn, subject, body, mentions = data
        return Message(
            player, turn, subject, body, tuple(Mention(_MENTION_KIND[kind], ref) for kind, ref in mentions)
        )
    except (TypeError, ValueError, KeyError) as exc:
        raise CodecError(f"stored message does not decode: {data!r}") from exc


def encode_messages(messages: Iterable[Message]) -> list[JSON]:
    return [encode_message(m) for m in messages]


def decode_messages(data: list[JSON]) -> tuple[Message, ...]:
    return tuple(decode_message(item) for item in data)


def encode_event(event: Event) -> list[JSON]:
    return [event.kind, event.player, event.fleet, event.cell, event.detail]


def decode_event(data: list[JSON]) -> Event:
    try:
        kind, player, fleet, cell, detail = data
    except (TypeError, ValueError) as exc:
        raise CodecError(f"stored event does not decode: {data!r}") from exc
    return Event(kind, player, fleet, cell, detail)


def encode_events(events: Iterable[Event]) -> list[JSON]:
    return [encode_event(e) for e in events]


def decode_events(data: list[JSON]) -> tuple[Event, ...]:
    return tuple(decode_event(item) for item in data)


# -- game set-up ---------------------------------------------------------------------------

_TIMER_FIELDS = (
    "kind",
    "turn_length",
    "turn_players_min",
    "turn_player_threshold",
    "turn_length_over_threshold",
    "turn_length_under_threshold",
)
_SETUP_FIELDS = (
    "name",
    "map_text",
    "seed",
    "max_players",
    "auto_add",
    "account_creation",
    "description",
    "ctime",
)


_CALENDAR_FIELDS = ("schedule", "time_zone", "finish_early")  # optional: older encodings lack them


def encode_timer(timer: TimerSettings) -> dict[str, JSON]:
    return {name: getattr(timer, name) for name in _TIMER_FIELDS + _CALENDAR_FIELDS}


def decode_timer(data: dict[str, JSON]) -> TimerSettings:
    try:
        fields = {name: data[name] for name in _TIMER_FIELDS}
    except KeyError as exc:
        raise CodecError(f"stored timer settings lack {exc}") from exc
    fields.update({name: data[name] for name in _CALENDAR_FIELDS if name in data})
    return TimerSettings(**fields)


def encode_setup(setup: GameSetup) -> dict[str, JSON]:
    data = {name: getattr(setup, name) for name in _SETUP_FIELDS}
    data["timer"] = encode_timer(setup.timer)
    return data


def decode_setup(data: dict[str, JSON]) -> GameSetup:
    try:
        fields = {name: data[name] for name in _SETUP_FIELDS}
        timer = data["timer"]
    except KeyError as exc:
        raise CodecError(f"stored game set-up lacks {exc}") from exc
    return GameSetup(timer=decode_timer(timer), **fields)


# -- text ----------------------------------------------------------------------------------


def dumps(data: JSON) -> str:
    """Compact JSON text for an encoded value (exports, debugging)."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def state_to_json(state: GameState) -> str:
    return dumps(encode_state(state))


def state_from_json(text: str) -> GameState:
    return decode_state(json.loads(text))
