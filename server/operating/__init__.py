"""Operating games: the operator command table (each command declared once), its argument types,
the actions on a live game, the running server's desk of operator requests, the changes made
through the database without a server, backups. `tae-server` (server.cli) and the admin
protocol (server.admin) are made from the table."""
