"""Puzzle 11: batched matrix multiply, tiled, with a loop over the shared dimension.

``z[b] = x[b] @ y[b]`` for every batch entry ``b``: ``x`` is
``(Nb, N0, MID)``, ``y`` is ``(Nb, MID, N1)`` and ``z`` is ``(Nb, N0, N1)``.
``MID`` is the *shared* (contracted) dimension; it is not N0 and not N1.

Tile the output. A 3-D grid ``(Nb, cdiv(N0, B0), cdiv(N1, B1))`` gives
program ``(b, i, j)`` the ``(B0, B1)`` tile of ``z[b]`` at rows block ``i``,
columns block ``j``. That tile needs ``B0`` whole rows of ``x[b]`` and
``B1`` whole columns of ``y[b]``, so the BlockSpecs give it an ``x`` block of
``(B0, MID_PAD)`` and a ``y`` block of ``(MID_PAD, B1)``, where ``MID_PAD``
is ``MID`` rounded up to a multiple of ``BK``. A ``None`` as the first block
dimension takes one batch entry and drops that dimension in the kernel.

A matmul splits along the shared dimension into a sum of smaller ones:

    x_tile @ y_tile = sum over chunks c of  x_tile[:, chunk c] @ y_tile[chunk c, :]

so the kernel loops over chunks of ``BK`` with ``jax.lax.fori_loop`` and
adds each ``jnp.dot(a, b, preferred_element_type=jnp.float32)`` to a float32
running sum that starts at zeros. (On real hardware this keeps each piece
small enough for fast memory; ``preferred_element_type`` asks for a float32
result even when inputs are narrower.)

``MID`` is not a multiple of ``BK``: the last chunk holds padding (NaN in
interpret mode) in the columns of ``x`` AND the rows of ``y``. Mask both
with 0 before the dot, because ``0 * NaN`` is NaN.

Task: write the grid, the BlockSpecs and the kernel so that
``z = batched_matmul(x, y)``.
"""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jaxtyping import Array, Float

B0 = 32  # rows of z per program
B1 = 32  # columns of z per program
BK = 32  # length of one chunk of the shared dimension MID


def spec(x: Float[Array, "Nb N0 MID"], y: Float[Array, "Nb MID N1"]) -> Float[Array, "Nb N0 N1"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return x @ y


def batched_matmul_kernel(x_ref, y_ref, z_ref, *, mid):
    # x_ref: (B0, MID_PAD) rows of x[b]; y_ref: (MID_PAD, B1) columns of y[b]; z_ref: (B0, B1).
    n_chunks = x_ref.shape[1] // BK

    def add_chunk(c, acc):
        start = c * BK
        x_cols = start + jax.lax.broadcasted_iota(jnp.int32, (B0, BK), 1)
        y_rows = start + jax.lax.broadcasted_iota(jnp.int32, (BK, B1), 0)
        a = jnp.where(x_cols < mid, x_ref[:, pl.ds(start, BK)], 0.0)
        b = jnp.where(y_rows < mid, y_ref[pl.ds(start, BK), :], 0.0)
        return acc + jnp.dot(a, b, preferred_element_type=jnp.float32)

    acc = jax.lax.fori_loop(0, n_chunks, add_chunk, jnp.zeros((B0, B1), jnp.float32))
    z_ref[...] = acc.astype(z_ref.dtype)


def batched_matmul(x: Float[Array, "Nb N0 MID"], y: Float[Array, "Nb MID N1"]) -> Float[Array, "Nb N0 N1"]:
    nb, n0, mid = x.shape
    n1 = y.shape[2]
    mid_pad = pl.cdiv(mid, BK) * BK  # whole chunks: the blocks overhang MID
    return pl.pallas_call(
        functools.partial(batched_matmul_kernel, mid=mid),
        out_shape=jax.ShapeDtypeStruct((nb, n0, n1), x.dtype),
        grid=(nb, pl.cdiv(n0, B0), pl.cdiv(n1, B1)),
        in_specs=[
            pl.BlockSpec((None, B0, mid_pad), lambda b, i, j: (b, i, 0)),
            pl.BlockSpec((None, mid_pad, B1), lambda b, i, j: (b, 0, j)),
        ],
        out_specs=pl.BlockSpec((None, B0, B1), lambda b, i, j: (b, i, j)),
    )(x, y)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
