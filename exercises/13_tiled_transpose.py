"""Puzzle 13: tiled transpose, where the BlockSpecs move the data.

So far an output block sat at the same grid position as the input blocks it
came from. It does not have to. A BlockSpec's index_map may send a program's
output block anywhere, and that is how Pallas kernels move data around: the
pipeline copies blocks in and out according to the index_maps, and the kernel
only rearranges what is inside one block.

A transpose shows it plainly. Cut ``x`` (shape ``(M, N)``) into blocks of
``BM`` rows by ``BN`` columns. Block ``(i, j)`` of ``x`` becomes, once
transposed, block ``(j, i)`` of ``z = x.T`` (shape ``(N, M)``), and that
block has the swapped shape ``(BN, BM)``. So with a grid over the blocks of
``x``, the input index_map is ``(i, j)`` and the output index_map swaps the
two program ids. Inside the kernel there is nothing left to do but transpose
one block.

M and N are not multiples of the blocks. An overhanging block of ``x`` holds
padding past the edge; after the transpose that padding lands exactly in the
part of the output block that overhangs ``z``, and writes there are dropped.

The blocks are multiples of 128 on both sides because a TPU wants the last
dimension of every block to be a multiple of 128, and here each block size is
the last dimension of one of the two arrays.

Task: write the grid, both BlockSpecs and the kernel so that ``z = x.T``.
"""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jaxtyping import Array, Float

BM = 128  # block length along the rows of x (the columns of z)
BN = 256  # block length along the columns of x (the rows of z)


def spec(x: Float[Array, "M N"]) -> Float[Array, "N M"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return jnp.transpose(x)


def tiled_transpose_kernel(x_ref, z_ref):
    # x_ref is a (BM, BN) block of x; z_ref is the (BN, BM) block of z it belongs in.
    # TODO: fill z_ref with this block of x, transposed.
    pass


def tiled_transpose(x: Float[Array, "M N"]) -> Float[Array, "N M"]:
    m, n = x.shape
    return pl.pallas_call(
        tiled_transpose_kernel,
        out_shape=jax.ShapeDtypeStruct((n, m), x.dtype),
        # TODO: one program per (BM, BN) block of x.
        grid=(1, 1),
        in_specs=[pl.BlockSpec((BM, BN), lambda i, j: (0, 0))],  # TODO: which block of x?
        # TODO: which block of z does program (i, j) fill? (z has the transposed shape.)
        out_specs=pl.BlockSpec((BN, BM), lambda i, j: (0, 0)),
    )(x)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
