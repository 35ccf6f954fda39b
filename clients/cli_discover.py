"""``tae-client discover``: list the Thousand Parsec servers advertised on the local network.

It needs no connection settings: it listens for mDNS/DNS-SD announcements
(``clients.discovery``) for ``--wait`` seconds and prints each server with the options that
connect to it.
"""

from __future__ import annotations

import time

import click
from rich import box
from rich.table import Table

from .cli_runtime import EXIT_CONNECTION, CliError, json_option, runtime, show
from .discovery import DiscoveredServer, browse

__all__ = ["discover"]


@click.command()
@click.option(
    "--wait",
    "seconds",
    type=click.FloatRange(min=0.2, max=60),
    default=3.0,
    show_default=True,
    metavar="SECONDS",
    help="How long to listen for announcements.",
)
@click.option(
    "--interface",
    "interfaces",
    multiple=True,
    metavar="ADDRESS",
    help="Listen only on the interface with this IP address (repeatable); default: all.",
)
@click.option("--ipv6", is_flag=True, help="Also listen on IPv6.")
@json_option
def discover(seconds, interfaces, ipv6, as_json):
    """List Thousand Parsec servers on the local network (mDNS: _tp._tcp and _tps._tcp).

    Each line gives the options that connect to that server, e.g.
    "--host 192.168.1.20 --port 6924 --tls". Exit 0 also when none is found.
    """
    run = runtime()
    try:
        if interfaces:
            servers = browse(seconds, interfaces=list(interfaces), ipv6=ipv6)
        else:
            servers = browse(seconds, ipv6=ipv6)
    except OSError as error:
        raise CliError(EXIT_CONNECTION, f"cannot listen for mDNS announcements: {error}") from None
    data = [server.to_dict() | {"connect": _connect_options(server)} for server in servers]
    show(run, as_json, data, _render)


def _connect_options(server: DiscoveredServer) -> str:
    options = f"--host {server.connect_host} --port {server.port}"
    return options + " --tls" if server.tls else options


def _render(console, data: list[dict]) -> None:
    if not data:
        console.print("no Thousand Parsec servers announced themselves")
        return
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for column in ("name", "rules", "turn", "players", "next turn", "protocol", "connect with"):
        table.add_column(column)
    for server in data:
        rules = " ".join(part for part in (server["rule"], server["rulever"]) if part) or "?"
        protocol = ",".join(server["versions"]) or "?"
        if server["tls"]:
            protocol += " TLS"
        table.add_row(
            server["name"] + ("" if server["complete"] else " (incomplete TXT)"),
            rules,
            "-" if server["turn"] is None else str(server["turn"]),
            "-" if server["players"] is None else str(server["players"]),
            _next_turn(server["next_turn"]),
            protocol,
            server["connect"],
        )
    console.print(table)


def _next_turn(when: int | None) -> str:
    if when is None or when <= 0:
        return "-"
    left = when - int(time.time())
    if left <= 0:
        return "due"
    minutes, seconds = divmod(left, 60)
    hours, minutes = divmod(minutes, 60)
    return f"in {hours}h {minutes:02d}m" if hours else f"in {minutes}m {seconds:02d}s"
