"""The README's examples work: every command line it shows parses with today's `tae-server` and
`tae-client` (commands, options and arguments), and every file it shows loads.

A fenced block is checked as a file when the line before it is one of
``<!-- example: server-config -->`` (a `tae-server --config` file), ``<!-- example:
client-config -->`` (a `tae-client` config file) or ``<!-- example: turn-file -->``. Command lines
are the lines of ``sh`` and plain blocks that start with ``tae-server``, ``tae-client`` or
``.venv/bin/…`` of either; ``# comments`` and ``\\`` continuations are understood.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest

from clients.cli import cli as client_cli
from clients.cli_settings import resolve_settings
from clients.turn_file import parse_turn_text
from server.cli import cli as server_cli
from server.config.file import load_config

README = Path(__file__).resolve().parents[2] / "README.md"
FENCE = re.compile(
    r"^(?P<marker><!-- example: (?P<kind>[\w-]+) -->\n)?```(?P<lang>\w*)\n(?P<body>.*?)^```", re.M | re.S
)
PROGRAMS = {"tae-server": server_cli, "tae-client": client_cli}


def blocks() -> list[tuple[str | None, str, str]]:
    text = README.read_text()
    return [(m["kind"], m["lang"], m["body"]) for m in FENCE.finditer(text)]


def command_lines() -> list[str]:
    lines = []
    for kind, lang, body in blocks():
        if kind is not None or lang not in ("", "sh", "shell", "console"):
            continue
        joined = body.replace("\\\n", " ")
        for line in joined.splitlines():
            line = line.strip().removeprefix("$ ")
            words = line.split(maxsplit=1)
            if words and Path(words[0]).name in PROGRAMS and not words[0].startswith("-"):
                lines.append(line)
    return lines


def parse(line: str) -> None:
    """Parse one command line as click would run it, without running it."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|<>")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    words = []
    for word in lexer:
        if word in (";", "&&", "||", "|", "&") or set(word) <= set("<>&"):
            break  # the rest of the line is more shell (or a redirection)
        words.append(word)
    program = PROGRAMS[Path(words[0]).name]
    args = words[1:]
    # the ${VAR} and $(…) of a shell script stand for a value (a number fits every option)
    args = ["1" if "$" in arg else arg for arg in args]
    with program.make_context(Path(words[0]).name, list(args), resilient_parsing=False) as ctx:
        command: click.Command = program
        rest = _unparsed(ctx)
        while isinstance(command, click.Group) and rest:
            name, sub, rest = command.resolve_command(ctx, rest)
            assert sub is not None, f"{line}: no command {name}"
            ctx = sub.make_context(name or "", rest, parent=ctx)
            command = sub
            rest = _unparsed(ctx) if isinstance(sub, click.Group) else []


def _unparsed(ctx: click.Context) -> list[str]:
    return list(getattr(ctx, "_protected_args", [])) + list(ctx.args)


def test_the_readme_shows_commands():
    assert len(command_lines()) >= 20


@pytest.mark.parametrize("line", command_lines())
def test_every_command_line_parses(line, monkeypatch):
    # a password the command would ask for is typed in, on a terminal
    monkeypatch.setattr("server.cli.password_prompt.terminal_available", lambda: True)
    monkeypatch.setattr(click.termui, "hidden_prompt_func", lambda prompt: "typed-password")
    monkeypatch.setattr(click.termui, "visible_prompt_func", lambda prompt: "typed-password")
    try:
        parse(line)
    except click.exceptions.Exit:
        pass  # --help / --version
    except click.UsageError as error:
        pytest.fail(f"README: {line!r}: {error.format_message()}")


@pytest.mark.parametrize("kind, body", [(k, b) for k, _, b in blocks() if k is not None])
def test_every_example_file_loads(kind, body, tmp_path, monkeypatch):
    path = tmp_path / "example.toml"
    path.write_text(body)
    monkeypatch.chdir(tmp_path)
    if kind == "server-config":
        load_config(str(path))  # as a new user runs it: every file it names must exist
    elif kind == "client-config":
        path.chmod(0o600)
        resolve_settings({}, {}, str(path))
    elif kind == "turn-file":
        assert parse_turn_text(body, "README").orders
    else:
        pytest.fail(f"unknown example kind {kind!r}")


@pytest.mark.parametrize(
    "line", ["tae-server serve --no-such-flag", "tae-client no-such-command", "tae-server status"]
)
def test_the_checker_refuses_a_stale_example(line):
    with pytest.raises(click.UsageError):
        parse(line)
