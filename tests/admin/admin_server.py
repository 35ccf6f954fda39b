"""`python -m tests.admin.admin_server DATABASE_URL ADMIN_ENDPOINT`: a game server with an admin
listener, for the integration tests.

It starts as `tae-server serve --admin ENDPOINT` does (`server.app.start_server` with the admin
settings), listens for players on tcp:0 on 127.0.0.1 and logs JSON lines, so `ServerProcess`
can find both ports (the events with `listener` "tp" and "admin"). The admin accounts come from
the environment (TAE_TEST_ADMIN_USERS, a JSON object name → hash).
"""

from __future__ import annotations

import json
import os
import sys

from twisted.internet import defer

from server.app import start_server
from server.cli.logs import begin_logging
from server.config.admin import AdminSettings
from server.config.file import GameConfig, ServerConfig
from server.model.timer_settings import TimerSettings


async def _start(reactor, url: str, endpoint: str):
    users = json.loads(os.environ["TAE_TEST_ADMIN_USERS"])
    config = ServerConfig(
        listen=("tcp:0:interface=127.0.0.1",),
        database=url,
        log_format="json",
        game=GameConfig(timer=TimerSettings(turn_length=0)),
        admin=AdminSettings((endpoint,), "info", users),
    )
    server = await start_server(config, reactor)
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
