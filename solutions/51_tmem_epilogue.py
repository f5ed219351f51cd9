"""Puzzle 51: Blackwell, an epilogue fused onto the TMEM readback.

A matmul's *epilogue* is what happens to the accumulator on its way out:
here a bias and a ReLU, ``z = max(a @ b + bias, 0)``. On Blackwell it runs on
the tile read back from TMEM, in registers, and the result leaves through
SMEM and a TMA store. One block owns 128 rows of ``z`` and walks along them,
one (128, 128) tile at a time, reusing one accumulator::

    GMEM  a (M, K)  b (K, N)  bias (N,)                      z (M, N) f32
           | TMA      | TMA     | TMA                          ^ TMA store
           v          v         v                              |
    SMEM  a_smem    b_smem    bias_smem               z_smem (128, 128) f32
           \\_tcgen05_mma_/        \\                      ^
                 v                 \\                     | commit_smem
    TMEM  acc_tmem (128, 128) f32 --async_load_tmem--> registers:
                                        relu(acc + bias[None, :])

Three buffers are reused from one tile to the next, and each reuse needs
its wait, because each step runs asynchronously:

- ``acc_tmem``: the next tile's MMA overwrites it, so the previous
  ``async_load_tmem`` must have finished reading: ``plgpu.wait_load_tmem()``;
- ``z_smem``: the TMA store of the previous tile may still be reading it:
  ``plgpu.wait_smem_to_gmem(0)`` before storing into it again (and at the end);
- ``b_smem``/``bias_smem``: refilled only after the MMA that read them has
  arrived on ``mma_barrier``.

Stores from registers into SMEM must be made visible to the TMA with
``plgpu.commit_smem()`` before ``plgpu.copy_smem_to_gmem``.

Task: ``z = max(a @ b + bias, 0)`` for float16 ``a`` (M, K), ``b`` (K, N) and
float32 ``bias`` (N,), in float32. The grid has one block per 128 rows.
"""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jaxtyping import Array, Float

TM = 128  # rows of z per block (TMEM's 128 lanes)
TN = 128  # columns of z per tile: TN of TMEM's 512 columns
SWIZZLE = (plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(128))  # the MMA's SMEM layout for float16


def spec(a: Float[Array, "M K"], b: Float[Array, "K N"], bias: Float[Array, " N"]) -> Float[Array, "M N"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return jnp.maximum(jnp.dot(a.astype(jnp.float32), b.astype(jnp.float32)) + bias[None, :], 0.0)


def epilogue_kernel(a_gmem, b_gmem, bias_gmem, z_gmem, a_smem, b_smem, bias_smem, z_smem, acc_tmem,
                    a_barrier, tile_barrier, mma_barrier):
    # a_smem: (TM, K), b_smem: (K, TN) swizzled; bias_smem: (TN,); z_smem: (TM, TN); acc_tmem: (TM, TN) f32.
    # a_barrier: 1 arrival; tile_barrier: 2 arrivals (b and bias); mma_barrier: orders_tensor_core=True.
    rows = pl.ds(jax.lax.axis_index("m") * TM, TM)
    plgpu.copy_gmem_to_smem(a_gmem.at[rows], a_smem, a_barrier)
    plgpu.barrier_wait(a_barrier)

    @pl.loop(0, z_gmem.shape[1] // TN)
    def _(j):
        cols = pl.ds(j * TN, TN)
        plgpu.copy_gmem_to_smem(b_gmem.at[:, cols], b_smem, tile_barrier)
        plgpu.copy_gmem_to_smem(bias_gmem.at[cols], bias_smem, tile_barrier)
        plgpu.barrier_wait(tile_barrier)
        plgpu.tcgen05_mma(acc_tmem, a_smem, b_smem, mma_barrier, accumulate=False)
        plgpu.barrier_wait(mma_barrier)
        acc = plgpu.async_load_tmem(acc_tmem)
        plgpu.wait_load_tmem()
        plgpu.wait_smem_to_gmem(0)
        z_smem[...] = jnp.maximum(acc + bias_smem[...][None, :], 0.0)
        plgpu.commit_smem()
        plgpu.copy_smem_to_gmem(z_smem, z_gmem.at[rows, cols])

    plgpu.wait_smem_to_gmem(0)


def tmem_epilogue(a: Float[Array, "M K"], b: Float[Array, "K N"], bias: Float[Array, " N"]) -> Float[Array, "M N"]:
    m, k = a.shape
    n = b.shape[1]
    return plgpu.kernel(
        epilogue_kernel,
        out_type=jax.ShapeDtypeStruct((m, n), jnp.float32),
        grid=(m // TM,),
        grid_names=("m",),
        scratch_types=[
            plgpu.SMEM((TM, k), a.dtype, transforms=SWIZZLE),
            plgpu.SMEM((k, TN), b.dtype, transforms=SWIZZLE),
            plgpu.SMEM((TN,), jnp.float32),
            plgpu.SMEM((TM, TN), jnp.float32),
            plgpu.TMEM((TM, TN), jnp.float32),
            plgpu.Barrier(),
            plgpu.Barrier(num_arrivals=2),
            plgpu.Barrier(orders_tensor_core=True),
        ],
    )(a, b, bias)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
