"""Running the server in the foreground until SIGINT/SIGTERM, then stopping cleanly."""

from __future__ import annotations

import sys

from twisted.internet import defer
from twisted.logger import Logger

from .app import begin_logging, start_server
from .config import ConfigError, ServerConfig

log = Logger()


def run(config: ServerConfig) -> int:
    """Serve until stopped; returns the process exit status."""
    from twisted.internet import reactor

    status = {"code": 0}
    begin_logging(config.log_format)

    def started(server):
        for port in server.ports:
            address = port.getHost()
            log.info(
                "listening on {host}:{port}",
                host=getattr(address, "host", "?"),
                port=getattr(address, "port", "?"),
            )
        for game in server.directory.games.values():
            log.info(
                "game {name!r}: {players} players, turn {turn}. Connect a Thousand Parsec client to "
                "localhost:{port}, create an account and log in as <name>@{name}",
                name=game.setup.name,
                players=len(game.state.players),
                turn=game.state.turn,
                port=getattr(server.ports[0].getHost(), "port", 6923) if server.ports else 6923,
            )
        reactor.addSystemEventTrigger("before", "shutdown", server.stop)

    def failed(failure):
        error = failure.value
        if isinstance(error, ConfigError):
            print(f"tae-server: {error}", file=sys.stderr)
            status["code"] = 2
        else:
            print(f"tae-server: cannot start: {error}", file=sys.stderr)
            status["code"] = 1
        if reactor.running:
            reactor.stop()

    def begin():
        d = defer.ensureDeferred(_start(config, reactor))
        d.addCallbacks(started, failed)

    reactor.callWhenRunning(begin)
    reactor.run()
    return status["code"]


async def _start(config: ServerConfig, reactor):
    return await start_server(config, reactor)
