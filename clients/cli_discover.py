"""``tae-client discover``: list the Thousand Parsec servers advertised on the local network.

It needs no connection settings: it listens for mDNS/DNS-SD announcements
(``clients.discovery``) for ``--wait`` seconds and prints each server with the options that
connect to it.
"""

from __future__ import annotations

import time

import click
from rich.text import Text

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
    show(run, as_json, data, _render, key="servers")


def _connect_options(server: DiscoveredServer) -> str:
    options = f"--host {server.connect_host} --port {server.port}"
    return options + " --tls" if server.tls else options


def _render(console, data: list[dict]) -> None:
    """Two lines per server: what it is, then the command that connects to it."""
    if not data:
        console.print("no Thousand Parsec servers announced themselves")
        return
    for server in data:
        facts = [" ".join(part for part in (server["rule"], server["rulever"]) if part) or "rules unknown"]
        if server["game"] and server["game"] != server["name"]:
            facts.insert(0, f"game {server['game']}")
        if server["turn"] is not None:
            facts.append(f"turn {server['turn']}")
        if server["players"] is not None:
            facts.append(f"{server['players']} players")
        if server["next_turn"]:
            facts.append(f"next turn {_next_turn(server['next_turn'])}")
        facts.append(f"TP {','.join(server['versions']) or '?'}" + (" over TLS" if server["tls"] else ""))
        line = Text(server["name"], style="bold")
        if not server["complete"]:
            line.append(" (incomplete TXT)")
        line.append("  " + ", ".join(facts))
        console.print(line)
        console.print(f"  tae-client {server['connect']}")


def _next_turn(when: int | None) -> str:
    if when is None or when <= 0:
        return "-"
    left = when - int(time.time())
    if left <= 0:
        return "due"
    minutes, seconds = divmod(left, 60)
    hours, minutes = divmod(minutes, 60)
    return f"in {hours}h {minutes:02d}m" if hours else f"in {minutes}m {seconds:02d}s"
