"""`tae-server admin-user NAME`: make an admin account for the `[admin.users]` configuration.

It asks for the password twice on a terminal (or takes `--password`, which it needs without a
terminal), checks that tpadmin-cpp could send it (the client lower-cases everything typed), and
prints the TOML line with the scrypt hash to add to the configuration; nothing is written
anywhere, so the command needs no access to the server's files. Register it with
`cli.add_command(admin_user)` in `server.cli`.
"""

from __future__ import annotations

import json

import click

from server.cli.password_prompt import password_option
from server.config.admin import password_problem, user_name_problem
from server.game.passwords import hash_password


def _check_password(ctx, param, value: str) -> str:
    problem = password_problem(value)
    if problem is not None:
        raise click.BadParameter(problem, ctx=ctx, param=param)
    return value


@click.command("admin-user")
@click.argument("name")
@password_option(
    "Password",
    confirm=True,
    check=_check_password,
    help="The admin's password (asked for twice on a terminal when not given).",
)
def admin_user(name: str, password: str) -> None:
    """Make an admin account: prints the line to add under [admin.users]."""
    problem = user_name_problem(name)
    if problem is not None:
        raise click.BadParameter(problem, param_hint="NAME")
    line = f"{name} = {json.dumps(hash_password(password))}"
    click.echo("[admin.users]")
    click.echo(line)
    click.echo(
        "tae-server: add this line under [admin.users] in the server's configuration, then restart it",
        err=True,
    )
