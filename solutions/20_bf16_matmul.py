"""Puzzle 20: a bfloat16 matmul that accumulates in float32.

bfloat16 (bf16) keeps float32's 8-bit exponent but only 8 bits of mantissa:
about 2 to 3 significant decimal digits. Matrix units on TPUs and GPUs take
bf16 operands at full speed, and models store weights and activations in
bf16 to halve memory traffic. The catch is the sum: adding hundreds of
products in bf16 loses most of the digits. The rule is "bf16 in, f32
accumulate": ``jnp.dot(a, b, preferred_element_type=jnp.float32)`` multiplies
bf16 blocks and returns the sum in float32. The product of two bf16 values
fits exactly in float32, so the only rounding left is float32's own.

Without ``preferred_element_type``, ``jnp.dot`` of two bf16 arrays returns
bf16: the result is rounded to 8 bits of mantissa and a later
``.astype(jnp.float32)`` cannot bring the lost digits back on a TPU or GPU.
(The CPU checker may not notice that one: XLA on CPU is free to fuse the cast
into the dot. Write ``preferred_element_type`` anyway.) Likewise, the output
array must be declared float32 in ``out_shape``; ``x.dtype`` would be bf16.

Each program computes one ``(BM, BN)`` block of ``z = x @ y``, reading a
``(BM, K)`` strip of x and a ``(K, BN)`` strip of y (K is small enough to
take whole). M and N are not multiples of the blocks: the overhanging rows
and columns compute garbage that is never written back.

Task: write the grid, the BlockSpecs, the output dtype and the kernel.
"""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jaxtyping import Array, BFloat16, Float

BM = 16  # rows of z per program (bf16 packs 16 rows per TPU tile)
BN = 128  # columns of z per program (one TPU lane width)


def spec(x: BFloat16[Array, "M K"], y: BFloat16[Array, "K N"]) -> Float[Array, "M N"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return x.astype(jnp.float32) @ y.astype(jnp.float32)


def bf16_matmul_kernel(x_ref, y_ref, z_ref):
    # x_ref: (BM, K) bf16, y_ref: (K, BN) bf16, z_ref: (BM, BN) float32.
    z_ref[...] = jnp.dot(x_ref[...], y_ref[...], preferred_element_type=jnp.float32)


def bf16_matmul(x: BFloat16[Array, "M K"], y: BFloat16[Array, "K N"]) -> Float[Array, "M N"]:
    m, k = x.shape
    n = y.shape[1]
    return pl.pallas_call(
        bf16_matmul_kernel,
        out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32),
        grid=(pl.cdiv(m, BM), pl.cdiv(n, BN)),
        in_specs=[
            pl.BlockSpec((BM, k), lambda i, j: (i, 0)),
            pl.BlockSpec((k, BN), lambda i, j: (0, j)),
        ],
        out_specs=pl.BlockSpec((BM, BN), lambda i, j: (i, j)),
    )(x, y)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
