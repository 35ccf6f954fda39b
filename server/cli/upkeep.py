"""The `tae-server` commands that look after the database and the cluster rather than a game:
`upgrade-db`, `backup`, `nodes`, `ratings` (and `admin-user`, in `server.cli.admin_user`)."""

from __future__ import annotations

import click

from server.cli.options import database_options, database_url, open_database, print_json


@click.command()
@click.option("--json", "as_json", is_flag=True, help="One JSON object instead of a table.")
@database_options
def nodes(as_json, config_path, database) -> None:
    """List the cluster nodes, the games each runs, and the games waiting for a node."""
    from server.operating.on_database import cluster_view

    db = open_database(config_path, database)
    try:
        view = cluster_view(db)
    finally:
        db.close()
    if as_json:
        print_json("nodes", view)
        return
    if not view["nodes"]:
        click.echo("no cluster nodes have joined this database")
    for n in view["nodes"]:
        state = n["state"] if n["alive"] else "down"
        click.echo(
            f"{n['name']:<16} {state:<9} {n['advertise']:<22} pid {n['pid']} on {n['host']}, "
            f"heartbeat {n['heartbeat_age']:.0f} s ago, {len(n['games'])} games"
            + (f": {', '.join(n['games'])}" if n["games"] else "")
        )
    if view["waiting"]:
        click.echo(f"waiting for a node: {', '.join(view['waiting'])}")


@click.command("upgrade-db")
@database_options
def upgrade_db(config_path, database) -> None:
    """Create or migrate the database schema to this version's; prints the revision."""
    from server.database import SyncDatabase, head_revision
    from server.database.opening import one_line, shown_url
    from server.operating.game_actions import OperationError

    url = database_url(config_path, database)
    try:
        db = SyncDatabase(url)
    except Exception as error:
        raise OperationError(f"database: cannot use {shown_url(url)!r}: {one_line(error)}") from None
    url = shown_url(url)
    try:
        before = db.current_revision()
        after = db.upgrade()
    except Exception as error:
        raise OperationError(f"database: cannot upgrade {url}: {one_line(error)}") from None
    finally:
        db.close()
    if before == after:
        click.echo(f"database {url} is at revision {after} (the newest)")
    else:
        click.echo(
            f"database {url} upgraded from revision {before or 'none'} to {after}"
            + (" (the newest)" if after == head_revision() else "")
        )


@click.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--force", is_flag=True, help="Replace FILE if it exists.")
@database_options
def backup(file, force, config_path, database) -> None:
    """Copy a SQLite database consistently, also while the server runs (PostgreSQL: pg_dump)."""
    from server.database.opening import shown_url
    from server.operating.backup import backup as copy

    url = database_url(config_path, database)
    click.echo(copy(url, file, force=force).describe(shown_url(url)))


@click.command()
@click.option(
    "--rebuild",
    is_flag=True,
    help="First forget every rating and rate every finished game again, in the order they ended "
    "(also the games that ended before ratings existed).",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object instead of a table.")
@database_options
def ratings(rebuild, as_json, config_path, database) -> None:
    """List the accounts by rating (mu - 3 sigma, OpenSkill's Plackett-Luce), best first."""
    from server.database.opening import one_line
    from server.operating.game_actions import OperationError

    db = open_database(config_path, database)
    try:
        counted = db.ratings.rebuild() if rebuild else None
        table = db.ratings.table()
    except OperationError:
        raise
    except Exception as error:
        raise OperationError(f"database: {one_line(error)}") from None
    finally:
        db.close()
    lines = [
        {
            "rank": place,
            "name": line.name,
            "rating": round(line.rating.ordinal, 2),
            "mu": round(line.rating.mu, 3),
            "sigma": round(line.rating.sigma, 3),
            "games": line.rating.games,
        }
        for place, line in enumerate(table, 1)
    ]
    if as_json:
        rebuilt = None if counted is None else {"rated": counted[0], "against_the_computer": counted[1]}
        print_json("ratings", {"rebuilt": rebuilt, "players": lines})
        return
    if counted is not None:
        click.echo(f"rebuilt: {counted[0]} games rated, {counted[1]} against the computer kept unrated")
    if not lines:
        click.echo("no account has played a rated game yet")
    for line in lines:
        click.echo(
            f"{line['rank']:>4}. {line['name']:<24} {line['rating']:>7.2f}  "
            f"(mu {line['mu']:.2f}, sigma {line['sigma']:.2f}, "
            f"{line['games']} {'game' if line['games'] == 1 else 'games'})"
        )
