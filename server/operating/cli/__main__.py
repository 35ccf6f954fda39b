"""`python -m server.operating.cli`: the same as `tae-server`."""

from server.operating.cli import main

main()
