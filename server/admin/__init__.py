"""The remote-admin listener: the Thousand Parsec admin protocol (spec/admin-protocol.md), as
tpadmin-cpp speaks it, on its own port, for admin accounts kept apart from every player.

    backend.py     `OperatorBackend`, the interface the commands call, and its answer values
    live.py        `LiveBackend`: the commands on a running server's games
    cluster.py     `ClusterBackend`: the commands on a cluster's games, from any node
    commands.py    the admin commands, made from the operator command table
                   (`server.operating.commands`), and how answers are shown
    session.py     one connection's conversation, sans I/O
    log_stream.py  the server's log as LogMessage frames to logged-in admins
    network.py     the Twisted protocol (over `server.tp.pump.RequestPump`) and factory
    listener.py    `build_factory(...)` and the checks of the settings

Its configuration section is `server.config.admin`; `tae-server admin-user NAME`, which makes an
account line for it, is `server.cli.admin_user`. A server serves its admin ports (bound
and opened with its other listeners, `server.services.listeners`) with
`server.services.admin.AdminService`, which makes the factory::

    backend = LiveBackend(directory, store, reactor, config.game, desk=desk, hasher=hasher)
    factory = server.admin.listener.build_factory(
        config.admin, backend, reactor, hasher, limits=config.limits, guard=guard, share=descriptors
    )

with the server's limits, its one login guard (shared with TP and the web) and the descriptor
share the listeners other than TP take from (`server.guards`).
"""
