"""Puzzle 15: fused layer normalisation.

Layer norm rescales every row of ``x`` (shape ``(R, D)``) to mean 0 and
variance 1, then applies a learned scale and shift per column::

    mean = average of the row
    var  = average of (row - mean) ** 2
    y    = (row - mean) / sqrt(var + eps) * gamma + beta      (eps = 1e-5)

Written as separate jnp operations, XLA may make several trips through
memory: one to compute the means, one for the variances, one for the final
elementwise work. A Pallas kernel *fuses* them: each program loads a block of
whole rows into on-chip memory once, does both reductions and the
elementwise work there, and writes the result once.

Three details matter:

* A block here is ``BR`` rows by *all* ``D`` columns, so every reduction is
  complete inside one program: no loop, no masking along a row. (Using the
  full array size as a block dimension is always allowed, on a TPU too.)
* Compute the statistics in float32 (``.astype(jnp.float32)``). These inputs
  are already float32, but the same kernel on bfloat16 activations would lose
  most of its precision in the sums otherwise. Subtract the mean *before*
  squaring: the shortcut ``mean(x*x) - mean**2`` cancels badly.
* ``gamma`` and ``beta`` have shape ``(D,)``. Every program needs all of
  them, so their BlockSpec is the whole vector with an index_map that
  ignores the program id; in the kernel they broadcast across the rows of
  the block as a ``(1, D)`` row.

R is not a multiple of BR. The last block's padding rows are garbage, but
each row is normalised on its own, so the garbage stays in those rows, and
their writes are dropped.

Task: write the grid, the BlockSpecs and the kernel.
"""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jaxtyping import Array, Float

BR = 16  # rows per block; each block holds whole rows (all D columns)
EPS = 1e-5


def spec(
    x: Float[Array, "R D"], gamma: Float[Array, "D"], beta: Float[Array, "D"]
) -> Float[Array, "R D"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    mean = jnp.mean(x, axis=1, keepdims=True)
    var = jnp.mean((x - mean) ** 2, axis=1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + EPS) * gamma[None, :] + beta[None, :]


def fused_layernorm_kernel(x_ref, gamma_ref, beta_ref, y_ref):
    # x_ref, y_ref: (BR, D) blocks of whole rows; gamma_ref, beta_ref: all D values.
    x = x_ref[...].astype(jnp.float32)
    mean = jnp.mean(x, axis=1, keepdims=True)  # (BR, 1)
    centred = x - mean
    var = jnp.mean(centred * centred, axis=1, keepdims=True)  # (BR, 1)
    normed = centred * jax.lax.rsqrt(var + EPS)
    gamma = gamma_ref[...].astype(jnp.float32)[None, :]  # (1, D)
    beta = beta_ref[...].astype(jnp.float32)[None, :]
    y_ref[...] = (normed * gamma + beta).astype(y_ref.dtype)


def fused_layernorm(
    x: Float[Array, "R D"], gamma: Float[Array, "D"], beta: Float[Array, "D"]
) -> Float[Array, "R D"]:
    r, d = x.shape
    return pl.pallas_call(
        fused_layernorm_kernel,
        out_shape=jax.ShapeDtypeStruct((r, d), x.dtype),
        grid=(pl.cdiv(r, BR),),
        in_specs=[
            pl.BlockSpec((BR, d), lambda i: (i, 0)),  # block i of rows, all columns
            pl.BlockSpec((d,), lambda i: (0,)),  # every program sees all of gamma
            pl.BlockSpec((d,), lambda i: (0,)),  # ... and all of beta
        ],
        out_specs=pl.BlockSpec((BR, d), lambda i: (i, 0)),
    )(x, gamma, beta)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
