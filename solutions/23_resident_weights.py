"""Puzzle 23: keep the weights resident in VMEM.

A layer multiplies many rows of activations ``x`` (shape ``(M, K)``) by one
small weight matrix ``w`` (shape ``(K, N)``). Tiled like puzzle 4, with a grid
over row blocks *and* column blocks, the kernel is correct, but look at what
the pipeline copies: at step ``(i, j)`` it needs column strip ``j`` of ``w``,
and as ``j`` runs fastest, every row block ``i`` fetches all of ``w`` again.
With ``M / BM`` row blocks, ``w`` crosses from HBM ``M / BM`` times.

The pipeline copies an operand's block only when its block index changes from
one grid step to the next. A block whose index never changes is copied once
and then stays in VMEM for the whole grid: it is *resident*. ``w`` is small
(a few hundred KiB at most here, against 16 MiB of VMEM), so give every
program all of it, with an index_map that ignores the program id, and let
each program compute a whole strip of ``BM`` rows of ``z``.

The budget is the minimum traffic (1.0x): ``x`` and ``w`` read once, ``z``
written once. The rows of the last block may hang over the edge of ``x``;
their results land in rows of ``z`` that are dropped.

Task: write the grid, the BlockSpecs and the kernel (one float32 ``jnp.dot``).
"""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jaxtyping import Array, Float

BM = 64  # rows of x and z per block


def spec(x: Float[Array, "M K"], w: Float[Array, "K N"]) -> Float[Array, "M N"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return x @ w


def resident_kernel(x_ref, w_ref, z_ref):
    # x_ref: (BM, K) rows of x; w_ref: all of w, (K, N); z_ref: (BM, N) rows of z.
    z_ref[...] = jnp.dot(x_ref[...], w_ref[...], preferred_element_type=jnp.float32)


def resident_weights(x: Float[Array, "M K"], w: Float[Array, "K N"]) -> Float[Array, "M N"]:
    m, k = x.shape
    n = w.shape[1]
    return pl.pallas_call(
        resident_kernel,
        out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32),
        grid=(pl.cdiv(m, BM),),
        in_specs=[
            pl.BlockSpec((BM, k), lambda i: (i, 0)),  # row block i of x
            pl.BlockSpec((k, n), lambda i: (0, 0)),  # all of w: the same block at every step
        ],
        out_specs=pl.BlockSpec((BM, n), lambda i: (i, 0)),
    )(x, w)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
