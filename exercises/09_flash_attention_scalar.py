"""Puzzle 9: scalar flash attention, one pass over the keys.

Attention with scalars: every position ``i`` has a query ``q[i]``, a key
``k[i]`` and a value ``v[i]``. Query ``i`` scores every key with
``s[i, j] = q[i] * k[j]``, turns its row of scores into weights with a
softmax over ``j``, and returns the weighted sum of the values:

    z[i] = sum_j softmax_j(s[i, :]) * v[j]

Written out, that is three passes over the keys: find the row maximum ``m``,
sum ``exp(s - m)`` into a denominator ``l``, then sum ``exp(s - m) * v``.
Flash attention does it in ONE pass with the trick from puzzle 8, carrying
three running values per query through the chunks of keys:

* ``m``   the largest score seen so far (start at -inf),
* ``l``   the sum of ``exp(s - m)`` over the keys seen so far (start at 0),
* ``acc`` the sum of ``exp(s - m) * v`` over the keys seen so far (start at 0).

When a chunk raises the maximum from ``m`` to ``m_new``, every term already
in ``l`` and ``acc`` was computed against the old maximum: multiply both by
``alpha = exp(m - m_new)`` before adding the chunk's terms
``p = exp(s - m_new)``. After the last chunk, ``z = acc / l``.

Each program handles ``B0`` queries and sees all of ``k`` and ``v`` as one
block of ``T_PAD`` elements (``T`` rounded up to a multiple of ``B1``), read a
chunk of ``B1`` keys at a time. ``T`` is not a multiple of ``B1``, so the last
chunk holds padding (NaN in interpret mode): give padded keys a score of -inf
(their weight ``exp(-inf)`` is then 0) and replace padded values with 0, since
``0 * NaN`` is still NaN.

Task: write the kernel. ``flash_attention_scalar(q, k, v)`` takes three
vectors of length ``T`` and returns ``z``, also of length ``T``. The launcher
is given.
"""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jaxtyping import Array, Float

B0 = 128  # queries per program
B1 = 32  # keys per chunk of the loop


def spec(q: Float[Array, "T"], k: Float[Array, "T"], v: Float[Array, "T"]) -> Float[Array, "T"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    s = q[:, None] * k[None, :]
    weights = jax.nn.softmax(s, axis=1)
    return (weights * v[None, :]).sum(axis=1)


def flash_attention_scalar_kernel(q_ref, k_ref, v_ref, z_ref, *, t):
    # q_ref, z_ref: B0 queries and their outputs; k_ref, v_ref: all T_PAD keys and values.
    # TODO: loop over the chunks of B1 keys, carrying the running max, the running
    # denominator and the running weighted sum; mask the padded keys (>= t); rescale
    # the running sums whenever the max grows; finally write the weighted sum / denominator.
    pass


def flash_attention_scalar(q: Float[Array, "T"], k: Float[Array, "T"], v: Float[Array, "T"]) -> Float[Array, "T"]:
    t = q.shape[0]
    t_pad = pl.cdiv(t, B1) * B1  # whole chunks: the k and v blocks overhang the end
    return pl.pallas_call(
        functools.partial(flash_attention_scalar_kernel, t=t),
        out_shape=jax.ShapeDtypeStruct((t,), q.dtype),
        grid=(pl.cdiv(t, B0),),
        in_specs=[
            pl.BlockSpec((B0,), lambda i: (i,)),
            pl.BlockSpec((t_pad,), lambda i: (0,)),
            pl.BlockSpec((t_pad,), lambda i: (0,)),
        ],
        out_specs=pl.BlockSpec((B0,), lambda i: (i,)),
    )(q, k, v)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
