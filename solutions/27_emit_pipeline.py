"""Puzzle 27: an inner pipeline: pltpu.emit_pipeline inside a kernel.

Double-buffering by hand (puzzle 26) is the heart of every TPU kernel, and
Pallas can write it for you *inside* a kernel: ``pltpu.emit_pipeline`` takes
a body, a grid and BlockSpecs, exactly like ``pallas_call``, and emits the
loop that copies blocks between HBM and VMEM slots, overlapping the copy of
the next block with the work on this one. Why not just use ``pallas_call``'s
grid? Because the inner pipeline is code: you can run several one after
another, run one per row of a table, feed it refs you sliced yourself, or
keep state across it, while the outer kernel keeps whole arrays in HBM.

    pltpu.emit_pipeline(body, grid=(n,), in_specs=[...], out_specs=...)(x_hbm, ..., z_hbm)

The refs you pass must be HBM refs (``memory_space=pl.ANY`` in the outer
call); the body gets VMEM blocks, just like a pallas_call kernel. Here the
arrays may be far bigger than VMEM: only a few blocks of BR rows live there
at any time.

Task: ``z = x * y + x`` for ``x`` and ``y`` of shape ``(R, C)``, R a multiple
of ``BR = 8``. The outer launcher is given (everything in HBM, no grid).
Write the kernel: an inner pipeline over row blocks of BR rows.
"""

import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jaxtyping import Array, Float

BR = 8  # rows per block of the inner pipeline


def spec(x: Float[Array, "R C"], y: Float[Array, "R C"]) -> Float[Array, "R C"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return x * y + x


def emit_pipeline_kernel(x_hbm, y_hbm, z_hbm):
    # All three refs are whole arrays in HBM.
    rows, cols = x_hbm.shape

    def block_body(x_ref, y_ref, z_ref):
        # VMEM blocks of shape (BR, cols), fetched and written back by the inner pipeline.
        z_ref[...] = x_ref[...] * y_ref[...] + x_ref[...]

    row_block = pl.BlockSpec((BR, cols), lambda i: (i, 0))
    pltpu.emit_pipeline(
        block_body,
        grid=(rows // BR,),
        in_specs=[row_block, row_block],
        out_specs=row_block,
    )(x_hbm, y_hbm, z_hbm)


def emit_pipeline(x: Float[Array, "R C"], y: Float[Array, "R C"]) -> Float[Array, "R C"]:
    hbm = pl.BlockSpec(memory_space=pl.ANY)
    return pl.pallas_call(
        emit_pipeline_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        in_specs=[hbm, hbm],
        out_specs=hbm,
    )(x, y)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
