"""`python -m server.cli`: the same as `tae-server`."""

from server.cli import main

main()
