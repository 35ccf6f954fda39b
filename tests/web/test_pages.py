"""The HTML pages: lobby, game page, past turns, logging in, the player view and its forms."""

from __future__ import annotations

import re

from twisted.logger import formatEvent, globalLogPublisher

from ruleset import OrderType

from .helpers import Client, log_in, world


def first_colonist(game, player: int, mining: bool = False):
    for fleet in game.state.hand(player):
        if (fleet.kind.label == "mining") == mining:
            return fleet
    raise AssertionError("no such colonist")


def free_habitable_system(game, avoid=()):
    state = game.state
    for cell, terrain in enumerate(state.board.terrain):
        if terrain == "." and cell not in state.colonies and cell not in avoid:
            return cell, state.board.system_id(cell)
    raise AssertionError("no free system")


def test_lobby_lists_each_game_with_its_players_and_the_join_form():
    _, game, site = world()
    page = Client(site).get("/")
    assert page.status == 200
    assert "Nebula" in page.text and "alice" in page.text and "bob" in page.text
    assert 'action="/join"' in page.text
    assert "accepts new players" in page.text
    assert '(<span class="countdown">in 5 min</span>)' in page.text  # the turn's time left


def test_every_answer_carries_the_security_headers():
    _, _, site = world()
    answer = Client(site).get("/games/Nebula")
    csp = answer.header("content-security-policy")
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert answer.header("x-content-type-options") == "nosniff"
    assert answer.header("x-frame-options") == "DENY"


def test_the_game_page_shows_every_system_of_the_map():
    _, game, site = world()
    page = Client(site).get("/games/Nebula")
    assert page.status == 200
    assert page.text.count('class="sys ') == game.state.board.size
    assert page.text.count('class="region"') == len(game.state.artifacts)  # each artifact system alone
    assert 'data-events="/games/Nebula/events"' in page.text


def test_a_hostile_player_name_is_shown_never_run():
    hostile = '<script>alert("x")</script><img src=x onerror=alert(1)>'
    _, game, site = world(players=("alice", hostile))
    client = Client(site)
    for path in ("/", "/games/Nebula", "/games/Nebula/map.svg"):
        text = client.get(path).text
        assert "<script>alert" not in text and "<img src=x" not in text, path
    assert "&lt;script&gt;alert(" in client.get("/games/Nebula").text
    alice = log_in(site, "Nebula", "alice", "alice-pw")
    play = alice.get("/games/Nebula/play").text
    assert "<script>alert" not in play and "&lt;script&gt;" in play  # in the "New player" message
    assert client.get("/api/games/Nebula").json()["players"][1]["name"] == hostile


def test_a_game_name_that_needs_escaping_works_in_every_link():
    _, game, site = world(name="A/B <c>")
    client = Client(site)
    lobby = client.get("/").text
    assert 'href="/games/A%2FB%20%3Cc%3E"' in lobby
    assert client.get("/games/A%2FB%20%3Cc%3E").status == 200


def test_unknown_games_turns_and_paths_are_404():
    _, _, site = world()
    client = Client(site)
    assert client.get("/games/Nope").status == 404
    assert client.get("/games/Nebula/turns/0").status == 404  # no turn played yet
    assert client.get("/nowhere").status == 404
    assert client.get("/static/../site.py").status == 404
    assert client.request("DELETE", "/games/Nebula").status == 405


def test_logging_in_sets_a_session_cookie_that_scripts_cannot_read():
    _, _, site = world()
    client = Client(site)
    token = client.csrf("/games/Nebula")
    answer = client.post_form(
        "/games/Nebula/login", {"csrf": token, "username": "alice", "password": "alice-pw"}
    )
    assert answer.status == 303 and answer.header("location") == "/games/Nebula/play"
    cookie = next(c for c in answer.headers["set-cookie"] if c.startswith("tae_session="))
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie.replace("Lax", "lax")
    assert client.get("/games/Nebula/play").status == 200


def test_a_wrong_password_is_refused_with_tps_reason():
    _, _, site = world()
    client = Client(site)
    token = client.csrf("/games/Nebula")
    answer = client.post_form("/games/Nebula/login", {"csrf": token, "username": "alice", "password": "nope"})
    assert answer.status == 401
    assert "Login Error - bad username or password" in answer.text
    assert "tae_session" not in client.cookies


def test_a_login_without_its_csrf_token_is_refused_with_the_reason_not_a_500():
    _, _, site = world()
    client = Client(site)
    fields = {"username": "alice", "password": "alice-pw"}
    answer = client.post_form("/games/Nebula/login", fields)  # no token, no cookie (curl -d ...)
    assert answer.status == 403
    assert "This form has expired; reload the page and try again." in answer.text
    assert "tae_session" not in client.cookies
    stale = client.post_form("/games/Nebula/login", {**fields, "csrf": "stale"})
    assert stale.status == 403 and "expired" in stale.text
    token = client.csrf("/games/Nebula")  # the refusal's page carries a good token
    assert client.post_form("/games/Nebula/login", {**fields, "csrf": token}).status == 303


def test_failed_web_and_api_logins_are_logged_with_address_and_name_never_the_password():
    events: list[dict] = []
    globalLogPublisher.addObserver(events.append)
    try:
        _, _, site = world()
        client = Client(site)
        token = client.csrf("/games/Nebula")
        client.post_form("/games/Nebula/login", {"csrf": token, "username": "alice", "password": "s3cret-x"})
        client.get("/api/games/Nebula/me", headers={"Authorization": "Basic Ym9iOnMzY3JldC15"})  # bob
    finally:
        globalLogPublisher.removeObserver(events.append)
    lines = [formatEvent(e) for e in events if "failed login" in str(e.get("log_format", ""))]
    assert lines == [
        "failed login from 127.0.0.1 for 'alice' (web)",
        "failed login from 127.0.0.1 for 'bob' (web)",
    ]
    assert not any("s3cret" in formatEvent(e) for e in events)


def test_a_form_without_its_csrf_token_is_refused():
    _, game, site = world()
    alice = log_in(site, "Nebula", "alice", "alice-pw")
    answer = alice.post_form("/games/Nebula/play/finish", {"csrf": "forged"}, json_answer=True)
    assert answer.status == 409 and answer.json()["error"]["code"] == 5
    assert game.snapshot.finished == frozenset()
    other = Client(site)  # a token of another browser does not work either
    token = other.csrf("/games/Nebula")
    assert alice.post_form("/games/Nebula/play/finish", {"csrf": token}).status == 303
    assert game.snapshot.finished == frozenset()
    assert "expired" in alice.get("/games/Nebula/play").text


def test_the_player_view_needs_a_login():
    _, _, site = world()
    answer = Client(site).get("/games/Nebula/play")
    assert answer.status == 303 and answer.header("location") == "/games/Nebula#login"


def test_the_player_view_shows_my_hand_with_its_types_and_my_messages():
    _, game, site = world()
    alice = log_in(site, "Nebula", "alice", "alice-pw")
    page = alice.get("/games/Nebula/play").text
    for fleet in game.state.hand(1):
        assert re.search(rf'value="{fleet.id}">\s*<span class="kind-dot kb-{fleet.kind.label}"', page)
    assert "Welcome to Thousand Parsec!" in page
    assert "Merchant Leader" in page and "Bomber" in page
    assert 'class="scoreplot"' in page


def test_placing_an_order_probes_it_first_and_shows_the_refusal():
    _, game, site = world()
    alice = log_in(site, "Nebula", "alice", "alice-pw")
    token = alice.csrf("/games/Nebula/play")
    settler = first_colonist(game, 1)
    cell, target = free_habitable_system(game)
    ok = alice.post_form(
        "/games/Nebula/play/probe", {"csrf": token, "fleet": settler.id, "target": target}, json_answer=True
    )
    assert ok.status == 200 and ok.json()["ok"] is True
    assert not game.snapshot.queues  # a probe inserts nothing
    placed = alice.post_form(
        "/games/Nebula/play/orders", {"csrf": token, "fleet": settler.id, "target": target}, json_answer=True
    )
    assert placed.json() == {
        "ok": True,
        "message": f"Order placed: Colonize {game.state.board.system_name(cell)}.",
    }
    (queued,) = game.snapshot.queue(settler.id)
    assert (queued.order.type, queued.order.target) == (OrderType.COLONIZE, target)
    again = alice.post_form(
        "/games/Nebula/play/probe", {"csrf": token, "fleet": settler.id, "target": target}, json_answer=True
    )
    assert again.status == 409
    assert again.json()["error"] == {
        "code": 3,
        "name": "UNAVAILABLE_TEMPORARILY",
        "message": "That fleet already has its order for this turn.",
    }
    page = alice.get("/games/Nebula/play").text
    assert "Colonize</b>" in page and 'class="order" data-order="1"' in page


def test_an_order_by_system_name_and_without_javascript_redirects_with_a_notice():
    _, game, site = world()
    alice = log_in(site, "Nebula", "alice", "alice-pw")
    token = alice.csrf("/games/Nebula/play")
    settler = first_colonist(game, 1)
    answer = alice.post_form(
        "/games/Nebula/play/orders", {"csrf": token, "fleet": settler.id, "system": "3, 9"}
    )
    assert answer.status == 303
    assert game.snapshot.queue(settler.id)[0].order.target == game.state.board.system_id(
        game.state.board.cell_at(3, 9)
    )
    assert "Order placed: Colonize 3, 9." in alice.get("/games/Nebula/play").text
    bad = alice.post_form(
        "/games/Nebula/play/orders", {"csrf": token, "fleet": settler.id, "system": "99, 99"}
    )
    assert bad.status == 303
    assert "There is no system 99, 99 on this board." in alice.get("/games/Nebula/play").text


def test_removing_an_order_and_finishing_the_turn():
    _, game, site = world()
    alice = log_in(site, "Nebula", "alice", "alice-pw")
    bob = log_in(site, "Nebula", "bob", "bob-pw")
    token = alice.csrf("/games/Nebula/play")
    settler = first_colonist(game, 1)
    _, target = free_habitable_system(game)
    alice.post_form("/games/Nebula/play/orders", {"csrf": token, "fleet": settler.id, "target": target})
    removed = alice.post_form(
        "/games/Nebula/play/remove", {"csrf": token, "fleet": settler.id, "slot": 0}, json_answer=True
    )
    assert removed.json()["ok"] and not game.snapshot.queues
    missing = alice.post_form(
        "/games/Nebula/play/remove", {"csrf": token, "fleet": settler.id, "slot": 0}, json_answer=True
    )
    assert missing.json()["error"]["message"] == "No such slot in that order queue."
    alice.post_form("/games/Nebula/play/orders", {"csrf": token, "fleet": settler.id, "target": target})
    assert alice.post_form("/games/Nebula/play/finish", {"csrf": token}, json_answer=True).json()["ok"]
    assert "You have finished this turn" in alice.get("/games/Nebula/play").text
    bob.post_form("/games/Nebula/play/finish", {"csrf": bob.csrf("/games/Nebula/play")})
    assert game.state.turn == 1 and game.state.colonies.get(game.state.board.cell_of_object(target))
    page = Client(site).get("/games/Nebula").text
    assert "alice placed a settler colony on" in page
    assert 'href="/games/Nebula/turns/0"' in page  # the first turn is turn 0


def test_a_past_turn_shows_the_map_as_it_was():
    _, game, site = world()
    settler = first_colonist(game, 1)
    cell, target = free_habitable_system(game)
    game.insert_order(1, settler.id, -1, int(OrderType.COLONIZE), target)
    game.end_turn()
    game.end_turn()
    client = Client(site)
    page = client.get("/games/Nebula/turns/0")
    # page N shows turn N, numbered as TP clients and the logs number turns: the first is 0
    assert page.status == 200 and "after turn 0" in page.text and "What turn 0 did" in page.text
    assert "alice placed a settler colony" in page.text
    assert "Turn 1 was a <b>normal</b> turn." in page.text
    assert 'href="/games/Nebula/turns/1">turn 1 →' in page.text and "← turn" not in page.text
    second = client.get("/games/Nebula/turns/1").text
    assert second.count("placed a") == 0 and "after turn 1" in second and "Turn 2 is a" in second
    assert 'href="/games/Nebula/turns/0">← turn 0' in second and "turn 2 →" not in second
    assert client.get("/games/Nebula/turns/2").status == 404  # turn 2 is the open one
    history = client.get("/games/Nebula/history").text
    assert 'href="/games/Nebula/turns/0">Turn 0</a>' in history
    assert 'href="/games/Nebula/turns/1">Turn 1</a>' in history and "Turn 2</a>" not in history


def test_joining_from_the_lobby_creates_the_account_and_logs_in():
    _, game, site = world()
    client = Client(site)
    token = client.csrf("/")
    fields = {"csrf": token, "game": "Nebula", "username": "carol", "password": "pw1", "password2": "pw1"}
    answer = client.post_form("/join", fields)
    assert answer.status == 303 and answer.header("location") == "/games/Nebula/play"
    assert game.state.player_by_name("carol") is not None
    assert "Welcome, carol" in client.get("/games/Nebula/play").text
    taken = client.post_form("/join", {**fields, "csrf": client.csrf("/")})
    assert taken.status == 409 and "An account with that name already exists." in taken.text
    differ = client.post_form(
        "/join", {**fields, "username": "dan", "password2": "x", "csrf": client.csrf("/")}
    )
    assert "The two passwords differ." in differ.text


def test_a_combat_turn_offers_reinforcements_to_the_combatants():
    from .bot_games import play

    _, game, site = world(players=("alice", "bob", "cy"))
    from ruleset import Phase

    def stop_at_combat(game):
        if game.state.phase is Phase.COMBAT:
            raise StopIteration

    try:
        play(game, every=stop_at_combat)
    except StopIteration:
        pass
    assert game.state.phase is Phase.COMBAT
    conflict = game.state.active_conflict
    owner = game.state.fleets[conflict.attacker].owner
    name = game.state.player(owner).name
    client = log_in(site, "Nebula", name, name + "-pw")
    page = client.get("/games/Nebula/play").text
    assert "You fight this combat turn" in page
    eligible = [f for f in game.state.hand(owner) if f.kind is conflict.reinforcement_kind]
    if eligible:
        assert f"Reinforce with colonist {eligible[0].id}" in page
        token = client.csrf("/games/Nebula/play")
        answer = client.post_form(
            "/games/Nebula/play/orders", {"csrf": token, "fleet": eligible[0].id}, json_answer=True
        )
        assert answer.json()["ok"]
        assert game.snapshot.queue(eligible[0].id)[0].order.type == OrderType.REINFORCE
    else:
        assert "no " + conflict.reinforcement_kind.label + " colonist left" in page


def test_logging_out_ends_the_session():
    _, _, site = world()
    alice = log_in(site, "Nebula", "alice", "alice-pw")
    token = alice.csrf("/games/Nebula/play")
    assert alice.post_form("/games/Nebula/logout", {"csrf": token}).status == 303
    assert alice.get("/games/Nebula/play").status == 303


def test_static_files_and_the_map_stylesheet():
    _, _, site = world()
    client = Client(site)
    assert "EventSource" in client.get("/static/live.js").text
    css = client.get("/static/map.css")
    assert css.header("content-type").startswith("text/css") and ".k-merchant{fill:" in css.text
    svg = client.get("/games/Nebula/map.svg")
    assert svg.header("content-type").startswith("image/svg+xml") and "<style>" in svg.text


def test_a_login_starts_a_new_session_and_keeps_the_other_games_logins():
    _, game, site = world()
    alice = log_in(site, "Nebula", "alice", "alice-pw")
    before = alice.cookies["tae_session"]
    token = alice.csrf("/games/Nebula/play")
    answer = alice.post_form("/games/Nebula/login", {"csrf": token, "username": "bob", "password": "bob-pw"})
    assert answer.status == 303
    assert alice.cookies["tae_session"] != before
    assert site.web.sessions.get(before) is None
    assert "bob in" in alice.get("/games/Nebula/play").text


def test_the_game_page_says_when_the_operator_paused_the_clock():
    _, game, site = world()
    client = Client(site)
    assert "paused" not in client.get("/games/Nebula").text
    game.paused = True
    game._publish()
    page = client.get("/games/Nebula").text
    assert "<b>paused</b> by the operator" in page and 'Turn <b class="turn-number">0</b>' in page
    assert client.get("/api/games/Nebula").json()["paused"] is True


def test_the_lobby_shows_a_calendar_timer_with_its_schedule_and_zone():
    from dataclasses import replace

    from server.model.timer_settings import TimerSettings

    _, game, site = world()
    game.setup = replace(
        game.setup, timer=TimerSettings("calendar", schedule="Mon,Wed,Fri 20:00", time_zone="Europe/Berlin")
    )
    game._publish()
    lobby = Client(site).get("/").text
    assert "Timer: calendar, turns end Mon,Wed,Fri 20:00 (Europe/Berlin)" in lobby


def test_a_finished_games_pages_say_why_it_ended_and_show_no_conflicts_left_unfought():
    from server.views.web.documents import public_game

    from .bot_games import play

    _, game, site = world(("ann", "bob", "cy"), seed=1)  # ends when the pool runs out, 2 conflicts queued
    play(game)
    assert public_game(game.snapshot)["conflicts"], "the test needs conflicts queued at the end"
    client = Client(site)
    last = game.state.turn - 1
    page = client.get(f"/games/Nebula/turns/{last}").text
    assert "The game ended with this turn." in page and "over turn" not in page
    assert "The game ended because the colonist pool ran out." in page
    assert "The game is over:" not in page and "Conflicts</h2>" not in page
    public = client.get("/games/Nebula").text
    assert "<b>the game is over</b>" in public and "Conflicts</h2>" not in public
    assert "The game ended because the colonist pool ran out." in public
    ann = log_in(site, "Nebula", "ann", "ann-pw")
    assert "Conflicts</h2>" not in ann.get("/games/Nebula/play").text


def test_a_turn_without_a_deadline_says_no_deadline_and_a_paused_one_paused():
    _, game, site = world()
    status = site.web.templates.get_template("_status.html")  # the lobby's, game's and player's
    g = {"turn": 3, "phase": "normal", "over": False, "resolving": False, "started": True, "paused": False}
    text = " ".join(status.render(g={**g, "seconds_left": -1}).split())
    assert text.endswith("a <b>normal</b> turn · no deadline </p>") and "left" not in text
    running = status.render(g={**g, "seconds_left": 125, "deadline": "2024-05-14T18:20:00+00:00"})
    assert (
        'ends <time class="deadline" datetime="2024-05-14T18:20:00+00:00" data-seconds="125">'
        '<span class="when">Tue 14 May 2024, 18:20 UTC</span> (<span class="countdown">in 2 min 5 s</span>)'
        "</time>"
    ) in running
    paused = " ".join(status.render(g={**g, "paused": True, "seconds_left": -1}).split())
    assert "<b>paused</b> by the operator" in paused and "deadline" not in paused
    alice = log_in(site, "Nebula", "alice", "alice-pw")
    game.paused = True
    game._publish()
    for path in ("/", "/games/Nebula", "/games/Nebula/play"):
        assert "<b>paused</b> by the operator" in alice.get(path).text, path
