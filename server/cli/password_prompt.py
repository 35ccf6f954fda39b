"""Asking the operator for a password, which only works on a terminal.

Without one (a cron job, a pipe, `ssh host tae-server …`) Python's getpass would warn that the
password may be echoed and then read nothing; the commands that take `--password` refuse at
once instead, in one line, so the operator knows to give `--password`.
"""

from __future__ import annotations

import os
import sys

import click

NO_TERMINAL = "no terminal to ask for the password on: give --password (or run on a terminal)"


def terminal_available() -> bool:
    """True when a hidden prompt can be shown: the process has a controlling terminal
    (getpass reads /dev/tty) or its standard input is one."""
    try:
        descriptor = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:
        stdin = sys.stdin
        return stdin is not None and stdin.isatty()
    os.close(descriptor)
    return True


def asked_password(text: str, *, confirm: bool) -> str:
    """The password typed at a hidden prompt (twice if `confirm`); a usage error without a
    terminal."""
    if not terminal_available():
        raise click.UsageError(NO_TERMINAL)
    return click.prompt(text, hide_input=True, confirmation_prompt=confirm)


def password_option(text: str, *, confirm: bool, help: str, check=None):
    """A `--password` option asked for on a terminal when not given (see `asked_password`);
    `check(ctx, param, value)` may refuse the password."""

    def callback(ctx, param, value):
        if value is None:
            value = asked_password(text, confirm=confirm)
        return check(ctx, param, value) if check is not None else value

    return click.option("--password", default=None, callback=callback, help=help)
