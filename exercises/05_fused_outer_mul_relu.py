"""Puzzle 5: fuse two operations into one kernel.

Written as two jnp lines, ``p = x[None, :] * y[:, None]`` followed by
``jnp.maximum(p, 0)`` builds the whole ``(N1, N0)`` product in memory, then
reads it back to apply the ReLU. A kernel can do both steps on the block it
already holds: the product lives only in registers and only the final answer
is written out. That is *fusion*, and it is most of the reason to write a
custom kernel: moving data costs more than the arithmetic.

The grid and BlockSpecs are the ones you wrote in puzzle 4 and are given.
The inputs lie in [-0.5, 0.5), so about half of the products are negative
and must come out as zero.

Task: write ``fused_outer_mul_relu_kernel`` so that
``z[j, i] = relu(x[i] * y[j])`` for every element of the program's block.
"""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jaxtyping import Array, Float

B0 = 128  # block length along x (the columns of z)
B1 = 128  # block length along y (the rows of z)


def spec(x: Float[Array, "N0"], y: Float[Array, "N1"]) -> Float[Array, "N1 N0"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return jnp.maximum(x[None, :] * y[:, None], 0.0)


def fused_outer_mul_relu_kernel(x_ref, y_ref, z_ref):
    # x_ref: B0 values of x, y_ref: B1 values of y, z_ref: a (B1, B0) block of z.
    # TODO: multiply as an outer product (rows follow y, columns follow x),
    # TODO: apply the ReLU, and write the result to z_ref in the same kernel.
    pass


def fused_outer_mul_relu(x: Float[Array, "N0"], y: Float[Array, "N1"]) -> Float[Array, "N1 N0"]:
    n0, n1 = x.shape[0], y.shape[0]
    return pl.pallas_call(
        fused_outer_mul_relu_kernel,
        out_shape=jax.ShapeDtypeStruct((n1, n0), x.dtype),
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
