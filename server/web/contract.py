"""What the web listener needs from the rest of the server, as Protocols.

The web pages and the JSON API read games only through `GameSnapshot`s and change them only
through the write methods of the game service (`server.game.game.Game`); they never import it. These
Protocols name exactly what they use, so tests can serve pages from a stand-in and the real
`Game`, `GameDirectory` and stores fit without adapters. Every write returns a Deferred that fails
with `server.model.refusals.Refused` when the game says no.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from ruleset import Problem
from server.model.snapshot import GameSnapshot


class ServedGame(Protocol):
    """One game, as the web listener reads and changes it."""

    @property
    def snapshot(self) -> GameSnapshot: ...

    def subscribe(self, listener: Callable[[GameSnapshot], None]) -> Callable[[], None]:
        """Call `listener(snapshot)` after every new snapshot; returns the unsubscribe callable."""

    def authenticate(self, username: str, password: str) -> Any:
        """Deferred[player id]; fails with Refused(BAD_LOGIN / REMOVED)."""

    def change_password(self, username: str, old_password: str, new_password: str) -> Any:
        """Deferred[player id]; fails with Refused(BAD_LOGIN) or the password policy's Refused."""

    def create_account(self, username: str, password: str, email: str = "", comment: str = "") -> Any:
        """Deferred[player id]: a new account, or the server's account of that name joins with
        its password; fails with Refused."""

    def would_create(self, name: str) -> Any:
        """Deferred[bool]: whether `create_account(name, ...)` would make a new account rather
        than join the server's existing one."""

    def create_or_join(self, username: str, password: str, email: str = "", comment: str = "") -> Any:
        """Deferred[(player id, joined)]: `create_account`, saying whether the server's existing
        account joined (a password check) rather than a new one being made."""

    def join_account(self, name: str, email: str = "", comment: str = "") -> Any:
        """Deferred[player id]: the server's account `name` (its owner logged in) joins the game;
        fails with Refused."""

    def check_order(self, player: int, object_id: int, order_type: int, target: int) -> Problem | None:
        """The problem inserting this order now would meet (synchronous probe)."""

    def insert_order(self, player: int, object_id: int, slot: int, order_type: int, target: int) -> Any:
        """Deferred[slot]; slot -1 appends."""

    def remove_order(self, player: int, object_id: int, slot: int) -> Any:
        """Deferred[None]."""

    def finish_turn(self, player: int) -> Any:
        """Deferred[None], fired once the finished flag is stored."""

    def come_back(self, player: int) -> Any:
        """Deferred[Attendance]: "I am back" takes the seat back from the stand-in (an absence or a
        vacation); fails with Refused(NOT_AWAY) or the seat's refusal. Logins never do it."""

    def start_vacation(self, player: int, days: int) -> Any:
        """Deferred[Attendance]; fails with Refused."""

    def end_vacation(self, player: int) -> Any:
        """Deferred[Attendance]; fails with Refused(NOT_ON_VACATION)."""

    def resign(self, player: int) -> Any:
        """Deferred[Attendance]; fails with Refused."""


class Accounts(Protocol):
    """The server's accounts, one name and password for every game
    (`server.game.server_accounts.ServerAccounts`)."""

    def authenticate(self, name: str, password: str) -> Any:
        """Deferred[the account's name]; fails with Refused(BAD_LOGIN)."""

    def credential_mark(self, name: str) -> str:
        """The fingerprint of the account's password hash ("" for no account)."""

    def kin(self, name: str) -> list[str]:
        """The accounts kept apart under the same name, not joined yet."""


class ComputerGameStarter(Protocol):
    """Starts a player's game against the computer (`server.admin.computer_games`)."""

    @property
    def offered(self) -> bool:
        """Whether the server lets players start them (`computer_games_per_account`)."""

    def start(self, account: str, computer_players: object, level: object, turn_length: object) -> Any:
        """Awaitable[ServedGame]: a new game, the account in its first seat and the computer
        players in the others; fails with Refused (bad values, a limit, not offered)."""


class GameFinder(Protocol):
    """The games a server hosts (`server.game.directory.GameDirectory`)."""

    @property
    def accounts(self) -> Accounts: ...

    def find(self, name: str | None) -> ServedGame | None: ...

    def ordered(self) -> Iterable[ServedGame]: ...


HERE, ELSEWHERE, AWAY, UNKNOWN = "here", "elsewhere", "away", "unknown"


@dataclass(frozen=True, slots=True)
class Location:
    """Where a game runs, for the web listener of one cluster node: `HERE` (this node serves
    it), `ELSEWHERE` (node `node`, whose web listener is at `address`, None when it has none or
    it is not known yet), `AWAY` (no node runs it at this moment: moving, failing over), or
    `UNKNOWN` (no such game)."""

    kind: str
    node: str | None = None
    address: str | None = None


class GamePlaces(Protocol):
    """Where the games of a cluster run (`server.cluster.web_places`): what a node's web
    listener needs to relay the requests of games run by another node."""

    @property
    def node(self) -> str:
        """This node's name."""

    @property
    def wait(self) -> float:
        """Seconds a request waits for the new owner of a game that is moving or failing over."""

    def locate(self, name: str) -> Location: ...

    def refresh(self) -> Any:
        """Deferred that fires after a fresh look at the database (claims and web addresses)."""

    def peers(self) -> Any:
        """Deferred[list[(node, web address)]]: the other nodes that run games."""

    def default_name(self) -> str | None:
        """The cluster's default game (listed first in the lobby)."""


class RatingBoard(Protocol):
    """The ratings across games (`server.database.components.Ratings`, or a memory store's
    `server.model.memory_store.MemoryRatings`). Each answer may be a Deferred."""

    def table(self, limit: int = 500) -> Any:
        """[RatedAccount], best shown rating first."""

    def player(self, name: str) -> Any:
        """The account's `PlayerRecord`, or None for no such account."""


class SessionRevocations(Protocol):
    """The browser sessions that ended before their cookie expires, shared by every node and
    kept across restarts (the database store's `web_sessions`,
    `server.database.components.WebSessionRevocations`). Each answer may be a Deferred."""

    def revoke(self, session_id: str, until: float, now: float) -> Any:
        """Refuse the session from now until its cookie would have expired."""

    def revoked_since(self, after: int, now: float) -> Any:
        """The revocations (row number, session id) stored after row number `after`."""
