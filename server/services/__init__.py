"""The parts of a running server as Twisted `Service`s, started in order and stopped in reverse
(`ordered.OrderedServices`); `server.app.Server` puts them together.

In the order they start (a part that is not configured is left out):

    listeners.py      the TP and web ports, bound and held (a bad endpoint, a port in use:
                      the start fails before the database is touched)
    store.py          the store opened (a SQLite file a failed start created is removed)
    logins.py         the password hashing pool; the login guard
    notifications.py  the notifications made (they follow every game brought to life)
    operations.py     the operator desk's lease (a single server on a database)
    games.py          the games loaded (at stop: the turns being resolved are stored)
    cluster.py        or, on a cluster node: the node joined (at stop: its games handed over)
    tp.py, web.py     the TP and web ports served
    admin.py          the admin ports bound and served
    notifications.py  the notifications delivered
    operations.py     the operator requests polled
    listeners.py      every port opened, one line each in the log
    discovery.py      the games advertised on the local network

So a server stops in this order: the advertisement withdrawn, every port closed, the operator
requests stopped (the lease given back), the event streams of the web pages ended, the turns
being resolved stored (a cluster node hands its games over), the notifications written and sent,
the login guard's summaries written, the hashing pool and last the store closed.
"""
