# A deliberate learner mistake for the test suite: the per-example grid rounds down, so the ragged end of every example is never written (under vmap the checker reports these elements as NaN, not as unwritten).
EXPECT_KIND = "mismatch-nan"
EXPECT_LINE = ""
"""Puzzle 19: write the kernel for one example, let jax.vmap batch it.

Kernels are usually written for one example: one sequence, one image, one
row. To run a batch you do not have to rewrite the kernel or its BlockSpecs:
a function built on ``pl.pallas_call`` is an ordinary JAX function, so
``jax.vmap`` works on it. vmap adds a new grid axis in front of yours, one
step per example, and gives every BlockSpec a leading batch dimension of
size 1 that follows that axis. Inside the kernel nothing changes:
``pl.program_id(0)`` is still the position along *your* first grid axis, and
the refs still hold blocks of one example.

So the recipe is: write ``gate_one(x, y)`` for vectors of length N (any N,
blocks of B, the usual overhanging last block), check it on one example in
your head, then batch it with ``jax.vmap``.

Task: for ``x`` and ``y`` of shape ``(BATCH, N)``, compute
``z[b, n] = x[b, n] * sigmoid(y[b, n])`` (a gated unit). Write the kernel
and the single-example launcher, then make ``vmap_kernel`` apply it to every
example with ``jax.vmap``.
"""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jaxtyping import Array, Float

B = 32  # elements per block, within one example


def spec(x: Float[Array, "BATCH N"], y: Float[Array, "BATCH N"]) -> Float[Array, "BATCH N"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return x * jax.nn.sigmoid(y)


def gate_kernel(x_ref, y_ref, z_ref):
    # One block of B elements of ONE example: no batch dimension in sight.
    z_ref[...] = x_ref[...] * jax.nn.sigmoid(y_ref[...])


def gate_one(x: Float[Array, "N"], y: Float[Array, "N"]) -> Float[Array, "N"]:
    """The kernel launched on a single example."""
    n = x.shape[0]
    return pl.pallas_call(
        gate_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(n // B,),
        in_specs=[pl.BlockSpec((B,), lambda i: (i,)), pl.BlockSpec((B,), lambda i: (i,))],
        out_specs=pl.BlockSpec((B,), lambda i: (i,)),
    )(x, y)


def vmap_kernel(x: Float[Array, "BATCH N"], y: Float[Array, "BATCH N"]) -> Float[Array, "BATCH N"]:
    # vmap maps gate_one over axis 0 of both arguments; Pallas turns that
    # into an extra (leading) grid axis over the batch.
    return jax.vmap(gate_one)(x, y)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
