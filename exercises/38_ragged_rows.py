"""Puzzle 38: Mosaic GPU, a grid of blocks over rows that do not fill the last block.

One block of a GPU runs on one streaming multiprocessor (SM) and has its
shared memory; an H100 has more than a hundred SMs. To use them all, launch
a grid: ``plgpu.kernel(..., grid=(n,), grid_names=("rows",))`` runs the body
once per block, all blocks at the same time. In Mosaic GPU the grid's axes
have names, and a block asks for its index with
``jax.lax.axis_index("rows")`` (not ``pl.program_id``, which belongs to
``pl.pallas_call``). Each block brings its own rows in, computes, and copies
its rows out; every block needs its own SMEM buffers and barrier, which
``scratch_types`` gives it.

Slicing a GMEM ref picks the rows a copy moves: ``x_gmem.at[pl.ds(start,
size)]`` is a view of ``size`` rows from ``start``, usable as a copy's
source or destination.

The array need not be a whole number of blocks. The last block's window
runs past the end of ``x``, and the TMA handles that edge by itself: a copy
in fills the rows past the end with zeros, and a copy out writes only the
rows that exist. So ``pl.cdiv(R, BR)`` blocks of ``BR`` rows cover ``R``
rows without any masking in the kernel.

Task: ``z = relu(x) + 1`` for ``x`` of shape ``(R, C)``, in blocks of
``BR = 64`` rows. The launcher is given; write the kernel.
"""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jaxtyping import Array, Float

BR = 64  # rows per block


def spec(x: Float[Array, "R C"]) -> Float[Array, "R C"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return jnp.maximum(x, 0.0) + 1.0


def ragged_rows_kernel(x_gmem, z_gmem, x_smem, z_smem, barrier):
    # x_gmem, z_gmem: (R, C) in GMEM. x_smem, z_smem: (BR, C) SMEM buffers of this block.
    # TODO: this block's rows: a pl.ds window starting at the block's index (jax.lax.axis_index("rows")) times BR.
    # TODO: copy those rows of x in, compute relu(x) + 1 into z_smem, and copy it out into the same rows of z.
    pass


def ragged_rows(x: Float[Array, "R C"]) -> Float[Array, "R C"]:
    r, c = x.shape
    return plgpu.kernel(
        ragged_rows_kernel,
        out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(pl.cdiv(r, BR),),
        grid_names=("rows",),
        scratch_types=[
            plgpu.SMEM((BR, c), x.dtype),
            plgpu.SMEM((BR, c), x.dtype),
            plgpu.Barrier(num_arrivals=1),
        ],
    )(x)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
