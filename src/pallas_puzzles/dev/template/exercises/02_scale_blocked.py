"""Puzzle 2: scale a vector, block by block.

A long vector does not fit in one block. ``pallas_call`` runs the kernel once
for every point of a *grid*, and a ``pl.BlockSpec(block_shape, index_map)``
tells each program which block of an array it sees: ``index_map`` maps the
program's grid indices to a block number (not an element offset).

The length N is not always a multiple of the block size B, so the last block
hangs over the end of the vector. The kernel still gets a whole block: what
it reads past the end is garbage, and what it writes there is dropped.

Task: ``z = 3 * x`` for any N, in blocks of B elements. Fill in the kernel,
the grid and the two index_maps.
"""

import jax
from jax.experimental import pallas as pl

B = 128  # elements per block


def spec(x: jax.Array) -> jax.Array:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return 3.0 * x


def scale_kernel(x_ref, z_ref):
    # TODO: the same body as in puzzle 1: it sees one block of x and of z.
    pass


def scale_blocked(x: jax.Array) -> jax.Array:
    return pl.pallas_call(
        scale_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        # TODO: one program per block of B elements of x.shape[0], the partial last block included.
        grid=(1,),
        # TODO: program i sees block i of x and of z.
        in_specs=[pl.BlockSpec((B,), lambda i: (0,))],
        out_specs=pl.BlockSpec((B,), lambda i: (0,)),
    )(x)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
