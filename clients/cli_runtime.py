"""What every ``tae-client`` command shares: exit codes, one-line errors, the connection of one
command (``Runtime``), and the helpers that print JSON or text.

``TaeGroup.main`` is the single place where a failure becomes ``tae-client: …`` on stderr and an
exit code from ``EXIT_CODES``; commands raise (``CliError``, a ``ClientError``, a settings or
turn-file error) and never print errors themselves. A broken pipe (``tae-client … | head``)
ends quietly.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

import click

from . import cli_output as output
from .blocking import BlockingClient
from .cli_settings import Settings, SettingsError, resolve_settings
from .errors import (
    CertificateUntrusted,
    ClientError,
    ConnectFailed,
    ConnectionClosed,
    Redirected,
    RequestFailed,
    RequestTimeout,
    TlsMismatch,
)
from .player_api import PlayerApi, PlayerApiError
from .tls import TlsOptions
from .turn_file import TurnFileError

__all__ = [
    "EXIT_CODES",
    "CliError",
    "Runtime",
    "TaeGroup",
    "describe_failure",
    "emit_json",
    "schema_id",
    "json_option",
    "refuse_when_over",
    "runtime",
    "say",
    "show",
    "with_options",
]

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2
EXIT_CONNECTION = 3
EXIT_GAME_OVER = 4
EXIT_WAIT_TIMEOUT = 5
EXIT_INTERRUPTED = 130
EXIT_INTERNAL = 70

EXIT_CODES = {
    EXIT_OK: "success",
    EXIT_REFUSED: "the server refused (an order, the login, the account …); nothing half-done",
    EXIT_USAGE: "bad command line, configuration or turn file (nothing was sent)",
    EXIT_CONNECTION: "cannot connect, connection lost, or the server did not answer in time",
    EXIT_GAME_OVER: "the game is over (submit, finish, wait, play)",
    EXIT_WAIT_TIMEOUT: "wait/play --timeout, or bot --deadline/--max-turns, passed first",
    EXIT_INTERNAL: "a bug in tae-client (rerun with --debug for the traceback)",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C)",
}

#: The `"code"` of a JSON error document (`{"error": {"code", "exit", "message"}}`) for each exit code.
ERROR_CODES = {
    EXIT_REFUSED: "refused",
    EXIT_USAGE: "usage",
    EXIT_CONNECTION: "connection",
    EXIT_GAME_OVER: "game-over",
    EXIT_WAIT_TIMEOUT: "timeout",
    EXIT_INTERNAL: "internal",
    EXIT_INTERRUPTED: "interrupted",
}

#: The version of every document `--json` prints (`"schema": "tae-client/COMMAND/1"`); the JSON
#: Schemas are clients/schemas/COMMAND.1.json (docs/schemas.md).
SCHEMA_VERSION = 1

F = TypeVar("F", bound=Callable[..., Any])


@dataclass
class JsonOutput:
    """What one run of ``tae-client`` prints on stdout in JSON mode: the command's one document,
    held until the command ends so that a failure after it (a refused submission, the game over
    while waiting) is told inside it (its ``"error"``), and a failure without one is the error
    document. Either way stdout holds exactly one JSON document."""

    wanted: bool = False
    document: dict[str, Any] | None = None


_OUTPUT: ContextVar[JsonOutput | None] = ContextVar("tae_client_json_output", default=None)


def schema_id(command_path: str) -> str:
    """ "tae-client order insert" → "tae-client/order-insert/1"."""
    words = command_path.split()[1:]
    return f"tae-client/{'-'.join(words) or 'tae-client'}/{SCHEMA_VERSION}"


def _asks_for_json(argv: list[str]) -> bool:
    options = argv[: argv.index("--")] if "--" in argv else argv
    return "--json" in options


def error_document(code: int, message: str) -> dict[str, Any]:
    """``{"error": {"code": "refused", "exit": 1, "message": "..."}}``."""
    return {"error": {"code": ERROR_CODES.get(code, "failed"), "exit": code, "message": message}}


class CliError(Exception):
    """A problem to report in one line, with the exit code to use."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


#: The longest word an error line repeats whole: a 5,000-character user name is not echoed back.
LONGEST_ECHOED_WORD = 80


def clip_words(line: str, limit: int = LONGEST_ECHOED_WORD) -> str:
    """`line` with every word longer than `limit` characters cut to `limit` and "…". Every
    error line goes through here (`TaeGroup.main`), whatever input it repeats. A word that
    names a file on this machine (the turn file or settings the user gave) stays whole: it is
    the user's own, and a cut path is no use to them (a long temporary folder is common)."""
    return " ".join(
        word if len(word) <= limit or _names_a_file(word) else word[:limit] + "…" for word in line.split(" ")
    )


def _names_a_file(word: str) -> bool:
    """Whether `word` is a path on this machine, or a missing file in a folder that exists."""
    path = word.rstrip(":,;.")
    try:
        return os.path.exists(path) or (os.sep in path and os.path.isdir(os.path.dirname(path)))
    except (OSError, ValueError):
        return False


def describe_failure(error: BaseException) -> tuple[int, str]:
    """The exit code and the one line for any failure of a command."""
    if isinstance(error, CliError):
        return error.code, error.message
    if isinstance(error, (SettingsError, TurnFileError)):
        return EXIT_USAGE, str(error)
    if isinstance(error, RequestFailed):
        return EXIT_REFUSED, f"the server refused: {error.fail.message}"
    if isinstance(error, PlayerApiError):
        if error.usage:
            return EXIT_USAGE, str(error)
        if 400 <= error.status < 500:
            return EXIT_REFUSED, f"the server refused: {error}"
        return EXIT_CONNECTION, str(error)
    if isinstance(error, TlsMismatch):
        if error.client_tls:
            return EXIT_CONNECTION, f"{error}: connect without --tls"
        return EXIT_CONNECTION, f"{error}: connect with --tls"
    if isinstance(error, CertificateUntrusted):
        return EXIT_CONNECTION, f"{error} (give --ca-file with its CA, or --insecure for a test server)"
    if isinstance(error, ConnectFailed):
        return EXIT_CONNECTION, str(error)
    if isinstance(error, RequestTimeout):
        return EXIT_CONNECTION, f"the server did not answer in time ({error})"
    if isinstance(error, ConnectionClosed):
        return EXIT_CONNECTION, f"lost the connection to the server: {error}"
    if isinstance(error, Redirected):
        return EXIT_CONNECTION, f"the server redirects to {error.uri}; connect there instead"
    if isinstance(error, ClientError):
        return EXIT_CONNECTION, f"cannot talk to the server: {error}"
    if isinstance(error, click.exceptions.NoArgsIsHelpError):
        path = error.ctx.command_path if error.ctx is not None else "tae-client"
        return EXIT_USAGE, f"missing command (see '{path} --help')"
    if isinstance(error, click.UsageError):
        hint = ""
        if error.ctx is not None:
            hint = f" (see '{error.ctx.command_path} --help')"
        return EXIT_USAGE, f"{error.format_message()}{hint}"
    if isinstance(error, click.ClickException):
        return EXIT_USAGE, error.format_message()
    return EXIT_INTERNAL, f"internal error: {type(error).__name__}: {error} (rerun with --debug)"


class TaeGroup(click.Group):
    """A click group whose ``main`` reports every error as ``tae-client: …`` on stderr and
    exits with the documented code (also under click's ``CliRunner``)."""

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> int:
        argv = list(sys.argv[1:] if args is None else args)
        debug = "--debug" in argv or os.environ.get("TAE_CLIENT_DEBUG", "") not in ("", "0")
        held = JsonOutput(wanted=_asks_for_json(argv))
        token = _OUTPUT.set(held)
        message = ""
        try:
            code = super().main(argv, "tae-client", complete_var, standalone_mode=False, **extra)
            code = code if isinstance(code, int) else EXIT_OK
        except (KeyboardInterrupt, click.Abort):
            message = "interrupted"
            click.echo(f"tae-client: {message}", err=True)
            code = EXIT_INTERRUPTED
        except BrokenPipeError:
            # `tae-client … | head`: the reader has gone; say nothing, and keep Python from
            # complaining when it flushes stdout at exit.
            _silence_stdout()
            code = EXIT_OK
        except Exception as error:
            code, message = describe_failure(error)
            message = clip_words(message)
            if code == EXIT_INTERNAL and debug:
                raise
            try:
                click.echo(f"tae-client: {message}", err=True)
            except BrokenPipeError:
                pass
        finally:
            _OUTPUT.reset(token)
        _print_document(held, code, message)
        if standalone_mode:
            sys.exit(code)
        return code


def _print_document(held: JsonOutput, code: int, message: str) -> None:
    """The one JSON document of a run: the command's, with ``"error"`` when it failed after
    all; the error document when it failed before it had one (and JSON was asked for)."""
    document = held.document
    if code != EXIT_OK and (document is not None or held.wanted):
        if document is None:
            document = {"schema": f"tae-client/error/{SCHEMA_VERSION}"}
        document.update(error_document(code, message))
    if document is None:
        return
    try:
        click.echo(output.dump_json(document))
    except BrokenPipeError:
        _silence_stdout()


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


# ------------------------------------------------------------------------------------------------
# The session of one command: settings, connection, output
# ------------------------------------------------------------------------------------------------


@dataclass
class Runtime:
    """One command's settings and connection (made when first asked for, closed at the end)."""

    flags: dict[str, object]
    config: str | None
    json_default: bool
    color: bool | None
    _settings: Settings | None = None
    _client: BlockingClient | None = None
    closers: list[Callable[[], object]] = field(default_factory=list)

    def settings(self) -> Settings:
        if self._settings is None:
            self._settings = resolve_settings(self.flags, os.environ, self.config)
            for warning in self._settings.warnings:
                click.echo(f"tae-client: {warning}", err=True)
        return self._settings

    def tls(self) -> TlsOptions | None:
        settings = self.settings()
        if not settings.tls:
            if settings.ca_file or settings.insecure:
                raise CliError(EXIT_USAGE, "--ca-file and --insecure are for TLS connections: add --tls")
            return None
        if settings.ca_file is not None and not os.path.isfile(settings.ca_file):
            origin = {"flag": "--ca-file", "env": "$TAE_CA_FILE"}.get(
                settings.sources.get("ca_file", ""), f"{settings.config_path}: ca_file"
            )
            raise CliError(EXIT_USAGE, f"{origin}: {settings.ca_file} does not exist")
        return TlsOptions(ca_file=settings.ca_file, insecure=settings.insecure)

    def credentials(self) -> tuple[str, str]:
        settings = self.settings()
        if not settings.user:
            raise CliError(
                EXIT_USAGE, "no user: give --user NAME[@GAME], set TAE_USER or put user in the config file"
            )
        password = settings.password
        if password is None:
            if sys.stdin.isatty():
                password = click.prompt(f"password for {settings.user}", hide_input=True, err=True)
            else:
                raise CliError(
                    EXIT_USAGE,
                    "no password: give --password, set TAE_PASSWORD or put password in the config file",
                )
        return settings.user, str(password)

    def connect(self) -> BlockingClient:
        settings = self.settings()
        client = BlockingClient.connect(
            settings.host, settings.port, version=settings.version, timeout=settings.timeout, tls=self.tls()
        )
        self.closers.append(client.close)
        return client

    def client(self) -> BlockingClient:
        """Connected, logged in and up to date."""
        if self._client is None:
            user, password = self.credentials()
            client = self.connect()
            try:
                client.login(user, password)
            except RequestFailed as error:
                raise CliError(EXIT_REFUSED, f"login as {user} refused: {error.fail.message}") from None
            client.update()
            self._client = client
        return self._client

    def player_api(self) -> PlayerApi:
        """The player's web API (``clients.player_api``) with this command's account."""
        _, password = self.credentials()
        try:
            return PlayerApi.from_settings(self.settings(), password)
        except PlayerApiError as error:
            raise CliError(EXIT_USAGE, str(error)) from None

    def forget_client(self) -> None:
        """Drop the connection (it broke); the next ``client()`` connects again."""
        client, self._client = self._client, None
        if client is not None:
            try:
                client.close()
            except Exception:
                pass

    def close(self) -> None:
        for close in reversed(self.closers):
            try:
                close()
            except Exception:
                pass
        self.closers.clear()

    def console(self, *, stderr: bool = False) -> Any:
        return output.make_console(self.color, stderr=stderr)

    def wants_json(self, flag: bool) -> bool:
        wanted = flag or self.json_default
        held = _OUTPUT.get()
        if wanted and held is not None:
            held.wanted = True
        return wanted

    @property
    def colored(self) -> bool:
        if self.color is not None:
            return self.color
        return "NO_COLOR" not in os.environ


def runtime() -> Runtime:
    """The ``Runtime`` of the command being run."""
    found = click.get_current_context().find_object(Runtime)
    assert found is not None, "a tae-client command runs under the tae-client group"
    return found


def emit_json(data: dict[str, Any]) -> None:
    """Print the command's JSON document: ``data`` after its ``"schema"`` (``schema_id``). Under
    ``TaeGroup.main`` it is printed when the command ends (``JsonOutput``)."""
    ctx = click.get_current_context(silent=True)
    document = {"schema": schema_id(ctx.command_path if ctx is not None else "tae-client"), **data}
    held = _OUTPUT.get()
    if held is None:
        click.echo(output.dump_json(document))
        return
    held.wanted = True
    held.document = document


def show(
    run: Runtime, as_json: bool, data: Any, render: Callable[[Any, Any], None], *, key: str | None = None
) -> None:
    """Print ``data`` as JSON when asked (flag or global --json), else with ``render(console, data)``.
    A list is put in its document under ``key`` (every document is an object with its schema)."""
    if run.wants_json(as_json):
        emit_json({key: data} if key is not None else data)
    else:
        render(run.console(), data)


def say(run: Runtime, as_json: bool, data: dict[str, Any], text: str) -> None:
    """Print ``data`` as JSON when asked, else the one line ``text``."""
    if run.wants_json(as_json):
        emit_json(data)
    else:
        click.echo(text)


def json_option(function: F) -> F:
    """``--json`` and ``--color/--no-color`` of a command that prints something."""
    function = click.option(
        "--color/--no-color",
        "color",
        default=None,
        callback=_set_color,
        expose_value=False,
        help="Force or turn off colour.",
    )(function)
    return click.option("--json", "as_json", is_flag=True, help="Print JSON (stable keys) instead of text.")(
        function
    )


def _set_color(ctx: click.Context, param: click.Parameter, value: bool | None) -> bool | None:
    if value is not None:
        found = ctx.find_object(Runtime)
        if found is not None:
            found.color = value
    return value


def with_options(options: Iterable[Callable[[F], F]]) -> Callable[[F], F]:
    """Apply a shared list of click options (in order) to a command."""

    def decorate(function: F) -> F:
        for option in reversed(list(options)):
            function = option(function)
        return function

    return decorate


def refuse_when_over(client: BlockingClient) -> None:
    """Exit 4 (with the game over message's first line) when the game has ended."""
    over = client.game.game_over
    if over is not None:
        raise CliError(
            EXIT_GAME_OVER,
            f"the game is over (turn {over.turn}): "
            f"{over.body.strip().splitlines()[0] if over.body else ''}".rstrip(": "),
        )
