"""The sentinel's first-visit flags: True exactly where a grid point starts a run of visits to its block."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from pallas_puzzles.engine.targets.pallas_call.intercept.sentinel import _first_visit_flags

CASES: list[tuple[str, tuple[int, ...], Callable[..., Any] | None]] = [
    ("rows revisited", (3, 4), lambda i, j: (i, 0)),
    ("columns", (3, 4), lambda i, j: (0, j)),
    ("transposed", (2, 3), lambda i, j: (j, i)),
    ("no index map", (2, 3), None),
    ("halved", (7,), lambda i: (i // 2,)),
    ("one block", (5,), lambda i: (0,)),
    ("3-d, middle axis revisits", (2, 3, 2), lambda i, j, k: (i, k)),
    ("a Python int beside a traced one", (4, 2), lambda i, j: (i // 2, 1)),
]


def _expected(grid: tuple[int, ...], index_map: Callable[..., Any] | None) -> list[bool]:
    points = list(itertools.product(*map(range, grid)))
    if index_map is None:
        return [t == 0 for t in range(len(points))]
    blocks = [tuple(int(v) for v in index_map(*point)) for point in points]
    return [t == 0 or blocks[t] != blocks[t - 1] for t in range(len(points))]


@pytest.mark.parametrize(("name", "grid", "index_map"), CASES, ids=[c[0] for c in CASES])
def test_a_flag_marks_each_first_visit_of_a_run(name: str, grid: tuple[int, ...], index_map: Any):
    count = int(np.prod(grid))
    strides = [int(np.prod(grid[a + 1:])) for a in range(len(grid))]

    def kernel(out_ref: Any) -> None:
        (flag,) = _first_visit_flags(grid, [index_map], [])
        linear = sum(pl.program_id(a) * s for a, s in enumerate(strides))
        out_ref[linear] = jnp.asarray(flag, jnp.int32)

    call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((count,), jnp.int32), grid=grid,
                          out_specs=pl.BlockSpec(memory_space=pltpu.SMEM), interpret=pltpu.InterpretParams())
    assert np.asarray(call()).astype(bool).tolist() == _expected(grid, index_map)
