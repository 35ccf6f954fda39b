"""Server configuration: one TOML file, overridden by command-line flags.

    listen = ["tcp:6923"]            # Twisted endpoint strings
    web = ["tcp:8080:interface=127.0.0.1"]  # the web pages and JSON API (absent = no web listener;
                                     # TLS: "ssl:8443:privateKey=key.pem:certKey=cert.pem")
    web_secret_file = "web-secret"   # the key that signs API tokens (made if missing; absent =
                                     # a new key at every start, so tokens end with the process)
    log_format = "text"              # or "json" (one JSON object per line)
    database = "sqlite:///tae.db"    # or postgresql+psycopg://user@host/db (every command reads it)
    trusted_proxies = ["127.0.0.1"]  # reverse proxies whose X-Forwarded-For/-Proto are believed

    [game]                           # the open game created when the server has none, and
                                     # the defaults of `tae-server create-game`
    name = "tae"
    map = "maps/small.txt"           # a map file ('.', 'M', 'A'); absent = the default map
    seed = 12345                     # absent = a random seed for each new game
    timer = "playersfinished"        # basic | playersfinished | threshold | calendar
    schedule = "Mon,Wed,Fri 20:00"   # calendar: when turns end (server.model.calendar_schedule)
    time_zone = "Europe/Berlin"      # calendar: the schedule's IANA zone (default UTC)
    finish_early = true              # calendar: everyone finished ends the turn before its time
    turn_length = "5m"               # a duration as on the command line ("90m", "4h", "1d") or seconds
    turn_players_min = 2
    turn_player_threshold = 0
    turn_length_over_threshold = 0   # durations too
    turn_length_under_threshold = 0
    max_players = 8                  # 0 = as many as the pool can deal a hand (25)
    auto_add = false                 # a login with an unknown name creates the account
    account_creation = true          # CreateAccount is offered (feature 1000)
    absent_after_missed_turns = 2    # turns missed in a row before the stand-in plays (0: never)
    vacation_days_max = 14           # the longest vacation a player may declare (0: none)

    [stand_in]                       # the computer player of absent players' seats
    level = "normal"                 # easy | normal | hard
    hard_budget = 100                # hard: playouts per decision (about 0.25 s on one core)
    hard_seconds = 0.9               # hard: the longest one decision searches (s): then its best so far
    hard_wait = 2.0                  # hard: the longest an end of turn waits for it (s)

    [cluster]                        # several nodes on one PostgreSQL database (docs/cluster.md)
    node = "node-a"                  # this node's name (or `serve --node NAME`)
    advertise = "10.0.0.5:6923"      # where the other nodes reach its TP listener (--advertise)
    web_advertise = "10.0.0.5:8080"  # ... and its web listener (--web-advertise; see there)
    poll_interval = 1.0              # the other settings: server.config.cluster

    [limits]                         # what one client may take (server.config.limits lists them all)
    connections_per_address = 10000  # 0 = no limit, for every limit
    password_min_length = 6

    [notifications]                  # webhooks and e-mail (server.config.notifications)
    smtp_host = "localhost"          # the relay for e-mail ("" = players can set webhooks only)
    reminder_lead = 3600             # remind players this many seconds before a deadline

The file is read against one typed schema (`ConfigFile`, with msgspec): an unknown key or a
value of the wrong type is refused. Every problem is a `ConfigError` with a one-line message
naming the setting.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import msgspec

import ruleset
from server.config.admin import AdminSettings, AdminTable, admin_settings
from server.config.cluster import ClusterSettings, ClusterSettingsError
from server.config.database_url import check_driver
from server.config.discovery import DiscoverySettings
from server.config.errors import ConfigError, describe_validation_error
from server.config.limits import Limits, LimitsTable, apply_limits
from server.config.networks import parse_networks
from server.config.notifications import NotificationSettings, NotificationSettingsError
from server.model.attendance import DEFAULT_ABSENT_AFTER, DEFAULT_VACATION_DAYS_MAX
from server.model.durations import DURATION_EXAMPLES, duration_seconds
from server.model.refusals import clipped
from server.model.stand_in import StandInSettings
from server.model.store import GameSetup
from server.model.timer_settings import TimerSettings, TimerSettingsError

DEFAULT_LISTEN = ("tcp:6923",)
# The open game's player limit: each player is dealt 6 of the pool's 153 colonists (R2, R3) and
# draws again every turn; 8 hands take 48, leaving two thirds of the pool to play with. (A game
# never takes a player the pool cannot deal a hand: `ruleset.can_deal_hand`.)
DEFAULT_MAX_PLAYERS = 8
LOG_FORMATS = ("text", "json")

_GAME_INTS = (
    "seed",
    "turn_players_min",
    "turn_player_threshold",
    "max_players",
    "absent_after_missed_turns",
    "vacation_days_max",
)
_GAME_SETUP_INTS = ("seed", "max_players", "absent_after_missed_turns", "vacation_days_max")
#: The timer's lengths: whole seconds, or a duration as the command line takes it ("90m", "1d").
_GAME_DURATIONS = ("turn_length", "turn_length_over_threshold", "turn_length_under_threshold")


class GameTable(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """The `[game]` table as written; None = not set (the defaults or the flags apply)."""

    name: str | None = None
    description: str | None = None
    map: str | None = None
    timer: str | None = None
    seed: int | None = None
    turn_length: int | str | None = None
    turn_players_min: int | None = None
    turn_player_threshold: int | None = None
    turn_length_over_threshold: int | str | None = None
    turn_length_under_threshold: int | str | None = None
    schedule: str | None = None
    time_zone: str | None = None
    finish_early: bool | None = None
    max_players: int | None = None
    auto_add: bool | None = None
    account_creation: bool | None = None
    absent_after_missed_turns: int | None = None
    vacation_days_max: int | None = None


class ClusterTable(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """The `[cluster]` table as written (server.config.cluster)."""

    node: str | None = None
    advertise: str | None = None
    web_advertise: str | None = None
    poll_interval: float | None = None
    failover_timeout: float | None = None
    relay_timeout: float | None = None
    handover_timeout: float | None = None


class StandInTable(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """The `[stand_in]` table as written (server.model.stand_in)."""

    level: str | None = None
    hard_budget: int | None = None
    hard_wait: float | None = None
    hard_seconds: float | None = None


class ConfigFile(msgspec.Struct, forbid_unknown_fields=True):
    """The configuration file's schema: every key, its type; anything else is refused."""

    listen: str | list[str] | None = None
    web: str | list[str] | None = None
    web_secret_file: str | None = None
    log_format: str | None = None
    database: str | None = None
    trusted_proxies: list[str] | None = None
    game: GameTable | None = None
    limits: LimitsTable | None = None
    cluster: ClusterTable | None = None
    admin: AdminTable | None = None
    discovery: DiscoverySettings | None = None
    notifications: NotificationSettings | None = None
    stand_in: StandInTable | None = None


@dataclass(frozen=True)
class GameConfig:
    name: str = "tae"
    map_path: str | None = None
    seed: int | None = None  # None: not chosen (`serve` and `create-game` draw a random one)
    timer: TimerSettings = TimerSettings()
    max_players: int = DEFAULT_MAX_PLAYERS
    auto_add: bool = False
    account_creation: bool = True
    description: str = "An open game of TaE: anyone can join."
    absent_after_missed_turns: int = DEFAULT_ABSENT_AFTER
    vacation_days_max: int = DEFAULT_VACATION_DAYS_MAX

    def setup(self, ctime: int) -> GameSetup:
        """The setup of a new game with this configuration (reads and checks the map file)."""
        map_text = None
        if self.map_path is not None:
            try:
                map_text = Path(self.map_path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as error:
                raise ConfigError(
                    f"map: cannot read {self.map_path}: {getattr(error, 'strerror', None) or error}"
                ) from None
            try:
                ruleset.parse_map(map_text)
            except ruleset.MapError as error:
                raise ConfigError(f"map {self.map_path}: {error}") from None
        return GameSetup(
            name=self.name,
            map_text=map_text,
            seed=0 if self.seed is None else self.seed,
            timer=self.timer,
            max_players=self.max_players,
            auto_add=self.auto_add,
            account_creation=self.account_creation,
            description=self.description,
            ctime=ctime,
            absent_after_missed_turns=self.absent_after_missed_turns,
            vacation_days_max=self.vacation_days_max,
        )


@dataclass(frozen=True)
class ServerConfig:
    listen: tuple[str, ...] = DEFAULT_LISTEN
    web: tuple[str, ...] = ()
    web_secret_file: str | None = None
    log_format: str = "text"
    database: str | None = None
    # Reverse proxies whose X-Forwarded-For / -Proto are believed (server.guards.proxies).
    trusted_proxies: tuple[str, ...] = ()
    game: GameConfig = field(default_factory=GameConfig)
    limits: Limits = field(default_factory=Limits)
    # A cluster node's settings; a node only when `node` is set (the file, or `serve --node`).
    cluster: ClusterSettings | None = None

    @property
    def node(self) -> ClusterSettings | None:
        return self.cluster if self.cluster is not None and self.cluster.node else None

    admin: AdminSettings = field(default_factory=AdminSettings)
    discovery: DiscoverySettings = field(default_factory=DiscoverySettings)
    # The game flags `serve` was given (flag key → value): the runner says which of them an
    # existing open game did not take (server.cli.serve_flags).
    serve_game_flags: tuple[tuple[str, Any], ...] = ()
    notifications: NotificationSettings = field(default_factory=NotificationSettings)
    stand_in: StandInSettings = field(default_factory=StandInSettings)


def _expect(value: Any, kind: type, where: str) -> Any:
    if kind is int and isinstance(value, bool) or not isinstance(value, kind):
        raise ConfigError(f"{where}: expected {kind.__name__}, not {value!r}")
    return value


def _duration(value: Any, where: str) -> int:
    """Whole seconds of a length of time written as seconds (300) or as the command line takes
    it ("90m", "4h", "1d": `server.model.durations`)."""
    if isinstance(value, str):
        seconds = duration_seconds(value)
        if seconds is None:
            raise ConfigError(f"{where}: expected a duration like {DURATION_EXAMPLES}, not {clipped(value)}")
        return int(round(seconds))
    return _expect(value, int, where)


def load_config(path: str | None) -> ServerConfig:
    """Read a TOML configuration file (None = all defaults)."""
    if path is None:
        return ServerConfig()
    try:
        text = Path(path).read_bytes()
    except OSError as error:
        raise ConfigError(f"cannot read configuration {path}: {error.strerror or error}") from None
    try:
        tomllib.loads(text.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ConfigError(f"configuration {path} is not valid TOML: {error}") from None
    try:
        data = msgspec.toml.decode(text, type=ConfigFile)
    except msgspec.ValidationError as error:
        raise ConfigError(f"configuration {path}: {describe_validation_error(error)}") from None
    config = ServerConfig()
    if data.listen is not None:
        listen = [data.listen] if isinstance(data.listen, str) else data.listen
        if not listen:
            raise ConfigError("listen: expected an endpoint string or a list of them")
        config = replace(config, listen=tuple(listen))
    if data.web is not None:
        config = replace(config, web=tuple([data.web] if isinstance(data.web, str) else data.web))
    if data.web_secret_file is not None:
        config = replace(config, web_secret_file=data.web_secret_file)
    if data.log_format is not None:
        config = replace(config, log_format=data.log_format)
    if data.database is not None:
        config = replace(config, database=data.database)
    if data.trusted_proxies is not None:
        config = replace(config, trusted_proxies=tuple(data.trusted_proxies))
    if data.game is not None:
        config = replace(
            config, game=apply_game_settings(config.game, msgspec.structs.asdict(data.game), "game.")
        )
    if data.limits is not None:
        config = replace(config, limits=limits_from(config.limits, msgspec.structs.asdict(data.limits)))
    if data.cluster is not None:
        given = {k: v for k, v in msgspec.structs.asdict(data.cluster).items() if v is not None}
        config = replace(config, cluster=ClusterSettings(**{"node": "", "advertise": "", **given}))
    if data.admin is not None:
        config = replace(config, admin=admin_settings(data.admin))
    if data.discovery is not None:
        config = replace(config, discovery=data.discovery)
    if data.notifications is not None:
        config = replace(config, notifications=data.notifications)
    if data.stand_in is not None:
        table = data.stand_in
        try:
            settings = StandInSettings.parse(
                table.level, table.hard_budget, table.hard_wait, table.hard_seconds
            )
        except ValueError as error:
            raise ConfigError(f"stand_in.{error}") from None
        config = replace(config, stand_in=settings)
    return validate(config)


def limits_from(limits: Limits, values: dict[str, Any], prefix: str = "limits.") -> Limits:
    """Override limits from a mapping (the TOML table or `--limit` flags); None = unset."""
    try:
        return apply_limits(limits, values)
    except ValueError as error:
        raise ConfigError(f"{prefix}{error}") from None


def apply_game_settings(game: GameConfig, values: dict[str, Any], prefix: str = "") -> GameConfig:
    """Override game settings from a mapping (TOML table or command-line flags); None = unset."""
    timer = game.timer
    changes: dict[str, Any] = {}
    for key, value in values.items():
        if value is None:
            continue
        where = prefix + key
        if key in ("name", "description"):
            changes[key] = _expect(value, str, where)
        elif key == "map":
            changes["map_path"] = _expect(value, str, where)
        elif key == "timer":
            timer = replace(timer, kind=_expect(value, str, where))
        elif key in ("schedule", "time_zone"):
            timer = replace(timer, **{key: _expect(value, str, where)})
        elif key == "finish_early":
            timer = replace(timer, finish_early=_expect(value, bool, where))
        elif key in ("auto_add", "account_creation"):
            changes[key] = _expect(value, bool, where)
        elif key in _GAME_SETUP_INTS:
            changes[key] = _expect(value, int, where)
        elif key in _GAME_DURATIONS:
            durations: dict[str, Any] = {key: _duration(value, where)}
            timer = replace(timer, **durations)
        elif key in _GAME_INTS:
            timer = replace(timer, **{key: _expect(value, int, where)})
        else:
            raise ConfigError(f"{where}: unknown setting")
    return replace(game, timer=timer, **changes)


def validate(config: ServerConfig) -> ServerConfig:
    if config.log_format not in LOG_FORMATS:
        raise ConfigError(f"log_format: expected one of {', '.join(LOG_FORMATS)}, not {config.log_format!r}")
    if not config.listen:
        raise ConfigError("listen: at least one endpoint is needed")
    check_driver(config.database)
    try:
        parse_networks(config.trusted_proxies)
    except ValueError as error:
        raise ConfigError(f"trusted_proxies (or --trusted-proxy): {error}") from None
    game = config.game
    if not game.name or "@" in game.name or game.name.strip() != game.name:
        raise ConfigError(f"game.name: {game.name!r} is not a usable game name")
    for key in ("max_players", "absent_after_missed_turns", "vacation_days_max"):
        if getattr(game, key) < 0:
            raise ConfigError(f"game.{key} cannot be negative")
    try:
        game.timer.validate()
    except TimerSettingsError as error:
        raise ConfigError(f"game.{error}") from None
    try:
        config.notifications.validate()
    except NotificationSettingsError as error:
        raise ConfigError(f"notifications.{error}") from None
    if config.node is not None:
        if not config.node.advertise:
            raise ConfigError("cluster.advertise: a node needs the HOST:PORT the other nodes reach it at")
        try:
            config.node.validate()
        except ClusterSettingsError as error:
            raise ConfigError(str(error)) from None
        if config.web and not config.web_secret_file:
            # Browser sessions, forms and API tokens are signed: every node must know the key.
            raise ConfigError(
                "web_secret_file (or --web-secret-file): a cluster node's web listener needs a key "
                "file, the same key on every node (docs/cluster.md)"
            )
    return config
