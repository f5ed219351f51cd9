"""Puzzle 17: flash attention, forward pass, in two dimensions.

Attention for queries ``q[T, D]``, keys ``k[S, D]`` and values ``v[S, D]`` is
``softmax(q @ k.T / sqrt(D)) @ v``: every query row takes a weighted average
of the value rows, weighted by a softmax over its scores. Done naively it
builds the whole ``[T, S]`` score matrix. Flash attention never does: each
program owns a block of BQ queries, walks over the keys and values BK rows
at a time, and keeps three running quantities per query row, in float32:

* ``m``: the largest score seen so far (for a numerically safe exp),
* ``l``: the sum of ``exp(score - m)`` so far (the softmax denominator),
* ``acc``: the sum of ``exp(score - m) * v_row`` so far (the numerator).

When a new block of scores raises the running max from ``m`` to ``m_new``,
everything summed so far was scaled by ``exp(-m)`` and must now be scaled by
``exp(-m_new)``: multiply BOTH ``l`` and ``acc`` by ``alpha = exp(m - m_new)``
before adding the new block. At the end the answer is ``acc / l``. This is
puzzle 9's online softmax with matrices: the scores of a block are one
``jnp.dot`` and the weighted values are another. Pass
``preferred_element_type=jnp.float32`` to both so they accumulate in f32.

The launcher gives each program its block of queries with a BlockSpec, and
gives every program all of k and v (a block as large as the array, index
(0, 0)); the kernel slices them with ``k_ref[pl.ds(start, BK), :]`` inside a
``jax.lax.fori_loop``. S need not be a multiple of BK, so the launcher pads
k and v with zero rows up to one. A zero key row still scores 0, not
nothing: set the scores of padded keys (column >= S) to ``-inf`` so that
their softmax weight is exactly 0. T need not be a multiple of BQ either;
the padded query rows of the last block produce garbage that is never
written back.

Task: write the grid, the query and output BlockSpecs, and the kernel.
"""

import functools
import math

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jaxtyping import Array, Float

BQ = 32  # queries per program
BK = 32  # keys (and values) per step of the loop


def spec(q: Float[Array, "T D"], k: Float[Array, "S D"], v: Float[Array, "S D"]) -> Float[Array, "T D"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    scores = q @ k.T / math.sqrt(q.shape[1])
    return jax.nn.softmax(scores, axis=1) @ v


def flash_attention_kernel(q_ref, k_ref, v_ref, o_ref, *, seq_len):
    # q_ref: (BQ, D) block of queries. k_ref, v_ref: all keys and values,
    # padded to a multiple of BK rows; only the first seq_len rows are real.
    bq, d = q_ref.shape
    q = q_ref[...] * (1.0 / math.sqrt(d))

    def step(j, carry):
        m, l, acc = carry
        start = j * BK
        k = k_ref[pl.ds(start, BK), :]
        v = v_ref[pl.ds(start, BK), :]
        s = jnp.dot(q, k.T, preferred_element_type=jnp.float32)  # (BQ, BK) scores
        col = start + jax.lax.broadcasted_iota(jnp.int32, s.shape, 1)
        s = jnp.where(col < seq_len, s, -jnp.inf)  # padded keys get no weight
        m_new = jnp.maximum(m, s.max(axis=1, keepdims=True))
        alpha = jnp.exp(m - m_new)  # rescales what was summed under the old max
        p = jnp.exp(s - m_new)
        l = alpha * l + p.sum(axis=1, keepdims=True)
        acc = alpha * acc + jnp.dot(p, v, preferred_element_type=jnp.float32)
        return m_new, l, acc

    m = jnp.full((bq, 1), -jnp.inf, jnp.float32)  # running max per query row
    l = jnp.zeros((bq, 1), jnp.float32)  # running softmax denominator
    acc = jnp.zeros((bq, d), jnp.float32)  # running weighted sum of values
    m, l, acc = jax.lax.fori_loop(0, k_ref.shape[0] // BK, step, (m, l, acc))
    o_ref[...] = (acc / l).astype(o_ref.dtype)


def flash_attention(q: Float[Array, "T D"], k: Float[Array, "S D"], v: Float[Array, "S D"]) -> Float[Array, "T D"]:
    t, d = q.shape
    s = k.shape[0]
    s_padded = pl.cdiv(s, BK) * BK
    k = jnp.pad(k, ((0, s_padded - s), (0, 0)))
    v = jnp.pad(v, ((0, s_padded - s), (0, 0)))
    return pl.pallas_call(
        functools.partial(flash_attention_kernel, seq_len=s),
        out_shape=jax.ShapeDtypeStruct((t, d), q.dtype),
        grid=(pl.cdiv(t, BQ),),
        in_specs=[
            pl.BlockSpec((BQ, d), lambda i: (i, 0)),
            pl.BlockSpec((s_padded, d), lambda i: (0, 0)),  # all of k, for every program
            pl.BlockSpec((s_padded, d), lambda i: (0, 0)),  # all of v, for every program
        ],
        out_specs=pl.BlockSpec((BQ, d), lambda i: (i, 0)),
    )(q, k, v)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
