"""Puzzle 6: the backward pass of a fused kernel.

Training needs gradients. The forward pass here is
``z = relu(x * y[:, None])``: ``x`` is a matrix of shape ``(N1, N0)`` and
``y`` a vector of length ``N1``, so row ``j`` of ``x`` is scaled by ``y[j]``.
Given ``dz`` (the gradient of the loss with respect to ``z``, same shape as
``z``), the gradient with respect to ``x`` is, element by element,

    dx[j, i] = (x[j, i] * y[j] > 0) * y[j] * dz[j, i]

The chain rule gives two factors: ``y[j]`` from the multiplication, and the
ReLU's slope, which is 1 where the forward product was positive and 0
elsewhere. So a backward kernel recomputes the forward product from its
inputs (cheap) instead of storing ``z`` (costly), and fuses the mask and both
products into one pass over memory.

Index order: ``x``, ``dz`` and ``dx`` are indexed ``[j, i]`` (row ``j``,
column ``i``); ``y`` is indexed by the ROW ``j``. This time ``y`` is not the
vector along the columns, as ``x`` was in puzzles 3 to 5.

The grid and the output BlockSpec are given. Task: write the three input
BlockSpecs (two matrices and one vector that follows the rows) and the
kernel. Sizes are not multiples of the blocks.
"""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jaxtyping import Array, Float

B0 = 128  # block length along the columns (index i)
B1 = 128  # block length along the rows (index j)


def spec(
    x: Float[Array, "N1 N0"], y: Float[Array, "N1"], dz: Float[Array, "N1 N0"]
) -> Float[Array, "N1 N0"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    yc = y[:, None]  # y as a column: one value per row
    return jnp.where(x * yc > 0, yc * dz, 0.0)


def fused_outer_mul_relu_backward_kernel(x_ref, y_ref, dz_ref, dx_ref):
    # x_ref, dz_ref, dx_ref: (B1, B0) blocks; y_ref: the B1 values of y for these rows.
    y = y_ref[...][:, None]  # a column, so it lines up with the rows of the block
    x = x_ref[...]
    dx_ref[...] = jnp.where(x * y > 0, y * dz_ref[...], 0.0)


def fused_outer_mul_relu_backward(
    x: Float[Array, "N1 N0"], y: Float[Array, "N1"], dz: Float[Array, "N1 N0"]
) -> Float[Array, "N1 N0"]:
    n1, n0 = x.shape
    return pl.pallas_call(
        fused_outer_mul_relu_backward_kernel,
        out_shape=jax.ShapeDtypeStruct((n1, n0), x.dtype),
        # Grid axis 0 walks blocks of rows, axis 1 blocks of columns.
        grid=(pl.cdiv(n1, B1), pl.cdiv(n0, B0)),
        in_specs=[
            pl.BlockSpec((B1, B0), lambda i, j: (i, j)),  # x
            pl.BlockSpec((B1,), lambda i, j: (i,)),  # y follows the rows only
            pl.BlockSpec((B1, B0), lambda i, j: (i, j)),  # dz
        ],
        out_specs=pl.BlockSpec((B1, B0), lambda i, j: (i, j)),
    )(x, y, dz)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
