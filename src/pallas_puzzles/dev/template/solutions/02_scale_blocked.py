"""Puzzle 2: scale a vector, block by block (reference solution).

``pl.cdiv(n, B)`` rounds up, so the partial last block gets a program too;
program i sees block i of both arrays.
"""

import jax
from jax.experimental import pallas as pl

B = 128  # elements per block


def spec(x: jax.Array) -> jax.Array:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return 3.0 * x


def scale_kernel(x_ref, z_ref):
    z_ref[...] = 3.0 * x_ref[...]


def scale_blocked(x: jax.Array) -> jax.Array:
    n = x.shape[0]
    return pl.pallas_call(
        scale_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(pl.cdiv(n, B),),
        in_specs=[pl.BlockSpec((B,), lambda i: (i,))],
        out_specs=pl.BlockSpec((B,), lambda i: (i,)),
    )(x)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
