"""Puzzle 19: write the kernel for one example, let jax.vmap batch it.

Kernels are usually written for one example: one sequence, one image, one
matrix. To run a batch you do not have to rewrite the kernel or its
BlockSpecs: a function built on ``pl.pallas_call`` is an ordinary JAX
function, so ``jax.vmap`` works on it. vmap adds a new grid axis in front of
yours, one step per example, and gives every BlockSpec a leading batch
dimension that follows that axis. Inside the kernel nothing changes:
``pl.program_id(0)`` is still the position along *your* first grid axis,
and the refs still hold blocks of one example.

So the recipe is: write ``gate_one(x, y)`` for one ``(R, C)`` example (any
R and C, blocks of ``(BR, BC)``, the usual overhanging edge blocks), then
batch it with ``jax.vmap``.

Task: for ``x`` and ``y`` of shape ``(BATCH, R, C)``, compute
``z = x * sigmoid(y)`` elementwise (a gated unit). Write the kernel and the
single-example launcher, then make ``vmap_kernel`` apply it to every
example with ``jax.vmap``.
"""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jaxtyping import Array, Float

BR = 8  # rows per block, within one example
BC = 128  # columns per block, within one example


def spec(x: Float[Array, "BATCH R C"], y: Float[Array, "BATCH R C"]) -> Float[Array, "BATCH R C"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return x * jax.nn.sigmoid(y)


def gate_kernel(x_ref, y_ref, z_ref):
    # One (BR, BC) block of ONE example: no batch dimension in sight.
    z_ref[...] = x_ref[...] * jax.nn.sigmoid(y_ref[...])


def gate_one(x: Float[Array, "R C"], y: Float[Array, "R C"]) -> Float[Array, "R C"]:
    """The kernel launched on a single example."""
    r, c = x.shape
    block = pl.BlockSpec((BR, BC), lambda i, j: (i, j))
    return pl.pallas_call(
        gate_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(pl.cdiv(r, BR), pl.cdiv(c, BC)),
        in_specs=[block, block],
        out_specs=block,
    )(x, y)


def vmap_kernel(x: Float[Array, "BATCH R C"], y: Float[Array, "BATCH R C"]) -> Float[Array, "BATCH R C"]:
    # vmap maps gate_one over axis 0 of both arguments; Pallas turns that
    # into an extra (leading) grid axis over the batch.
    return jax.vmap(gate_one)(x, y)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
