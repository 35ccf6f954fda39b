"""Several server nodes sharing the games through one PostgreSQL database (docs/cluster.md).

* `settings`: a node's name, advertised address and timings (`[cluster]`, `serve --node`).
* `server.database.ownership`: the node registry, the game claims and the fencing check.
* `fencing`: the node's fenced game store and its dedicated claim connection.
* `node`: `ClusterNode`, a node's life: joining, claim rounds, loading, handing over, stopping.
* `routing`: `ClusterSession`, the TP session that serves local games and relays the others.
* `relay`: `Upstream`, the TP connection from one node to another.
* `notify`: cluster news over LISTEN/NOTIFY (turns, timer announcements, claims, requests).
* `start`: what the server's start (`server.services`) calls for a node.

Nothing here is imported by a single server; `server.config.file` imports `settings` only.
"""
