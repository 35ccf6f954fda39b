"""The scenario command: `python -m ruleset.scenario FILE.toml` prints the result as JSON.

Exit status 0 when the file was played (even if orders were refused), 2 with one line on stderr
naming the key or line when it is malformed, 1 with one line for a bug (TAE_DEBUG=1 shows the
traceback). When the reader of stdout goes away (`| head`), the command stops quietly with
status 141, as a program stopped by SIGPIPE does.
"""

from __future__ import annotations

import json
import os
import sys

import click

from .play import play
from .result import result
from .schema import ScenarioError, parse
from .setup import set_up

EXIT_INTERNAL = 1
EXIT_MALFORMED = 2
EXIT_BROKEN_PIPE = 128 + 13  # SIGPIPE


def run_file(path: str) -> dict[str, object]:
    """Load, play and report one scenario file; ScenarioError when it is malformed."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError as error:
        raise ScenarioError(f"cannot read {path}: {error.strerror or error}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ScenarioError("the file is not UTF-8 text") from None
    scenario = set_up(parse(text))
    play(scenario)
    return result(scenario)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's last flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("path", metavar="FILE.toml")
def main(path: str) -> None:
    """Set up the TaE position FILE.toml describes, play its turns and print the result as JSON
    (the format is shared/spec/scenario-format.md)."""
    try:
        output = run_file(path)
    except ScenarioError as error:
        click.echo(f"{path}: {_one_line(str(error))}", err=True)
        sys.exit(EXIT_MALFORMED)
    except RecursionError:
        click.echo(f"{path}: the file is nested too deeply", err=True)
        sys.exit(EXIT_MALFORMED)
    except Exception as error:  # a bug, not bad input: still one line, never a traceback
        if os.environ.get("TAE_DEBUG"):
            raise
        click.echo(f"{path}: internal error: {type(error).__name__}: {_one_line(str(error))}", err=True)
        sys.exit(EXIT_INTERNAL)
    try:
        json.dump(output, sys.stdout, indent=2)
        sys.stdout.write("\n")
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
        sys.exit(EXIT_BROKEN_PIPE)


if __name__ == "__main__":
    main()
