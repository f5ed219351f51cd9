"""Puzzle 21: fuse two kernels into one (the efficiency chapter starts here).

From this puzzle on, a correct kernel is not enough: each puzzle also has a
*budget*, checked with the performance card's model of a TPU. The card counts
every block the pipeline copies between HBM (the large, slow memory) and
VMEM (the small on-chip memory the kernel computes in), and compares it with
the minimum: every input element read once, every output element written once.

The task computes two steps::

    y = x * g          (scale every column j of x by g[j])
    z = y - mean(y)    (centre every row of y)

Written as two ``pallas_call``s, one per step, it is correct but it makes a
round trip: the first call writes ``y`` to HBM and the second reads it back,
so the data crosses the memory bus twice as often as it needs to::

    y = pl.pallas_call(scale_kernel, ...)(x, g)
    z = pl.pallas_call(centre_kernel, ...)(y)

A fused kernel keeps ``y`` in VMEM: each program loads a block of whole rows
of ``x`` once, scales it, centres each row and writes the result once. The
budget for this puzzle is exactly the minimum traffic (1.0x).

Task: write the fused kernel; the launcher is given. ``g`` is the whole
vector in every program; its block index never changes, so the pipeline
copies it only once.
"""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jaxtyping import Array, Float

BR = 16  # rows per block; each block holds whole rows


def spec(x: Float[Array, "R D"], g: Float[Array, "D"]) -> Float[Array, "R D"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    y = x * g[None, :]
    return y - jnp.mean(y, axis=1, keepdims=True)


def fused_kernel(x_ref, g_ref, z_ref):
    # x_ref, z_ref: (BR, D) blocks of whole rows; g_ref: all D values.
    # TODO: scale the block by g, centre each row, and write the result to z_ref.
    pass


def fuse_two_calls(x: Float[Array, "R D"], g: Float[Array, "D"]) -> Float[Array, "R D"]:
    r, d = x.shape
    return pl.pallas_call(
        fused_kernel,
        out_shape=jax.ShapeDtypeStruct((r, d), x.dtype),
        grid=(pl.cdiv(r, BR),),
        in_specs=[
            pl.BlockSpec((BR, d), lambda i: (i, 0)),  # block i of rows, all columns
            pl.BlockSpec((d,), lambda i: (0,)),  # all of g, fetched once
        ],
        out_specs=pl.BlockSpec((BR, d), lambda i: (i, 0)),
    )(x, g)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
