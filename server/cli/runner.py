"""Running the server in the foreground until SIGINT/SIGTERM, then stopping cleanly, once.

The runner installs its own SIGINT/SIGTERM handlers instead of Twisted's: the first signal
starts the stop (listeners closed, turns being resolved stored, the store closed); any further
signal while that runs is only logged. (Twisted's handlers call `reactor.stop()` again, which
raises and prints a traceback.) A signal that arrives while the server is still starting stops
it as soon as the start has finished, so a half-started server never leaves a lease or an open
database behind.
"""

from __future__ import annotations

import resource
import signal
import sys

from twisted.internet import defer
from twisted.logger import Logger

from server.app import Server, start_server
from server.cli.logs import begin_logging
from server.config.errors import ConfigError
from server.config.file import ServerConfig

log = Logger()

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def raise_open_files_limit() -> int:
    """Raise this process's open-files limit to its hard limit (every connection is a file);
    returns the limit now in force."""
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if hard == resource.RLIM_INFINITY or soft < hard:
            target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        return resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ValueError, OSError):
        return -1


class Runner:
    """One run of the server on a reactor: start, serve, stop once."""

    def __init__(self, config: ServerConfig, reactor):
        self.config = config
        self.reactor = reactor
        self.code = 0
        self.server: Server | None = None
        self.stopping = False
        self._start: defer.Deferred | None = None

    def run(self) -> int:
        for number in STOP_SIGNALS:
            signal.signal(number, self._signalled)
        self.reactor.addSystemEventTrigger("before", "shutdown", self._shutdown)
        self.reactor.callWhenRunning(self._begin)
        self.reactor.run(installSignalHandlers=False)
        # Stopped: a signal that still comes is ignored (while the interpreter shuts down,
        # Python would put back the default handlers, and the signal would kill the process).
        for number in STOP_SIGNALS:
            signal.signal(number, signal.SIG_IGN)
        return self.code

    def _signalled(self, number: int, frame) -> None:
        # A signal handler runs between two bytecodes of the reactor thread: hand over.
        self.reactor.callFromThread(self.stop, signal.Signals(number).name)

    def stop(self, why: str) -> None:
        """Stop the server (the first call); later calls only say that it is stopping."""
        if self.stopping:
            log.info("{why}: the server is already stopping", why=why)
            return
        self.stopping = True
        log.info("{why}: stopping the server", why=why)
        if self.reactor.running:
            self.reactor.stop()

    def _begin(self) -> None:
        limit = raise_open_files_limit()
        if limit > 0:
            log.debug("open files allowed: {limit}", limit=limit)
        self._start = start_server(self.config, self.reactor)
        self._start.addCallbacks(self._started, self._failed)

    def _started(self, server: Server) -> None:
        """The server serves (its listeners said where, `server.services.listeners`)."""
        self.server = server
        self._tell_unapplied_flags(server)
        first_port = getattr(server.ports[0].getHost(), "port", 6923) if server.ports else 6923
        for game in server.directory.games.values():
            log.info(
                "game {name!r}: {players} players, turn {turn}. Connect a Thousand Parsec client to "
                "localhost:{port}, create an account and log in as <name>@{name}",
                name=game.setup.name,
                players=len(game.state.players),
                turn=game.state.turn,
                port=first_port,
            )

    def _tell_unapplied_flags(self, server: Server) -> None:
        """One line on stderr per `serve` game flag the existing open game did not take."""
        requested = dict(self.config.serve_game_flags)
        if not requested or self.config.node is not None:
            return
        from server.cli.serve_flags import unapplied_flags

        name = self.config.game.name
        game = server.directory.games.get(name)
        wanted = self.config.game.setup(ctime=0)
        for line in unapplied_flags(requested, wanted, None if game is None else game.setup, name):
            print(f"tae-server: {line}", file=sys.stderr)

    def _failed(self, failure) -> None:
        error = failure.value
        if isinstance(error, ConfigError):
            print(f"tae-server: {error}", file=sys.stderr)
            self.code = 2
        else:
            print(f"tae-server: cannot start: {' '.join(str(error).split())}", file=sys.stderr)
            self.code = 1
        if not self.stopping:
            self.stopping = True
            self.reactor.stop()

    def _shutdown(self) -> defer.Deferred | None:
        """Before the reactor stops: let a start in progress finish, then stop the server."""
        if self._start is None:
            return None
        waited: defer.Deferred = defer.Deferred()
        self._start.addBoth(lambda _: waited.callback(None))

        def stop_server(_: object) -> defer.Deferred | None:
            return self.server.stop() if self.server is not None else None

        return waited.addCallback(stop_server)


def run(config: ServerConfig) -> int:
    """Serve until stopped; returns the process exit status."""
    from twisted.internet import reactor

    begin_logging(config.log_format)
    return Runner(config, reactor).run()
