"""Puzzle 40: Mosaic GPU, a wgmma matmul tile and its accumulator.

Hopper's tensor cores are driven by ``wgmma``: one warpgroup multiplies an
``(M, K)`` tile by a ``(K, N)`` tile, both read straight from SMEM, and adds
the product into an *accumulator* that lives in the warpgroup's registers.
In Pallas:

- the accumulator is allocated for a scope:
  ``pl.run_scoped(fn, plgpu.ACC((M, N), jnp.float32))`` calls ``fn(acc_ref)``
  with a fresh, zeroed accumulator and returns what ``fn`` returns;
- ``plgpu.wgmma(acc_ref, a_smem, b_smem)`` starts ``acc += a @ b``; it runs
  asynchronously, and ``plgpu.wgmma_wait(0)`` waits until no wgmma is still
  running; after that ``acc_ref[...]`` reads the result.

The hardware fixes the tile shapes: M is a multiple of 64 (64 rows per
warpgroup), N a multiple of 8 up to 256, and K a multiple of what one
*swizzle* holds. wgmma reads its SMEM operands in a tiled, swizzled layout
(it spreads rows over the memory banks so that reads do not conflict): the
launcher gives those buffers ``transforms=(plgpu.TilingTransform((8, 64)),
plgpu.SwizzleTransform(128))``, 128-byte swizzles of 64 float16 values. The
TMA applies the layout while it copies; your code indexes the buffers as
usual.

Two copies can share one barrier: ``plgpu.Barrier(num_arrivals=2)``
completes its phase once both have arrived.

Task: ``z = a @ b`` for float16 ``a`` (M, K) and ``b`` (K, N), accumulated
and returned in float32. The grid has one block per ``(TM, TN)`` tile of
``z``; a block reads its rows of ``a`` and its columns of ``b`` (the whole K)
into SMEM, multiplies them with one wgmma, and copies its tile of ``z``
out through ``z_smem``.
"""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jaxtyping import Array, Float

TM = 64  # rows of z per block
TN = 64  # columns of z per block
SWIZZLE = (plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(128))  # wgmma's layout for float16


def spec(a: Float[Array, "M K"], b: Float[Array, "K N"]) -> Float[Array, "M N"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return jnp.dot(a.astype(jnp.float32), b.astype(jnp.float32))


def wgmma_kernel(a_gmem, b_gmem, z_gmem, a_smem, b_smem, z_smem, barrier):
    # a_gmem: (M, K), b_gmem: (K, N) float16 in GMEM; z_gmem: (M, N) float32.
    # a_smem: (TM, K), b_smem: (K, TN) swizzled SMEM; z_smem: (TM, TN); barrier: num_arrivals=2.
    rows = pl.ds(jax.lax.axis_index("m") * TM, TM)
    cols = pl.ds(jax.lax.axis_index("n") * TN, TN)
    # TODO: copy this block's rows of a and columns of b into a_smem and b_smem (both on `barrier`), then wait.

    def multiply(acc_ref):
        # TODO: one wgmma of a_smem by b_smem into acc_ref, wait for it, and return the accumulator's value.
        return acc_ref[...]

    # TODO: run `multiply` with a (TM, TN) float32 accumulator (pl.run_scoped, plgpu.ACC), store the result
    # into z_smem, and copy it out to this block's tile of z.
    del multiply, rows, cols


def wgmma_matmul(a: Float[Array, "M K"], b: Float[Array, "K N"]) -> Float[Array, "M N"]:
    m, k = a.shape
    n = b.shape[1]
    return plgpu.kernel(
        wgmma_kernel,
        out_type=jax.ShapeDtypeStruct((m, n), jnp.float32),
        grid=(m // TM, n // TN),
        grid_names=("m", "n"),
        scratch_types=[
            plgpu.SMEM((TM, k), a.dtype, transforms=SWIZZLE),
            plgpu.SMEM((k, TN), b.dtype, transforms=SWIZZLE),
            plgpu.SMEM((TM, TN), jnp.float32),
            plgpu.Barrier(num_arrivals=2),
        ],
    )(a, b)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
