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
    i = pl.program_id(0)

    @pl.when(i == 0)
    def _start():
        carry_ref[0] = 0.0

    # This block as a (1, B) row, with the padding past the end of x set to zero.
    position = jax.lax.broadcasted_iota(jnp.int32, (1, B), 1)
    row = jnp.where(i * B + position < n, x_ref[...][None, :], 0.0)
    # upper[j, k] = 1 where j <= k, so (row @ upper)[k] = row[0] + ... + row[k].
    j = jax.lax.broadcasted_iota(jnp.int32, (B, B), 0)
    k = jax.lax.broadcasted_iota(jnp.int32, (B, B), 1)
    upper = jnp.where(j <= k, 1.0, 0.0)
    scan = jnp.dot(
        row, upper, precision=jax.lax.Precision.HIGHEST, preferred_element_type=jnp.float32
    )
    z_ref[...] = (scan[0] + carry_ref[0]).astype(z_ref.dtype)
    carry_ref[0] += jnp.sum(row)  # the running total through the end of this block


def prefix_sum(x: Float[Array, "N"]) -> Float[Array, "N"]:
    n = x.shape[0]
    return pl.pallas_call(
        functools.partial(prefix_sum_kernel, n=n),
        out_shape=jax.ShapeDtypeStruct((n,), x.dtype),
        grid=(pl.cdiv(n, B),),
        in_specs=[pl.BlockSpec((B,), lambda i: (i,))],
        out_specs=pl.BlockSpec((B,), lambda i: (i,)),
        scratch_shapes=[pltpu.SMEM((1,), jnp.float32)],
        # The carry needs the steps in order: the one grid axis is sequential.
        compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),
    )(x)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
