"""The `game_over` notification renders the ruleset's final standing: its payload (`standing`,
and the old `ranking` rows), its text, and the bodies every channel sends."""

from __future__ import annotations

import json
from dataclasses import replace
from email import message_from_bytes

from twisted.internet.task import Clock

from ruleset import EndReason, Phase, final_standing
from ruleset.final_scoring import final_result
from server.notifications import events
from server.notifications.channels import email_message, webhook_body
from tests.support.deferreds import successResultOf
from tests.support.games import new_game
from tests.support.standing_lines import lines_of_document, lines_of_ruleset

START = 1_800_000_000.0
# bob's second-lowest category beats ann's at the same final score (BOARD tie-break); cid and
# dee are equal in all four categories once dee's artifact is added, and share first place.
SCORES = {
    "ann": (2, 2, 5, 5, 0),
    "bob": (1, 3, 3, 3, 1),
    "cid": (4, 4, 4, 4, 0),
    "dee": (3, 4, 4, 4, 1),
}


def finished_snapshot():
    clock = Clock()
    clock.advance(START)
    _, game = new_game("nova", clock)
    for name in SCORES:
        successResultOf(game.create_account(name, name + "-password"))
    state = game.state
    players = tuple(replace(p, scores=SCORES[p.name]) for p in state.players)
    over = replace(
        state,
        players=players,
        phase=Phase.OVER,
        turn=state.turn + 7,
        result=final_result(players, EndReason.STALEMATE),
    )
    return replace(game.snapshot, state=over), over


def test_the_payload_carries_the_standing_and_the_old_rows_from_it():
    snapshot, state = finished_snapshot()
    payload = events.game_over(snapshot, 1, START).payload
    assert lines_of_document(payload["standing"]) == lines_of_ruleset(final_standing(state))
    assert payload["winners"] == ["cid", "dee"] and payload["reason"] == "stalemate"
    assert payload["place"] == 4  # ann, behind bob by the tie-break
    assert [(r["name"], r["place"], r["winner"]) for r in payload["ranking"]] == [
        ("cid", 1, True),
        ("dee", 1, True),
        ("bob", 3, False),
        ("ann", 4, False),
    ]
    assert payload["ranking"][2]["scores"]["raw_materials"] == payload["ranking"][2]["scores"]["raw"] == 3
    assert events.game_over(snapshot, 4, START).payload["place"] == 1


def test_the_text_says_why_who_won_my_place_and_every_place_labelled():
    snapshot, _ = finished_snapshot()
    text = events.game_over(snapshot, 3, START).payload["text"]
    head, title, *lines = text.splitlines()
    assert head == (
        "Game nova is over after turn 6. The game ended in a stalemate: no colonist fleet could "
        "colonize any system. Winners: cid, dee. You: shared rank 1 of 4 (winner), final score 4."
    )
    assert title == "Final ranking:"
    assert lines == [
        "1. cid: shared rank 1 of 4 (winner), final score 4; after artifacts: Money 4, Technology 4, "
        "People 4, Raw Materials 4 (before: 4, 4, 4, 4; 0 alien artifacts)",
        "1. dee: shared rank 1 of 4 (winner), final score 4; after artifacts: Money 4, Technology 4, "
        "People 4, Raw Materials 4 (before: 3, 4, 4, 4; 1 alien artifact)",
        "3. bob: rank 3 of 4, final score 2; after artifacts: Money 2, Technology 3, People 3, "
        "Raw Materials 3 (before: 1, 3, 3, 3; 1 alien artifact)",
        "4. ann: rank 4 of 4, final score 2; after artifacts: Money 2, Technology 2, People 5, "
        "Raw Materials 5 (before: 2, 2, 5, 5; 0 alien artifacts)",
    ]


def test_every_channel_sends_the_standing():
    snapshot, _ = finished_snapshot()
    payload = events.game_over(snapshot, 2, START).payload
    ranking_line = "3. bob: rank 3 of 4, final score 2; after artifacts"
    discord = json.loads(webhook_body("discord", payload))["content"]
    slack = json.loads(webhook_body("slack", payload))["text"]
    assert ranking_line in discord and ranking_line in slack
    assert json.loads(webhook_body("json", payload))["standing"] == payload["standing"]
    mail = message_from_bytes(email_message(payload, "tae@example.org", "bob@example.org", START))
    body = mail.get_payload(decode=True).decode()
    assert ranking_line in body and body.count("after artifacts") == 4
    assert mail["Subject"] == "nova: the game is over"
