"""Findings name the real cause and the line that holds the mistake (issue 9).

Each test reads a mistake of course/builtin/mistakes.toml, as the session's dev check of the course
checked it, and asserts the finding's
kind, the line it names first and its wording, so that a finding cannot drift
back to blaming the grid, the padding or JAX's own words.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import MISTAKES, rendered

from pallas_puzzles.engine.targets.pallas_call.intercept import poison, static_slices
from pallas_puzzles.results import CheckResult


def checked(name: str, verdicts: dict[str, CheckResult]) -> tuple[CheckResult, str]:
    assert any(m.name == name for m in MISTAKES), name
    result = verdicts[name]
    return result, rendered(result)


def test_unwritten_memory_is_nan_then_garbage_of_both_signs_and_stale_data():
    inputs = (np.arange(3, dtype=np.int32), np.asarray([0.25, 7.0], np.float32))
    values = [poison.unwritten_memory(i, inputs) for i in range(5)]
    assert math.isnan(values[0][0]) and values[0][1] is None  # outputs keep the never-written sentinel
    # then output blocks that start as NaN, as a TPU's memory may hold: a kernel that clears them by
    # multiplying by zero, or builds on them in any other way, fails there
    assert values[1][0] == poison.GARBAGE and math.isnan(values[1][1])
    assert values[3] == (-poison.GARBAGE, None)
    assert values[2] == (0.25, 0.25)  # stale data: a value of the case's own, in padding and outputs alike
    assert values[4][0] == values[1][0] and math.isnan(values[4][1])
    assert poison.stale_value((np.zeros(4, np.float32),)) == poison.STALE_IF_NONE


@pytest.mark.parametrize(("indices", "shape", "bad"), [
    (slice(None, 32), (7,), True),
    (slice(0, 7), (7,), False),
    ((Ellipsis, slice(None, 9)), (4, 8), True),
    ((slice(None), slice(2, 8)), (4, 8), False),
    (8, (8,), True),
    (-1, (8,), False),
])
def test_static_slice_bounds(indices: object, shape: tuple[int, ...], bad: bool):
    assert (static_slices.problem(indices, shape) is not None) is bad


