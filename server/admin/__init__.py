"""The remote-admin listener: the Thousand Parsec admin protocol (spec/admin-protocol.md), as
tpadmin-cpp speaks it, on its own port, for admin accounts kept apart from every player.

    backend.py     `OperatorBackend`, the interface the commands call, and its answer values
    live.py        `LiveBackend`: the commands on a running server's games
    cluster.py     `ClusterBackend`: the commands on a cluster's games, from any node
    commands.py    the admin commands, made from the operator command table
                   (`server.operating.commands`), and how answers are shown
    session.py     one connection's conversation, sans I/O
    log_stream.py  the server's log as LogMessage frames to logged-in admins
    network.py     the Twisted protocol and factory
    listener.py    `listen(...)` and `build_factory(...)`: starting the listener

Its configuration section is `server.config.admin`; `tae-server admin-user NAME`, which makes an
account line for it, is `server.operating.admin_user`. A server starts the listener with::

    backend = LiveBackend(directory, store, reactor, config.game, desk=desk, hasher=hasher)
    ports = yield server.admin.listener.listen(reactor, config.admin, backend, hasher)
"""
