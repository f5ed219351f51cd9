"""Puzzle 1: scale a vector (reference solution).

A Pallas kernel works on *refs*: windows onto the blocks of its arrays in fast
memory. ``x_ref[...]`` reads the whole block as an array and
``z_ref[...] = value`` writes it. Here one block holds the whole vector.
"""

import jax
from jax.experimental import pallas as pl


def spec(x: jax.Array) -> jax.Array:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return 3.0 * x


def scale_kernel(x_ref, z_ref):
    z_ref[...] = 3.0 * x_ref[...]


def scale(x: jax.Array) -> jax.Array:
    return pl.pallas_call(scale_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
