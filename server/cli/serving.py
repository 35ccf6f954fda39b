"""`tae-server serve`: start the server (as one server of a database, or one cluster node)."""

from __future__ import annotations

import secrets
import sys
from dataclasses import replace

import click

from server.cli.options import (
    ALLOW_SYSTEM_DATABASE,
    ArgumentParam,
    allow_system_database_option,
    configured,
    database_origin,
)
from server.operating.game_settings import BY_KEY


@click.command()
@click.option("--config", "config_path", metavar="FILE", help="TOML configuration file.")
@click.option(
    "--listen",
    multiple=True,
    metavar="ENDPOINT",
    help="Twisted endpoint to listen on (repeatable); default tcp:6923.",
)
@click.option(
    "--web",
    multiple=True,
    metavar="ENDPOINT",
    help="Twisted endpoint for the web pages and JSON API (repeatable), e.g. tcp:8080:interface=127.0.0.1 "
    "or ssl:8443:privateKey=key.pem; default: the configuration's, else none.",
)
@click.option(
    "--web-secret-file",
    metavar="FILE",
    help="The key that signs sessions and API tokens (made if missing; the same file on every "
    "cluster node); default: the configuration's web_secret_file, else a new key at each start.",
)
@click.option(
    "--trusted-proxy",
    "trusted_proxies",
    multiple=True,
    metavar="ADDRESS",
    help="A reverse proxy (address or network) whose X-Forwarded-For/-Proto are believed "
    "(repeatable; replaces the configuration's trusted_proxies).",
)
@click.option("--map", "map_path", metavar="FILE", help="Map file for a new game ('.', 'M', 'A').")
@click.option("--seed", type=int, help="Random seed of a new game.")
@click.option(
    "--turn-length",
    type=ArgumentParam(BY_KEY["turn_length"].value),
    help="Seconds (or 90m, 4h, 1d) per turn (0: no deadline).",
)
@click.option(
    "--timer", type=ArgumentParam(BY_KEY["timer"].value), help="Turn timer (default playersfinished)."
)
@click.option("--game-name", help="Name of the open game created on first start (default tae).")
@click.option("--log-format", type=click.Choice(["text", "json"]), help="Log as text or JSON lines.")
@click.option("--database", metavar="URL", help="Database URL (default sqlite:///tae.db).")
@click.option(
    "--limit",
    "limits",
    multiple=True,
    metavar="NAME=VALUE",
    help="Set one limit of the [limits] table, e.g. connections_per_address=100 (repeatable; 0 = off).",
)
@click.option("--node", metavar="NAME", help="Run as this cluster node (PostgreSQL; see docs/cluster.md).")
@click.option("--advertise", metavar="HOST:PORT", help="Where the other nodes reach this node's TP listener.")
@click.option(
    "--web-advertise",
    metavar="HOST:PORT",
    help="Where the other nodes reach this node's web listener (default: the --advertise host).",
)
@click.option(
    "--admin",
    multiple=True,
    metavar="ENDPOINT",
    help="Listen for admin clients (tpadmin-cpp) on ENDPOINT (repeatable), e.g. tcp:6925.",
)
@allow_system_database_option
@click.pass_context
def serve(
    ctx,
    config_path,
    listen,
    web,
    web_secret_file,
    trusted_proxies,
    map_path,
    seed,
    turn_length,
    timer,
    game_name,
    log_format,
    database,
    node,
    advertise,
    web_advertise,
    admin,
    limits,
) -> None:
    """Start the server and play (stop it with SIGTERM or Ctrl-C)."""
    config = configured(
        config_path,
        listen,
        log_format,
        database,
        web=web,
        limits=limits,
        map=map_path,
        seed=seed,
        turn_length=turn_length,
        timer=timer,
        name=game_name,
    )
    from server.config.database_url import check_not_system_database

    allowed = bool(ctx.meta.get(ALLOW_SYSTEM_DATABASE))
    check_not_system_database(config.database, database_origin(config_path, database), allowed)
    if web_secret_file or trusted_proxies:
        from server.config.file import validate

        config = validate(
            replace(
                config,
                web_secret_file=web_secret_file or config.web_secret_file,
                trusted_proxies=tuple(trusted_proxies) or config.trusted_proxies,
            )
        )
    if node or advertise or web_advertise:
        from server.config.cluster import ClusterSettings
        from server.config.file import validate

        cluster = config.cluster or ClusterSettings("", "")
        cluster = replace(
            cluster,
            node=node or cluster.node,
            advertise=advertise or cluster.advertise,
            web_advertise=web_advertise or cluster.web_advertise,
        )
        if not cluster.node:
            raise click.UsageError("--advertise is for a cluster node: give --node NAME too")
        config = validate(replace(config, cluster=cluster))
    if admin:
        config = replace(config, admin=config.admin.with_listen(admin))
    config.game.setup(ctime=0)  # read and check the map now, before anything starts
    given = {"seed": seed, "turn_length": turn_length, "timer": timer, "map": map_path}
    config = replace(config, serve_game_flags=tuple((k, v) for k, v in given.items() if v is not None))
    if config.game.seed is None:
        # The open game made on a first start gets a random seed unless one was asked for
        # (the configuration's [game] seed, or --seed).
        config = replace(config, game=replace(config.game, seed=secrets.randbelow(2**31)))
    from server.cli.runner import run

    sys.exit(run(config))
