"""The web listener: lobby, public game pages with an SVG galaxy map, the player view, JSON API.

Served by the server's own reactor (twisted.web). Pages render only from `GameSnapshot`s and
write only through the game service's methods (see `server.web.contract`); this package never
imports `server.game.game`. Start with `make_site(directory, store, clock)`.
"""

from server.web.site import WebSite, make_site

__all__ = ["WebSite", "make_site"]
