"""Puzzle 4: outer add over a 2-D grid of blocks.

A grid can have two axes: ``grid=(g0, g1)`` runs ``g0 * g1`` programs, and
each index_map takes two program ids, ``lambda i, j: ...``. You choose which
grid axis walks over which array dimension; the only rule is that each
BlockSpec's index_map returns one block index per dimension of *its* array,
in that array's dimension order.

The output ``z`` has shape ``(N1, N0)``: rows follow ``y``, columns follow
``x``. Use blocks of ``B1`` rows by ``B0`` columns. Neither N0 nor N1 is a
multiple of its block, so blocks on the bottom and right edges overhang.

Task: write the grid, all three BlockSpecs and the kernel so that
``z[j, i] = x[i] + y[j]``.
"""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jaxtyping import Array, Float

B0 = 128  # block length along x (the columns of z)
B1 = 128  # block length along y (the rows of z)


def spec(x: Float[Array, "N0"], y: Float[Array, "N1"]) -> Float[Array, "N1 N0"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return x[None, :] + y[:, None]


def outer_add_blocked_kernel(x_ref, y_ref, z_ref):
    # z_ref is a (B1, B0) block; x_ref and y_ref hold the matching pieces of x and y.
    z_ref[...] = x_ref[...][None, :] + y_ref[...][:, None]


def outer_add_blocked(x: Float[Array, "N0"], y: Float[Array, "N1"]) -> Float[Array, "N1 N0"]:
    n0, n1 = x.shape[0], y.shape[0]
    return pl.pallas_call(
        outer_add_blocked_kernel,
        out_shape=jax.ShapeDtypeStruct((n1, n0), x.dtype),
        # Grid axis 0 walks the rows of z (blocks of y), axis 1 the columns (blocks of x).
        grid=(pl.cdiv(n1, B1), pl.cdiv(n0, B0)),
        in_specs=[
            pl.BlockSpec((B0,), lambda i, j: (j,)),
            pl.BlockSpec((B1,), lambda i, j: (i,)),
        ],
        out_specs=pl.BlockSpec((B1, B0), lambda i, j: (i, j)),
    )(x, y)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
