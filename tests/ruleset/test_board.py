"""R1, R4: the board, its ids and adjacency."""

import pytest

from ruleset.board import DEFAULT_BOARD, MapError, parse_map


def test_default_map_has_176_systems_with_refs_terrain_counts():
    board = DEFAULT_BOARD
    assert board.size == 176
    assert board.terrain.count(".") == 125
    assert board.terrain.count("M") == 41
    assert board.terrain.count("A") == 10
    assert board.first_free_id == 354  # the first player's home system in REF


def test_artifact_systems_have_refs_object_ids():
    expected = {
        (10, 0): 22,
        (5, 1): 44,
        (14, 2): 94,
        (1, 3): 100,
        (8, 4): 146,
        (13, 6): 220,
        (5, 8): 268,
        (1, 9): 292,
        (15, 9): 320,
        (10, 10): 342,
    }
    board = DEFAULT_BOARD
    found = {board.coords[c]: board.system_id(c) for c in board.artifact_cells()}
    assert found == expected


def test_system_and_planet_ids_follow_rows_from_row_zero():
    board = DEFAULT_BOARD
    cell = board.cell_at(3, 2)
    assert board.system_id(cell) == 2 + 2 * (16 * 2 + 3)
    assert board.planet_id(cell) == board.system_id(cell) + 1
    assert board.cell_of_object(board.planet_id(cell)) == cell
    assert board.system_name(cell) == "3, 2"
    assert board.planet_name(cell) == "Planet 3, 2"


def test_last_text_line_is_row_zero_and_rows_may_differ_in_length():
    board = parse_map("A.\n...M\n")
    assert board.rows == ("...M", "A.")
    assert board.terrain[board.cell_at(3, 0)] == "M"
    assert board.terrain[board.cell_at(0, 1)] == "A"
    assert board.cell_at(2, 1) is None


def test_adjacency_is_orthogonal_without_wrap():
    board = parse_map("...\n...\n...\n")
    centre = board.cell_at(1, 1)
    assert sorted(board.coords[n] for n in board.neighbours[centre]) == [(0, 1), (1, 0), (1, 2), (2, 1)]
    corner = board.cell_at(0, 0)
    assert sorted(board.coords[n] for n in board.neighbours[corner]) == [(0, 1), (1, 0)]


def test_map_text_round_trips():
    assert parse_map(DEFAULT_BOARD.to_text()) == DEFAULT_BOARD


@pytest.mark.parametrize(
    "text, where", [("", "empty"), ("..X\n", "line 1, column 3"), ("..\n.a\n", "line 2")]
)
def test_bad_maps_are_refused_with_the_place(text, where):
    with pytest.raises(MapError, match=where):
        parse_map(text)
