"""What one client may take of the server: the limits' settings, and the small pieces that
enforce them.

Every limit is a setting of the `[limits]` table of the configuration (`LimitsTable`) and of
`tae-server serve --limit NAME=VALUE`; 0 switches a limit off. The defaults let a load test
open 7,000 connections from one address and log them all in.

=============================  ========  ====================================================
setting                        default   what happens at the limit
=============================  ========  ====================================================
connections_per_address        10000     a further TP connection from the address (IPv6: its
                                         /64) gets Fail 3 "Too many connections…" and is closed
listen_backlog                 1024      connections the system queues for each TP listener
                                         before the server accepts them (beyond: the client's
                                         SYN is dropped and retried after 1 s, 3 s, …)
pending_output_bytes           16 MiB    a connection with more unsent reply bytes than this
                                         (a client that does not read) is cut off
login_idle_seconds             120       a connection not logged in that sends no frame for
                                         this long gets Fail 3 (sequence 0) and is closed
frames_per_second              500       a connection sending faster is slowed down: its
frame_burst                    1000      frames wait (after a burst of this many), none is lost
login_failures_per_connection  5         after this many failed logins the connection is closed
login_failure_delay            1.0       the answer to a connection's first failed login waits
login_failure_delay_max        16.0      this long, each further one twice as long, up to max
login_failures_per_address     20        failed logins an address may make per window (then
login_failure_window           60        its failing connections are refused and closed)
login_failures_per_account     20        failed logins on one account per account window from
login_account_window           900       places it never logged in from (then those are
                                         refused untried; a known place is always tried)
login_failures_global          1000      failed logins of the whole server per
                                         login_failure_window (then every failing connection
                                         not known to its account is refused untried)
password_hashes_per_address    600       password checks (logins, account creations, password
password_hashes_per_account    100       changes) per address / per account per hash window;
password_hash_window           600       beyond: refused untried until the budget comes back
accounts_per_address           10        accounts one address may create per account window
failed_login_log_lines         10        failed logins logged one by one per address and
                                         window (the rest are summed up in one line)
hashing_threads                2         worker threads that hash passwords
password_min_length            6         the shortest password a new account or change may set
password_hash_cost             14        log2 of scrypt's N for new hashes (older hashes are
                                         made again at the next correct login)
web_connections_per_address    256       open web connections from one address (a trusted
                                         proxy: no limit); beyond: 429, closed
tp_descriptor_share            0.5       the share of the process's file descriptors kept for
                                         TP: the web listeners hold at most the rest
web_header_seconds             10        a web request's headers must arrive within this long of
                                         its first byte (a deadline: bytes do not extend it)
web_body_seconds               30        ... and its body within this long of its headers
web_idle_seconds               30        a web connection with no request under way is closed
                                         after this long
web_requests_per_second        100       requests one client address may make per second (after
web_request_burst              400       a burst of this many); beyond: 429 with Retry-After
web_form_fields                100       fields a form may post (beyond: 413)
notification_tests_per_hour    6         test notifications one player may ask for per hour
admin_connections_per_address  8         open admin connections from one address (IPv6: its
                                         /64); beyond: Fail 3 "Too many admin connections…",
                                         closed (they count in the web's descriptor share too)
admin_login_seconds            30        an admin connection not logged in this long after it
                                         opened gets Fail 3 and is closed (a deadline: frames
                                         do not extend it)
admin_idle_seconds             3600      a logged-in admin connection that sends no frame for
                                         this long gets Fail 3 and is closed
admin_frames_per_second        50        an admin connection sending faster is slowed down:
admin_frame_burst              200       its frames wait (after a burst), none is lost
computer_games_per_account     0         open games against the computer one account may start
                                         from the home page or `POST /api/games`; here 0 means
                                         none: players cannot start them (`make run` sets 3)
computer_games_max             50        open games against the computer on the whole server
                                         (0: no limit); beyond: "try again later"
=============================  ========  ====================================================

The address a limit counts by is the client's: the connection's peer, or for a connection from
one of the `trusted_proxies` (a setting of the configuration file, not of this table) the
address the proxy names in `X-Forwarded-For`.

The enforcing pieces take the time as an argument (`now`), like the domain code: `TokenBucket`
(a rate with a burst: frames per second, failed logins per address) and `address_key` (the
source address a limit counts by). `server.tp.network` applies the connection limits and
`server.guards.login_guard` the login ones (for the TP, web and admin listeners alike);
`server.web.transport` and `server.admin.network` apply their own listener's.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

import msgspec


@dataclass(frozen=True, slots=True)
class Limits:
    """The limits in force (see the module docstring for each); 0 = no limit (except
    `computer_games_per_account`, where 0 allows none)."""

    connections_per_address: int = 10_000
    listen_backlog: int = 1024
    pending_output_bytes: int = 16 * 2**20
    login_idle_seconds: float = 120.0
    frames_per_second: float = 500.0
    frame_burst: int = 1_000
    login_failures_per_connection: int = 5
    login_failure_delay: float = 1.0
    login_failure_delay_max: float = 16.0
    login_failures_per_address: int = 20
    login_failure_window: float = 60.0
    login_failures_per_account: int = 20
    login_account_window: float = 900.0
    login_failures_global: int = 1000
    password_hashes_per_address: int = 600
    password_hashes_per_account: int = 100
    password_hash_window: float = 600.0
    accounts_per_address: int = 10
    failed_login_log_lines: int = 10
    hashing_threads: int = 2
    password_min_length: int = 6
    password_hash_cost: int = 14
    web_connections_per_address: int = 256
    tp_descriptor_share: float = 0.5
    web_header_seconds: float = 10.0
    web_body_seconds: float = 30.0
    web_idle_seconds: float = 30.0
    web_requests_per_second: float = 100.0
    web_request_burst: int = 400
    web_form_fields: int = 100
    notification_tests_per_hour: int = 6
    admin_connections_per_address: int = 8
    admin_login_seconds: float = 30.0
    admin_idle_seconds: float = 3600.0
    admin_frames_per_second: float = 50.0
    admin_frame_burst: int = 200
    computer_games_per_account: int = 0  # 0: players cannot start games against the computer
    computer_games_max: int = 50

    def validated(self) -> Limits:
        """These limits, or ValueError naming the first setting that cannot work."""
        for item in fields(self):
            value = getattr(self, item.name)
            if value < 0:
                raise ValueError(f"{item.name} cannot be negative")
        if self.hashing_threads < 1:
            raise ValueError("hashing_threads must be at least 1")
        if self.password_min_length < 1:
            raise ValueError("password_min_length must be at least 1 (an empty password is never allowed)")
        if not 10 <= self.password_hash_cost <= 20:
            raise ValueError("password_hash_cost must be 10 to 20 (scrypt N = 2**cost)")
        if self.frames_per_second and self.frame_burst < 1:
            raise ValueError("frame_burst must be at least 1 when frames_per_second is set")
        if self.login_failures_per_address and self.login_failure_window <= 0:
            raise ValueError("login_failure_window must be positive when login_failures_per_address is set")
        if self.login_failure_delay_max < self.login_failure_delay:
            raise ValueError("login_failure_delay_max cannot be below login_failure_delay")
        for count, window in (
            ("login_failures_per_account", "login_account_window"),
            ("accounts_per_address", "login_account_window"),
            ("login_failures_global", "login_failure_window"),
            ("password_hashes_per_address", "password_hash_window"),
            ("password_hashes_per_account", "password_hash_window"),
        ):
            if getattr(self, count) and getattr(self, window) <= 0:
                raise ValueError(f"{window} must be positive when {count} is set")
        if not 0 <= self.tp_descriptor_share < 1:
            raise ValueError("tp_descriptor_share is a share: at least 0 and below 1")
        if self.web_requests_per_second and self.web_request_burst < 1:
            raise ValueError("web_request_burst must be at least 1 when web_requests_per_second is set")
        if self.admin_frames_per_second and self.admin_frame_burst < 1:
            raise ValueError("admin_frame_burst must be at least 1 when admin_frames_per_second is set")
        return self


class LimitsTable(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """The `[limits]` table as written; None = not set (the default applies)."""

    connections_per_address: int | None = None
    listen_backlog: int | None = None
    pending_output_bytes: int | None = None
    login_idle_seconds: float | None = None
    frames_per_second: float | None = None
    frame_burst: int | None = None
    login_failures_per_connection: int | None = None
    login_failure_delay: float | None = None
    login_failure_delay_max: float | None = None
    login_failures_per_address: int | None = None
    login_failure_window: float | None = None
    login_failures_per_account: int | None = None
    login_account_window: float | None = None
    login_failures_global: int | None = None
    password_hashes_per_address: int | None = None
    password_hashes_per_account: int | None = None
    password_hash_window: float | None = None
    accounts_per_address: int | None = None
    failed_login_log_lines: int | None = None
    hashing_threads: int | None = None
    password_min_length: int | None = None
    password_hash_cost: int | None = None
    web_connections_per_address: int | None = None
    tp_descriptor_share: float | None = None
    web_header_seconds: float | None = None
    web_body_seconds: float | None = None
    web_idle_seconds: float | None = None
    web_requests_per_second: float | None = None
    web_request_burst: int | None = None
    web_form_fields: int | None = None
    notification_tests_per_hour: int | None = None
    admin_connections_per_address: int | None = None
    admin_login_seconds: float | None = None
    admin_idle_seconds: float | None = None
    admin_frames_per_second: float | None = None
    admin_frame_burst: int | None = None
    computer_games_per_account: int | None = None
    computer_games_max: int | None = None


_KINDS: dict[str, type] = {item.name: type(getattr(Limits(), item.name)) for item in fields(Limits)}


def limit_names() -> tuple[str, ...]:
    return tuple(_KINDS)


def apply_limits(limits: Limits, values: dict[str, Any]) -> Limits:
    """`limits` with `values` (a TOML table or parsed flags; None = unset) applied and checked;
    ValueError names the setting."""
    changes: dict[str, Any] = {}
    for name, value in values.items():
        if value is None:
            continue
        kind = _KINDS.get(name)
        if kind is None:
            raise ValueError(f"{name}: unknown limit (known: {', '.join(_KINDS)})")
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or (kind is int and isinstance(value, float))
        ):
            raise ValueError(f"{name}: expected {'an integer' if kind is int else 'a number'}, not {value!r}")
        changes[name] = kind(value)
    return replace(limits, **changes).validated()


def parse_limit_flag(text: str) -> tuple[str, int | float]:
    """`NAME=VALUE` (from `--limit`) → (name, number); ValueError with a one-line reason."""
    name, equals, value = text.partition("=")
    name = name.strip().replace("-", "_")
    if not equals or not name:
        raise ValueError(f"--limit {text!r}: expected NAME=VALUE, e.g. connections_per_address=100")
    kind = _KINDS.get(name)
    if kind is None:
        raise ValueError(f"--limit {name}: unknown limit (known: {', '.join(_KINDS)})")
    try:
        return name, kind(value.strip())
    except ValueError:
        raise ValueError(
            f"--limit {name}: expected {'an integer' if kind is int else 'a number'}, not {value.strip()!r}"
        ) from None
