"""A web listener over stand-in games, on a real port, for the browser tests.

Run as `python -m tests.integration.web_world [--players a,b] [--size WxH] [--bot-turns N]
[--until-combat]`: it listens on
127.0.0.1 (a free port), prints `listening PORT`, and serves until killed. The games are the
web tests' `FakeGame`s (real ruleset, no storage), so a test drives them over HTTP only.
"""

from __future__ import annotations

import argparse
import sys

from twisted.internet import reactor
from twisted.internet.endpoints import TCP4ServerEndpoint

from ruleset import DEFAULT_BOARD, Phase, parse_map
from ruleset.board import grid_map_text
from ruleset.simulator import RandomPlayer
from server.web import make_site
from tests.web.bot_games import play_turn
from tests.web.fake_game import FakeArchive, FakeDirectory, FakeGame


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--players", default="alice,bob")
    parser.add_argument("--size", default="")
    parser.add_argument("--name", default="Nebula")
    parser.add_argument("--password-suffix", default="-pw")
    parser.add_argument("--bot-turns", type=int, default=0, help="turns the random bots play first")
    parser.add_argument(
        "--until-combat", action="store_true", help="then the bots play on until a combat turn starts"
    )
    options = parser.parse_args(argv)
    board = DEFAULT_BOARD
    if options.size:
        width, _, height = options.size.partition("x")
        board = parse_map(grid_map_text(int(width), int(height)))
    archive = FakeArchive()
    game = FakeGame(options.name, reactor, archive, board=board, turn_length=3600)
    for name in filter(None, options.players.split(",")):
        failed = []
        game.create_account(name, name + options.password_suffix).addErrback(failed.append)
        if failed:
            sys.exit(f"cannot create player {name!r}: {failed[0].value}")
    strategy = RandomPlayer()
    for _ in range(options.bot_turns):
        play_turn(game, strategy)
    while options.until_combat and game.state.phase is Phase.NORMAL:
        play_turn(game, strategy)
    if options.until_combat and game.state.phase is not Phase.COMBAT:
        sys.exit("the game ended before any combat")
    site = make_site(FakeDirectory(game), archive, reactor, secret=b"browser-test-secret")

    def listening(port):
        print(f"listening {port.getHost().port}", flush=True)

    TCP4ServerEndpoint(reactor, 0, interface="127.0.0.1").listen(site).addCallback(listening)
    reactor.run()


if __name__ == "__main__":
    main(sys.argv[1:])
