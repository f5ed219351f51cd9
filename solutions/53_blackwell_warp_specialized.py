"""Puzzle 53: Blackwell, a warp-specialised pipeline: a TMA warp, an MMA warp, an epilogue warpgroup.

On Blackwell one thread can issue an MMA for the whole tensor core, so the
pipeline of puzzle tcgen05_pipeline splits by role. The block runs two warpgroups
(``num_threads=2``, named ``"wg"``); warpgroup 0 splits into warps with
``plgpu.warp_map``, and each role loops on its own::

    warpgroup 0, warp 0 (TMA):  for ki: wait consumed[s] (from round 2 on) -> copy chunk ki -> loaded[s]
    warpgroup 0, warp 1 (MMA):  for ki: wait loaded[s] -> tcgen05_mma(..., consumed[s], accumulate=ki > 0)
                                then tcgen05_commit_arrive(mma_done)
    warpgroup 1 (epilogue):     wait mma_done -> async_load_tmem -> z

    SMEM  a_smem[S, 128, TK], b_smem[S, TK, 128]   (slot s = ki % S)
    TMEM  acc_tmem (128, 128) f32                   (written by the MMA warp, read by the epilogue)
    registers: only the epilogue's (128, 128) tile

The roles never wait for each other except through barriers, so each barrier
is waited on by exactly one role, once per phase:

- ``loaded[s]``: the TMA warp's two copies arrive; the MMA warp waits;
- ``consumed[s]``: the tensor core arrives when the MMA has read slot ``s``;
  the TMA warp waits before refilling it, except on the first round, when
  the slots are empty (a wait there would wait for a phase nobody completes);
- ``mma_done``: ``tcgen05_commit_arrive`` after the last MMA; the epilogue
  waits, then reads TMEM.

Inside ``warp_map`` the body runs once per warp: ``warp`` is its index, and
``pl.when(warp == 0)`` picks the role.

Task: ``z = a @ b`` for float16 ``a`` (M, K), ``b`` (K, N), in float32; a
block per (128, 128) tile of ``z``, K in chunks of TK = 64 through S = 2 slots.
"""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jaxtyping import Array, Float

TM = 128  # rows of z per block
TN = 128  # columns of z per block
TK = 64  # K per chunk
S = 2  # SMEM slots
SWIZZLE = (plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(128))  # the MMA's SMEM layout for float16


def spec(a: Float[Array, "M K"], b: Float[Array, "K N"]) -> Float[Array, "M N"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return jnp.dot(a.astype(jnp.float32), b.astype(jnp.float32))


def specialized_kernel(a_gmem, b_gmem, z_gmem, a_smem, b_smem, acc_tmem, loaded, consumed, mma_done):
    # a_smem: (S, TM, TK), b_smem: (S, TK, TN); loaded: S barriers of 2 arrivals;
    # consumed: S barriers ordered to the tensor core; mma_done: one, ordered to the tensor core.
    rows = pl.ds(jax.lax.axis_index("m") * TM, TM)
    cols = pl.ds(jax.lax.axis_index("n") * TN, TN)
    steps = a_gmem.shape[1] // TK
    wg = jax.lax.axis_index("wg")

    @pl.when(wg == 0)
    def _():
        @plgpu.warp_map
        def _(warp):
            @pl.when(warp == 0)  # the TMA warp
            def _():
                @pl.loop(0, steps)
                def _(ki):
                    slot = jax.lax.rem(ki, S)

                    @pl.when(ki >= S)
                    def _():
                        plgpu.barrier_wait(consumed.at[slot])

                    chunk = pl.ds(ki * TK, TK)
                    plgpu.copy_gmem_to_smem(a_gmem.at[rows, chunk], a_smem.at[slot], loaded.at[slot])
                    plgpu.copy_gmem_to_smem(b_gmem.at[chunk, cols], b_smem.at[slot], loaded.at[slot])

            @pl.when(warp == 1)  # the MMA warp
            def _():
                @pl.loop(0, steps)
                def _(ki):
                    slot = jax.lax.rem(ki, S)
                    plgpu.barrier_wait(loaded.at[slot])
                    plgpu.tcgen05_mma(acc_tmem, a_smem.at[slot], b_smem.at[slot], consumed.at[slot],
                                      accumulate=ki > 0)

                plgpu.tcgen05_commit_arrive(mma_done)

    @pl.when(wg == 1)  # the epilogue warpgroup
    def _():
        plgpu.barrier_wait(mma_done)
        z_gmem[rows, cols] = plgpu.async_load_tmem(acc_tmem)
        plgpu.wait_load_tmem()


def blackwell_warp_specialized(a: Float[Array, "M K"], b: Float[Array, "K N"]) -> Float[Array, "M N"]:
    m, k = a.shape
    n = b.shape[1]
    return plgpu.kernel(
        specialized_kernel,
        out_type=jax.ShapeDtypeStruct((m, n), jnp.float32),
        grid=(m // TM, n // TN),
        grid_names=("m", "n"),
        num_threads=2,
        thread_name="wg",
        scratch_types=[
            plgpu.SMEM((S, TM, TK), a.dtype, transforms=SWIZZLE),
            plgpu.SMEM((S, TK, TN), b.dtype, transforms=SWIZZLE),
            plgpu.TMEM((TM, TN), jnp.float32),
            plgpu.Barrier(num_arrivals=2, num_barriers=S),
            plgpu.Barrier(orders_tensor_core=True, num_barriers=S),
            plgpu.Barrier(orders_tensor_core=True),
        ],
    )(a, b)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
