"""Puzzle 16: prefix sum, carrying a running total across the grid.

The inclusive prefix sum of ``x`` is ``z[k] = x[0] + x[1] + ... + x[k]``.
Cut ``x`` into blocks of ``B``: block ``i`` needs the scan of its own
elements *plus* the total of every block before it. Blocks cannot see each
other, but on a TPU the grid is a loop that runs in order on one core, and a
scratch buffer survives from one grid step to the next. So keep the running
total there:

* ``scratch_shapes=[pltpu.SMEM((1,), jnp.float32)]`` gives the kernel a ref
  to one float32 in SMEM, the TPU's scalar memory. ``carry_ref[0]`` reads
  it, ``carry_ref[0] = value`` writes it. Like any scratch it starts out as
  garbage, so set it to 0 under ``pl.when(i == 0)``.
* Each step adds ``carry_ref[0]`` to its block's scan, writes the block, and
  adds the block's total into ``carry_ref[0]`` for the next step.
* The carry only works if the steps run in order, one after another. Say so
  with ``dimension_semantics=("arbitrary",)``; a ``"parallel"`` axis may be
  split across cores, and on a GPU every program runs at once.

Scanning one block: ``jnp.cumsum`` works in interpret mode, but Mosaic, the
TPU kernel compiler, cannot lower it. The TPU way is a matrix product. With
``U[j, k] = 1 where j <= k`` (else 0), ``(row @ U)[k]`` adds up
``row[0..k]``: a scan done by the matrix unit. Build ``U`` from two iotas, and
ask for ``precision=jax.lax.Precision.HIGHEST`` so a TPU multiplies float32
values at full precision.

N is not a multiple of B. The last block's padding is garbage (NaN in
interpret mode). A true running sum would only carry it into positions past
the end, which are dropped, but a matrix product mixes every input into every
output, and ``0 * NaN`` is NaN. So zero the padding first: an element is real
when its global index ``i * B + position`` is below ``n``.

Task: write the grid, the BlockSpecs and the kernel.
"""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jaxtyping import Array, Float

B = 128  # elements per block


def spec(x: Float[Array, "N"]) -> Float[Array, "N"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return jnp.cumsum(x)


def prefix_sum_kernel(x_ref, z_ref, carry_ref, *, n):
    # x_ref, z_ref: blocks of B elements; carry_ref: one float32 in SMEM; n: the length of x.
    # TODO: set the carry to 0 on the first step; scan this block (padding zeroed) with a
    # triangular matmul; write scan + carry to z_ref; add the block's total to the carry.
    pass


def prefix_sum(x: Float[Array, "N"]) -> Float[Array, "N"]:
    n = x.shape[0]
    return pl.pallas_call(
        functools.partial(prefix_sum_kernel, n=n),
        out_shape=jax.ShapeDtypeStruct((n,), x.dtype),
        # TODO: one step per block of B elements, program i on block i.
        grid=(1,),
        in_specs=[pl.BlockSpec((B,), lambda i: (0,))],
        out_specs=pl.BlockSpec((B,), lambda i: (0,)),
        scratch_shapes=[pltpu.SMEM((1,), jnp.float32)],
        # Given: the carry scratch, and the grid axis declared sequential.
        compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),
    )(x)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
