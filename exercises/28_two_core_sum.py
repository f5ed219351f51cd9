"""Puzzle 28: split a reduction across two TensorCores, then combine.

Some TPU chips (v4, v5p, v7x) have two TensorCores behind one device, and a
kernel only uses both if its grid says how to share the work: an axis
marked ``"parallel"`` in ``dimension_semantics`` may be split between the
cores, an ``"arbitrary"`` axis runs in order on one core. The checker
simulates two cores here: the first grid axis really is divided between
them, and they run at the same time.

A sum over all rows cannot be split without care: if both cores add into
the same output block, their read-add-write steps interleave and one core's
additions are lost (a race; the checker reports it). The standard answer is
*partial results*: each core reduces its own half of the rows into its own
output block, and a tiny second step combines the two partials (here plain
``jnp.sum`` outside the kernel; XLA does that well).

With ``grid=(CORES, steps)``, program ``(core, k)`` reads row block
``core * steps + k`` (blocks of BR rows) and accumulates into partial
``core``. On the ``"arbitrary"`` axis ``k`` one partial's programs run one
after another, so the partial can be zeroed at ``k == 0`` and added to on
every step, as in puzzle 14.

Task: column sums ``z[0, c] = sum_r x[r, c]`` of ``x`` of shape ``(R, C)``,
R a multiple of ``CORES * BR = 16``. Write the grid, BlockSpecs, kernel and
the combine.
"""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jaxtyping import Array, Float

CORES = 2  # TensorCores sharing the work
BR = 8  # rows per block


def spec(x: Float[Array, "R C"]) -> Float[Array, "1 C"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return jnp.sum(x, axis=0, keepdims=True)


def two_core_sum_kernel(x_ref, part_ref):
    # x_ref: (BR, C), one row block. part_ref: (1, C), this core's partial column sums.
    # TODO: zero this core's partial on its first step, then add this block's column sums.
    pass


def two_core_sum(x: Float[Array, "R C"]) -> Float[Array, "1 C"]:
    r, c = x.shape
    steps = r // (CORES * BR)  # row blocks per core
    partials = pl.pallas_call(
        two_core_sum_kernel,
        out_shape=jax.ShapeDtypeStruct((CORES, 1, c), x.dtype),
        # TODO: grid (core, step); program (core, k) reads row block core * steps + k.
        grid=(1,),
        in_specs=[pl.BlockSpec((BR, c), lambda i: (0, 0))],
        # TODO: each core writes its own partial.
        out_specs=pl.BlockSpec((None, 1, c), lambda i: (0, 0, 0)),
        # TODO: dimension_semantics: the core axis parallel, the step axis arbitrary.
    )(x)
    # TODO: combine the partials.
    return partials[0]


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
