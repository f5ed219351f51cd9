"""Puzzle 50: Blackwell, one tcgen05 tile into tensor memory and back.

On Blackwell (sm_100) the tensor core no longer accumulates in registers.
``plgpu.tcgen05_mma`` reads both operands from SMEM and writes its
accumulator into *tensor memory* (TMEM), a 256 KiB scratchpad beside the
tensor core: 128 lanes (rows) by 512 columns of 32 bits. One block::

    GMEM  a (M, K) f16     b (K, N) f16            z (M, N) f32
            | TMA             | TMA                    ^
            v                 v                        | z_gmem[rows, cols] = ...
    SMEM  a_smem (128, K)   b_smem (K, 128)            |
            \\______ tcgen05_mma ______/                |
                       v                               |
    TMEM  acc_tmem (128, 128) f32 --async_load_tmem--> registers (128, 128) f32

Everything on the way is asynchronous, and each step is ordered by a wait:

- the two TMA copies arrive on ``tma_barrier`` (``num_arrivals=2``);
- ``plgpu.tcgen05_mma(acc_tmem, a_smem, b_smem, mma_barrier,
  accumulate=False)`` *issues* ``acc = a @ b`` and returns at once; when the
  tensor core is done it arrives on ``mma_barrier``. A barrier the tensor
  core arrives on is declared ``plgpu.Barrier(orders_tensor_core=True)``.
  ``accumulate=False`` overwrites the accumulator (fresh TMEM holds garbage);
  ``accumulate=True`` adds onto it;
- ``plgpu.async_load_tmem(acc_tmem)`` starts copying TMEM into registers and
  returns the value; ``plgpu.wait_load_tmem()`` waits until the copy has
  finished reading TMEM (before anything may overwrite it).

A TMEM accumulator of float32 ``(128, N)`` takes N of the 512 columns; its
rows are always 128 (or 64).

Task: ``z = a @ b`` for float16 ``a`` (M, K) and ``b`` (K, N), accumulated and
returned in float32. The grid has one block per (128, 128) tile of ``z``; a
block copies its rows of ``a`` and columns of ``b`` (the whole K) into SMEM,
multiplies them with one tcgen05 MMA into TMEM, and stores the tile read back
from TMEM into its tile of ``z``.
"""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jaxtyping import Array, Float

TM = 128  # rows of z per block: a TMEM accumulator has 128 lanes
TN = 128  # columns of z per block: TN of TMEM's 512 columns
SWIZZLE = (plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(128))  # the MMA's SMEM layout for float16


def spec(a: Float[Array, "M K"], b: Float[Array, "K N"]) -> Float[Array, "M N"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return jnp.dot(a.astype(jnp.float32), b.astype(jnp.float32))


def tile_kernel(a_gmem, b_gmem, z_gmem, a_smem, b_smem, acc_tmem, tma_barrier, mma_barrier):
    # a_smem: (TM, K), b_smem: (K, TN) swizzled SMEM; acc_tmem: (TM, TN) float32 TMEM.
    # tma_barrier: num_arrivals=2; mma_barrier: orders_tensor_core=True.
    rows = pl.ds(jax.lax.axis_index("m") * TM, TM)
    cols = pl.ds(jax.lax.axis_index("n") * TN, TN)
    plgpu.copy_gmem_to_smem(a_gmem.at[rows], a_smem, tma_barrier)
    plgpu.copy_gmem_to_smem(b_gmem.at[:, cols], b_smem, tma_barrier)
    plgpu.barrier_wait(tma_barrier)
    plgpu.tcgen05_mma(acc_tmem, a_smem, b_smem, mma_barrier, accumulate=False)
    plgpu.barrier_wait(mma_barrier)
    z_gmem[rows, cols] = plgpu.async_load_tmem(acc_tmem)
    plgpu.wait_load_tmem()


def tcgen05_tile(a: Float[Array, "M K"], b: Float[Array, "K N"]) -> Float[Array, "M N"]:
    m, k = a.shape
    n = b.shape[1]
    return plgpu.kernel(
        tile_kernel,
        out_type=jax.ShapeDtypeStruct((m, n), jnp.float32),
        grid=(m // TM, n // TN),
        grid_names=("m", "n"),
        scratch_types=[
            plgpu.SMEM((TM, k), a.dtype, transforms=SWIZZLE),
            plgpu.SMEM((k, TN), b.dtype, transforms=SWIZZLE),
            plgpu.TMEM((TM, TN), jnp.float32),
            plgpu.Barrier(num_arrivals=2),
            plgpu.Barrier(orders_tensor_core=True),
        ],
    )(a, b)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
