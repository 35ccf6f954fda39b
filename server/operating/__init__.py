"""Operating a server: the operator actions, the desk of a running server, the command line,
backups and the runner."""
