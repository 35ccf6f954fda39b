"""`python -m tests.admin.admin_server DATABASE_URL ADMIN_ENDPOINT`: a game server with an admin
listener, for the integration tests.

It starts the way `tae-server serve --admin ENDPOINT` is to be wired (`server.app.start_server`,
then `server.admin.listen` with a `LiveBackend` over the started server), listens for players
on tcp:0 on 127.0.0.1 and logs JSON lines, so `ServerProcess` can find both ports. The admin
accounts come from the environment (TAE_TEST_ADMIN_USERS, a JSON object name → hash).
"""

from __future__ import annotations

import json
import os
import sys

from twisted.internet import defer
from twisted.logger import Logger

from server.admin.listener import listen
from server.admin.live import LiveBackend
from server.app import start_server
from server.config.admin import AdminSettings
from server.config.file import GameConfig, ServerConfig
from server.model.timer_settings import TimerSettings
from server.operating.logs import begin_logging

log = Logger()


async def _start(reactor, url: str, endpoint: str):
    config = ServerConfig(
        listen=("tcp:0:interface=127.0.0.1",),
        database=url,
        log_format="json",
        game=GameConfig(timer=TimerSettings(turn_length=0)),
    )
    server = await start_server(config, reactor)
    users = json.loads(os.environ["TAE_TEST_ADMIN_USERS"])
    backend = LiveBackend(
        server.directory, server.store, reactor, config.game, desk=server.desk, hasher=server.hasher
    )
    ports = await listen(reactor, AdminSettings((endpoint,), "info", users), backend, server.hasher)
    for port in server.ports:
        address = port.getHost()
        log.info("listening on {host}:{port}", host=address.host, port=address.port)
    server.ports.extend(ports)
    reactor.addSystemEventTrigger("before", "shutdown", server.stop)
    return server


def main() -> None:
    from twisted.internet import reactor

    url, endpoint = sys.argv[1], sys.argv[2]
    begin_logging("json")

    def failed(failure):
        print(f"admin_server: cannot start: {failure.value}", file=sys.stderr)
        reactor.stop()

    reactor.callWhenRunning(lambda: defer.ensureDeferred(_start(reactor, url, endpoint)).addErrback(failed))
    reactor.run()


if __name__ == "__main__":
    main()
