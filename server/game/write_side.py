"""What the parts of one game's write side share, for the type checker.

`server.game.game.Game` is one class made of parts, one module each: `server.game.accounts`
(players and accounts), `server.game.seats` (who plays each seat), `server.game.clock` (the
operators' controls of the clock and settings) and `server.game.game` itself (snapshots, orders,
boards and the turn lifecycle). Each part is a mixin of `Game` that works on the game's own
state under the game's lock. `GameWriteSide` declares that state and the steps the parts call
across one another, so that each part type-checks on its own; at run time it is empty and
`Game` defines everything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from twisted.internet import defer
    from twisted.internet.interfaces import IDelayedCall, IReactorTime

    from ruleset import GameState, Message
    from server.game.passwords import PasswordHasher
    from server.game.server_accounts import ServerAccounts
    from server.game.stand_in import StandInPlayer
    from server.game.timer import TurnTimer
    from server.model.attendance import Attendance
    from server.model.changes import Change
    from server.model.snapshot import Announcement, BoardMessage, GameSnapshot, QueuedOrder
    from server.model.store import Account, GameSetup, GameStore
    from server.model.writes import Step
    from server.views.tp.modtimes import ModTimes

#: Seconds before a write the store could not take is tried again.
COMMIT_RETRY_S = 5


class GameWriteSide:
    """The state and shared steps of `server.game.game.Game` (see the module docstring)."""

    if TYPE_CHECKING:
        id: int
        setup: GameSetup
        store: GameStore
        clock: IReactorTime
        hasher: PasswordHasher
        timer: TurnTimer
        snapshot: GameSnapshot
        _state: GameState
        _accounts: dict[str, Account]
        _finished: set[int]
        _removed: set[int]
        _attendance: dict[int, Attendance]
        _vacation_ends: dict[int, IDelayedCall]
        _stored_pause: tuple[bool, float | None]
        _lock: defer.DeferredLock
        _started: bool
        _closed: bool
        _ready: defer.Deferred | None
        stand_in: StandInPlayer
        server_accounts: ServerAccounts
        _refusable: list[defer.Deferred]
        _store_trouble: Exception | None
        _retry: IDelayedCall | None
        _queues: dict[int, tuple[QueuedOrder, ...]]
        _modtimes: ModTimes
        _last_turn: tuple[tuple[Message, ...], tuple]
        _boards: dict[int, tuple[BoardMessage, ...]]
        _posted: dict[int, int]
        order_serial: int

        @property
        def busy(self) -> bool: ...

        def player_id(self, username: str) -> int | None: ...

        def _account_named(self, username: str) -> Account | None: ...

        def _check_turn_end(self) -> None: ...

        def _end_if_only_stand_ins_act(self) -> None: ...

        def _open_stand_in_turn(self) -> None: ...

        def _back_quietly(self, player: int) -> defer.Deferred: ...

        def _start_if_ready(self) -> None: ...

        def _post(self, message: Message) -> None: ...

        def _publish(
            self, touched: tuple[int, ...] | None = None, announcement: Announcement | None = None
        ) -> None: ...

        def _insert_order(
            self, player: int, object_id: int, slot: int, order_type: int, target: int
        ) -> defer.Deferred: ...

        def _write(
            self,
            change: Change,
            steps: tuple[Step, ...],
            applied: Callable[[], Any],
            after: GameSnapshot | None = None,
        ) -> defer.Deferred: ...

        def _preview(self, **fields: Any) -> GameSnapshot: ...

        def _notices_for_everyone(
            self, body: str, removed: set[int] | None = None
        ) -> tuple[Message, ...]: ...

        def _post_notices(self, messages: tuple[Message, ...]) -> None: ...

        def _follow_deadline(self) -> None: ...

        def ready(self) -> defer.Deferred: ...

        def _play_stand_ins(self) -> defer.Deferred: ...

        def _release(self) -> None: ...

        def _announce(self, seconds: int, reason: int) -> None: ...
