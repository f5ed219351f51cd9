"""What the code printed: numpy's wrapped rows joined again, and nothing else joined."""

from __future__ import annotations

import numpy as np

from pallas_puzzles.report.printed_lines import rejoined


def _shown(array: np.ndarray, label: str = "") -> list[str]:
    return (label + str(array)).splitlines()


def test_a_row_numpy_wrapped_is_one_line_again_with_its_padding():
    row = np.linspace(-1.0, 1.0, 12)
    lines = _shown(row, "  x block = ")
    assert len(lines) > 1  # numpy wrapped it at 75 columns
    (joined,) = rejoined(lines)
    assert joined.split("[", 1)[1].rstrip("]").split() == [str(v) for v in str(row)[1:-1].split()]


def test_rows_of_a_matrix_and_slices_of_a_cube_keep_numpy_layout():
    matrix = np.arange(6.0).reshape(2, 3)
    assert rejoined(_shown(matrix)) == _shown(matrix)
    cube = np.arange(12.0).reshape(2, 2, 3)  # numpy puts a blank line between its 2-D slices
    assert rejoined(_shown(cube)) == _shown(cube)


def test_text_after_an_unclosed_bracket_is_not_joined_to_it():
    lines = ["x = [1 2", "done: loss went down"]
    assert rejoined(lines) == lines
