"""Puzzle 48: a grid sized at run time.

A batch padded to a fixed size often holds fewer real rows than it has room for: a
serving system keeps one compiled program for its largest batch and is told each time
how many rows are real. A kernel whose grid covers the whole array would fetch and add
every padding block too. A grid can instead be sized by a *value*:

    n = count[0] // BR              # a jax scalar, not a Python int
    pl.pallas_call(kernel, grid=(n,), ...)

Under ``jax.jit`` ``count[0]`` is only known when the program runs: the grid size
travels into the compiled kernel as a scalar (SMEM), the TPU's pipeline loops ``n``
times, and one compiled program serves every count. Turning it into a Python number
(``int(count[0])``) cannot work there (a traced value has no number yet), and outside
jit it would compile a new program for every count. Everything else stays as usual:
the index_maps, the blocks, and the accumulation on an ``"arbitrary"`` axis (on a chip
with two TensorCores a ``"parallel"`` one would be split between them, each core adding
into the block alone).

Task: ``z[0, c] = sum of x[r, c] over the first count rows``, for ``x`` of shape
``(R, C)`` and ``count`` an int32 array of shape ``(1,)``, a multiple of ``BR = 8``
between 8 and R. One grid step per block of BR real rows: the check counts the steps
and traces your launcher under ``jax.jit``.
"""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jaxtyping import Array, Float, Int

BR = 8  # rows per block


def spec(x: Float[Array, "R C"], count: Int[Array, "1"]) -> Float[Array, "1 C"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    rows = jnp.arange(x.shape[0])[:, None] < count[0]
    return jnp.sum(jnp.where(rows, x, 0.0), axis=0, keepdims=True)


def runtime_grid_kernel(x_ref, z_ref):
    # x_ref: (BR, C), one block of real rows. z_ref: (1, C), the same block at every step.
    # TODO: zero z on the first step, then add this block's column sums.
    pass


def runtime_grid(x: Float[Array, "R C"], count: Int[Array, "1"]) -> Float[Array, "1 C"]:
    c = x.shape[1]
    # TODO: the number of grid steps: one per block of BR real rows, from count.
    return pl.pallas_call(
        runtime_grid_kernel,
        out_shape=jax.ShapeDtypeStruct((1, c), x.dtype),
        grid=(1,),
        in_specs=[pl.BlockSpec((BR, c), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((1, c), lambda i: (0, 0)),
        compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),  # one sum, in order
    )(x)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
