"""Puzzle 7: a long row, summed in chunks with a loop.

So far every block was small enough to handle in one piece. Real rows can be
long, and a kernel often walks them a chunk at a time, carrying a running
result from one chunk to the next. Inside a kernel, a loop is
``jax.lax.fori_loop(lower, upper, body, init)``: ``body(k, carry)`` gets the
step number ``k`` and the running value, and returns the new running value.

A chunk of a ref is read with a dynamic slice: ``x_ref[:, pl.ds(start, B1)]``
is every row of the block, columns ``start .. start + B1 - 1``. ``start``
may depend on ``k``; the length ``B1`` must be a fixed number.

Each program here gets ``B0`` whole rows: its block is ``(B0, T_PAD)``, where
``T_PAD`` is ``T`` rounded up to a multiple of ``B1``, so the row splits into
whole chunks. ``T`` itself is not a multiple of ``B1``: the block hangs over
the right edge of ``x``, and the columns from ``T`` to ``T_PAD - 1`` of the
last chunk are padding. Padding holds garbage (NaN in interpret mode), and
one NaN in a sum makes the whole sum NaN. Mask before you reduce: build the
column number of every element of the chunk with
``jax.lax.broadcasted_iota(jnp.int32, shape, 1)`` plus the chunk's start, and
replace the elements at columns ``>= T`` with 0 using ``jnp.where``.
Rows past ``N0`` in the last block are padding too, but each row's sum
stays in its own row, and writes past the end of ``z`` are dropped: those
rows need no mask.

The launcher is given; it passes the true row length ``t`` to the kernel as
a Python int (``functools.partial``). Task: write the kernel so that
``z[r] = sum(x[r, :])`` for each of the program's rows, looping over the row
in chunks of ``B1`` columns.
"""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jaxtyping import Array, Float

B0 = 8  # rows per program
B1 = 32  # columns per chunk of the loop


def spec(x: Float[Array, "N0 T"]) -> Float[Array, "N0"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return x.sum(axis=1)


def long_sum_kernel(x_ref, z_ref, *, t):
    # x_ref: a (B0, T_PAD) block, columns >= t are padding; z_ref: B0 row sums.
    n_chunks = x_ref.shape[1] // B1

    # TODO: loop k over the n_chunks chunks with jax.lax.fori_loop, carrying
    # TODO: B0 running totals; read chunk k with pl.ds, zero its columns >= t,
    # TODO: add its row sums; finally write the totals to z_ref.
    pass


def long_sum(x: Float[Array, "N0 T"]) -> Float[Array, "N0"]:
    n0, t = x.shape
    t_pad = pl.cdiv(t, B1) * B1  # whole chunks: the block overhangs the right edge
    return pl.pallas_call(
        functools.partial(long_sum_kernel, t=t),
        out_shape=jax.ShapeDtypeStruct((n0,), x.dtype),
        grid=(pl.cdiv(n0, B0),),
        in_specs=[pl.BlockSpec((B0, t_pad), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((B0,), lambda i: (i,)),
    )(x)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
