"""Several games in one server process, over TCP: each with its own map, seed, players, timer and
turn; `user@game` picks the game at login; GetGames lists them; the CLI creates and operates
games while the server runs.
"""

from __future__ import annotations

import pytest
from twisted.internet.task import Clock

import protocol as tp
from protocol import GameParamId
from ruleset import game_rng
from ruleset.simulator import RandomPlayer
from server.cli import main
from server.database import SyncDatabase
from server.game.game import Game
from server.game.replay import check_replay

from .server_process import ServerProcess
from .tp_client import TPClient

pytestmark = pytest.mark.timeout(120)

NORTH_MAP = "A...M.\n.M..A.\n......\nA.M..A\n"


def cli(capsys, *args: str) -> str:
    try:
        main(list(args))
    except SystemExit as done:
        out, err = capsys.readouterr()
        assert done.code in (0, None), err
        return out
    return capsys.readouterr().out


def player(port: int, login: str, password: str, create: bool = True) -> TPClient:
    client = TPClient(port)
    client.connect()
    if create:
        assert isinstance(client.create_account(login, password), tp.Okay)
    client.login(login, password)
    return client


def turn_of(client: TPClient) -> int:
    return client.time_remaining().turn


def games_by_name(client: TPClient) -> dict[str, tp.Game]:
    replies = client.request(tp.GetGames())
    frames = replies[1:] if isinstance(replies[0], tp.Sequence) else replies
    return {g.name: g for g in frames}


def param(game: tp.Game, which: int):
    return next(p.number for p in game.params if p.id == which)


def test_two_games_in_one_server_do_not_interfere(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'tae.db'}"
    map_file = tmp_path / "north.txt"
    map_file.write_text(NORTH_MAP)
    cli(
        capsys,
        "create-game",
        "north",
        "--map",
        str(map_file),
        "--seed",
        "11",
        "--turn-length",
        "0",
        "--database",
        url,
    )
    cli(
        capsys,
        "create-game",
        "south",
        "--seed",
        "22",
        "--timer",
        "basic",
        "--turn-length",
        "600",
        "--max-players",
        "2",
        "--database",
        url,
    )
    server = ServerProcess(url)
    clients: list[TPClient] = []
    try:
        port = server.start()
        ann_n = player(port, "ann@north", "north-pw")
        bob_n = player(port, "bob@north", "secret-pw")
        # one account per server: ann joins south with her account's password only
        refused = TPClient(port)
        clients.append(refused)
        refused.connect()
        wrong_password = refused.create_account("ann@south", "south-pw")
        assert isinstance(wrong_password, tp.Fail) and "give its password" in wrong_password.message
        ann_s = player(port, "ann@south", "north-pw")
        cat_s = player(port, "cat@south", "secret-pw")
        clients += [ann_n, bob_n, ann_s, cat_s]

        listed = games_by_name(ann_n)
        assert set(listed) == {"north", "south"}
        assert (
            param(listed["north"], GameParamId.PLAYERS) == 2
            and param(listed["south"], GameParamId.PERIOD) == 600
        )
        # south is full (two players), north is not
        extra = TPClient(port)
        clients.append(extra)
        extra.connect()
        assert isinstance(extra.create_account("dan@south", "secret-pw"), tp.Fail)
        assert isinstance(extra.create_account("dan@north", "secret-pw"), tp.Okay)
        wrong = extra.one(tp.Login("ann@south", "south-pw"))
        assert isinstance(wrong, tp.Fail)

        # each game has its own board: the universes differ in size
        ids_n = ann_n.one(tp.GetObjectIDs(-1, 0, -1, -1)).remaining
        ids_s = ann_s.one(tp.GetObjectIDs(-1, 0, -1, -1)).remaining
        ids_n = len(ann_n.one(tp.GetObjectIDs(-1, 0, -1, -1)).ids) + ids_n
        ids_s = len(ann_s.one(tp.GetObjectIDs(-1, 0, -1, -1)).ids) + ids_s
        assert ids_n != ids_s

        # an order in north; south's queue of the same object id stays empty
        with SyncDatabase(url) as db:
            stored = {g.setup.name: g for g in db.load_games()}
        north = Game.restore(stored["north"], None, Clock())
        order = RandomPlayer()(north.state, 1, game_rng(1, 1, "ann"))[0]
        assert isinstance(ann_n.one(ann_n.insert_order(order.fleet, int(order.type), order.target)), tp.Order)
        assert ann_n.queue(order.fleet) == [(int(order.type), order.target)]
        assert ann_s.queue(order.fleet) == []

        # north's players finish: north moves on, south does not
        for client in (ann_n, bob_n):
            assert isinstance(client.one(tp.FinishedTurn()), tp.Okay)
        dan_n = player(port, "dan@north", "secret-pw", create=False)
        clients.append(dan_n)
        assert turn_of(ann_n) == 0, "dan joined north: the turn waits for him too"
        assert isinstance(dan_n.one(tp.FinishedTurn()), tp.Okay)
        assert turn_of(ann_n) == 1 and turn_of(bob_n) == 1
        south_time = ann_s.time_remaining()
        assert south_time.turn == 0 and south_time.waiting == (1, 2) and 0 < south_time.time <= 600

        # operators, while the server runs: a third game, a player, the end of south's turn
        out = cli(capsys, "create-game", "east", "--seed", "33", "--database", url)
        assert "game 'east' loaded at turn 0" in out
        assert set(games_by_name(ann_s)) == {"north", "south", "east"}
        assert (
            cli(capsys, "add-player", "east", "eve", "--password", "eve-password", "--database", url)
            == "player 'eve' added to game 'east' as player 1\n"
        )
        eve = player(port, "eve@east", "eve-password", create=False)
        clients.append(eve)
        assert "turn 0 of game 'south' ended" in cli(capsys, "end-turn", "south", "--database", url)
        assert turn_of(ann_s) == 1 and turn_of(ann_n) == 1 and turn_of(eve) == 0
        out = cli(capsys, "remove-player", "north", "dan", "--database", url)
        assert "removed from game 'north'" in out
        assert ann_n.time_remaining().waiting == (1, 2)
        status = cli(capsys, "status", "north", "--database", url)
        assert "dan" in status and "removed" in status and "server: running" in status

        for client in clients:
            client.close()
        clients.clear()
        assert server.terminate() == 0, server.stderr
        with SyncDatabase(url) as db:
            stored = {g.setup.name: g for g in db.load_games()}
        assert [t.turn for t in stored["north"].turns] == [1] and [t.turn for t in stored["south"].turns] == [
            1
        ]
        assert stored["east"].turns == []
        assert stored["north"].setup.map_text == NORTH_MAP and stored["south"].setup.map_text is None
        for game in stored.values():
            assert check_replay(game) == []
    finally:
        for client in clients:
            client.close()
        server.kill()
