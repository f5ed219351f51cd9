"""Puzzle 8: a long softmax in two passes, with an online maximum.

A row softmax is ``exp(x - m) / s``, where ``m`` is the row's maximum
(subtracted so that ``exp`` cannot overflow) and ``s = sum(exp(x - m))``.
Done naively over chunks that takes three passes: one for ``m``, one for
``s``, one to write the output. The *online* trick finds ``m`` and ``s`` in
one pass. Keep a running maximum ``m`` and a running sum ``s`` that is
measured against it. When a chunk brings a larger maximum ``m_new``, every
term already in ``s`` was computed against the old ``m``, and
``exp(v - m) = exp(v - m_new) * exp(m_new - m)``, so multiplying ``s`` by
``exp(m - m_new)`` moves it onto the new maximum; then add the chunk's own
terms ``exp(x - m_new)``. A second pass writes ``exp(x - m) / s``.

Hardware computes ``2**v`` faster than ``e**v``. Since
``exp(v) = exp2(v * log2(e))``, use ``jnp.exp2`` with the constant
``LOG2_E`` below.

The blocks are puzzle 7's: each program owns ``B0`` whole rows in a
``(B0, T_PAD)`` block that overhangs the right edge, and walks it in chunks
of ``B1`` columns with ``pl.ds``. The padding is NaN. This time mask it with
``-inf``, not 0: ``-inf`` never wins a maximum, and ``exp2(-inf) = 0`` adds
nothing to a sum, whereas 0 could be larger than every real element of a row.
Writes to the padding columns of the output block are dropped, so the second
pass may write whole chunks.

Task: write the kernel: pass 1 finds the running maximum and rescaled running
sum for each row, pass 2 writes the normalised values.
"""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jaxtyping import Array, Float

B0 = 8  # rows per program
B1 = 32  # columns per chunk of the loop
LOG2_E = 1.4426950408889634  # log2(e): exp(v) == exp2(v * LOG2_E)


def spec(x: Float[Array, "N0 T"]) -> Float[Array, "N0 T"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    e = jnp.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def long_softmax_kernel(x_ref, z_ref, *, t):
    # x_ref, z_ref: (B0, T_PAD) blocks; columns >= t are padding.
    n_chunks = x_ref.shape[1] // B1

    def masked_chunk(k):
        start = k * B1
        col = start + jax.lax.broadcasted_iota(jnp.int32, (B0, B1), 1)
        return jnp.where(col < t, x_ref[:, pl.ds(start, B1)], -jnp.inf)

    # Pass 1: running maximum m and running sum s (measured against m), per row.
    def statistics(k, carry):
        m, s = carry
        chunk = masked_chunk(k)
        m_new = jnp.maximum(m, chunk.max(axis=1))
        s = s * jnp.exp2((m - m_new) * LOG2_E)  # move the old terms onto m_new
        s = s + jnp.exp2((chunk - m_new[:, None]) * LOG2_E).sum(axis=1)
        return m_new, s

    m0 = jnp.full((B0,), -jnp.inf, jnp.float32)
    s0 = jnp.zeros((B0,), jnp.float32)
    m, s = jax.lax.fori_loop(0, n_chunks, statistics, (m0, s0))

    # Pass 2: normalise and write each chunk.
    def write(k, carry):
        start = k * B1
        chunk = x_ref[:, pl.ds(start, B1)]
        z_ref[:, pl.ds(start, B1)] = jnp.exp2((chunk - m[:, None]) * LOG2_E) / s[:, None]
        return carry

    jax.lax.fori_loop(0, n_chunks, write, 0)


def long_softmax(x: Float[Array, "N0 T"]) -> Float[Array, "N0 T"]:
    n0, t = x.shape
    t_pad = pl.cdiv(t, B1) * B1  # whole chunks: the blocks overhang the right edge
    return pl.pallas_call(
        functools.partial(long_softmax_kernel, t=t),
        out_shape=jax.ShapeDtypeStruct((n0, t), x.dtype),
        grid=(pl.cdiv(n0, B0),),
        in_specs=[pl.BlockSpec((B0, t_pad), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((B0, t_pad), lambda i: (i, 0)),
    )(x)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
