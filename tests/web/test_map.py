"""The galaxy map: what each system shows, region outlines, tooltips, the score plot."""

from __future__ import annotations

import re

import pytest
from twisted.internet.task import Clock

from ruleset import Phase, Role, visible_to
from ruleset.regions import region_of_each_member
from server.views.web.galaxy import KIND_LETTERS, describe, galaxy
from server.views.web.mapsvg import render_map
from server.views.web.palette import KIND_CLASSES, player_class
from server.views.web.scoreplot import score_plot

from .bot_games import play
from .fake_game import FakeGame


@pytest.fixture(scope="module")
def busy_state():
    """A bot-game state with leaders out, a destroyed system and a pending unification system."""
    game = FakeGame("G", Clock(), seed=7)
    for name in ("a", "b", "c", "d"):
        game.create_account(name, "pw")
    found = []

    def look(game):
        state = game.state
        if state.unification_cells and state.destroyed and state.leader_at and not found:
            found.append(state)
            raise StopIteration

    try:
        play(game, every=look)
    except StopIteration:
        pass
    if not found:
        pytest.fail("no bot-game state with a unification system, a destroyed system and leaders")
    return found[0]


def test_every_system_shows_what_the_public_view_holds(busy_state):
    state = busy_state
    picture = galaxy(state.board, visible_to(state, 0))
    leaders = {cell: fid for fid, cell in state.leader_at.items()}
    labels = region_of_each_member(state.board, state.colonies, leaders, state.unification_cells)
    assert len(picture.systems) == state.board.size
    for system in picture.systems:
        cell = system.cell
        assert system.colony == state.colonies.get(cell)
        assert system.destroyed == (cell in state.destroyed)
        assert system.artifact == (cell in state.artifacts)
        assert system.unification == (cell in state.unification_cells)
        assert (system.leader.fleet if system.leader else None) == leaders.get(cell)
        expected = state.board.system_id(labels[cell]) if cell in labels else None
        assert system.region == expected


def test_the_svg_fills_leaders_with_their_kind_and_outlines_them_with_their_owner(busy_state):
    """A leader's fill is its kind's, as a colony's; its owner is an outline and a numbered badge
    (a player's colour is never a fill), so a leader is never mistaken for a colony."""
    state = busy_state
    svg = render_map(galaxy(state.board, visible_to(state, 0)))
    assert svg.count('class="unif"') == len(state.unification_cells)
    assert svg.count('class="x"') == len(state.destroyed)
    assert svg.count('class="leader"') == len(state.leader_at)
    for fleet_id, cell in state.leader_at.items():
        group = re.search(
            rf'<g class="leader" [^>]*data-at="{state.board.system_id(cell)}">(.*?)</g>', svg
        ).group(1)
        fleet = state.fleets[fleet_id]
        kind = KIND_CLASSES[fleet.kind]
        assert f'class="ldr k-{kind} {player_class(fleet.owner)}"' in group
        assert f'<rect class="badge {player_class(fleet.owner)}"' in group
        assert re.search(rf'<text class="bn"[^>]*>{fleet.owner}</text>', group)
        assert f">{KIND_LETTERS[fleet.kind]}</text>" in group
    assert 'fill="#' not in svg  # every colour comes from the palette's classes
    regions = set(
        region_of_each_member(
            state.board, state.colonies, state.leader_at.values(), state.unification_cells
        ).values()
    )
    assert svg.count('class="region"') == len(regions)


def test_a_region_outline_goes_round_its_members_only():
    from ruleset import new_game

    state = new_game()
    (cell, *_) = sorted(state.artifacts)
    picture = galaxy(state.board, visible_to(state, 0))
    region, edges = picture.outlines[0]
    x, y = state.board.coords[cell]
    assert region == state.board.system_id(cell)
    assert sorted(edges) == sorted(
        [(x, y + 1, x + 1, y + 1), (x, y, x + 1, y), (x, y, x, y + 1), (x + 1, y, x + 1, y + 1)]
    )


def test_a_tooltip_says_everything_about_its_system(busy_state):
    state = busy_state
    picture = galaxy(state.board, visible_to(state, 0))
    names = {p.id: p.name for p in state.players}
    cell = next(iter(state.unification_cells))
    assert "pending unification" in describe(picture.systems[cell], names)
    fleet_id, at = next(iter(state.leader_at.items()))
    owner = state.player(state.fleets[fleet_id].owner).name
    assert f"{owner}'s" in describe(picture.systems[at], names)


def test_no_colonist_type_is_in_the_public_view(busy_state):
    view = visible_to(busy_state, 0)
    assert all(f.kind is None for f in view.fleets.values() if f.role is Role.COLONIST)


def test_the_score_plot_draws_five_lines_scaled_to_the_best_score():
    svg = score_plot([(1, (0, 1, 0, 0, 0)), (2, (2, 1, 0, 4, 0)), (3, (3, 2, 1, 4, 1))])
    assert svg.count("<polyline") == 5
    assert ">4</text>" in svg  # the top of the scale
    assert score_plot([]).count("<polyline") == 0


def test_the_map_of_a_finished_game_still_renders():
    game = FakeGame("G", Clock(), seed=2)
    for name in ("a", "b"):
        game.create_account(name, "pw")
    play(game)
    assert game.state.phase is Phase.OVER
    assert render_map(galaxy(game.state.board, visible_to(game.state, 0))).endswith("</svg>")
