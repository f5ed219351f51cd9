"""Puzzle 52: Blackwell, a pipelined K loop whose SMEM slots the MMA releases.

A long K does not fit in SMEM at once: the block streams it in chunks of TK
through S slots, and the tensor core accumulates chunk after chunk into one
TMEM accumulator. The TMA fills slot ``s`` while the MMA reads the other::

    GMEM   a (M, K): chunk 0 | chunk 1 | chunk 2 | ...     b (K, N) likewise
              | TMA, arrives on loaded[s]
              v
    SMEM   a_smem[S, 128, TK]   b_smem[S, TK, 128]    slot s = ki % S
              | tcgen05_mma(acc, a_smem[s], b_smem[s], consumed[s], accumulate=ki > 0)
              v         (the MMA arrives on consumed[s] when it has read slot s)
    TMEM   acc_tmem (128, 128) f32  --after the last MMA--> registers --> z

Two barriers per slot, one for each direction:

- ``loaded[s]``: the TMA copies into slot ``s`` arrive on it (2 per chunk);
  wait on it before the MMA reads the slot;
- ``consumed[s]``: passed to ``tcgen05_mma``, the tensor core arrives on it
  once it has finished reading slot ``s`` (a barrier ordered to the tensor
  core: ``orders_tensor_core=True``). Wait on it before the TMA refills the
  slot: chunk ``ki + S`` goes where chunk ``ki`` was.

``accumulate=ki > 0``: the first chunk starts the accumulator afresh, the
others add onto it. After the loop, ``plgpu.tcgen05_commit_arrive(mma_done)``
makes ``mma_done`` arrive once every MMA issued so far has finished: wait on
it, then read TMEM back.

Task: ``z = a @ b`` for float16 ``a`` (M, K), ``b`` (K, N), in float32; a
block per (128, 128) tile of ``z``, K streamed in chunks of TK = 64 through
S = 2 slots.
"""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jaxtyping import Array, Float

TM = 128  # rows of z per block
TN = 128  # columns of z per block
TK = 64  # K per chunk: one 128-byte swizzle of float16
S = 2  # SMEM slots
SWIZZLE = (plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(128))  # the MMA's SMEM layout for float16


def spec(a: Float[Array, "M K"], b: Float[Array, "K N"]) -> Float[Array, "M N"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return jnp.dot(a.astype(jnp.float32), b.astype(jnp.float32))


def pipeline_kernel(a_gmem, b_gmem, z_gmem, a_smem, b_smem, acc_tmem, loaded, consumed, mma_done):
    # a_smem: (S, TM, TK), b_smem: (S, TK, TN); loaded: S barriers of 2 arrivals;
    # consumed: S barriers ordered to the tensor core; mma_done: one, ordered to the tensor core.
    rows = pl.ds(jax.lax.axis_index("m") * TM, TM)
    cols = pl.ds(jax.lax.axis_index("n") * TN, TN)
    steps = a_gmem.shape[1] // TK

    def fetch(ki, slot):
        chunk = pl.ds(ki * TK, TK)
        plgpu.copy_gmem_to_smem(a_gmem.at[rows, chunk], a_smem.at[slot], loaded.at[slot])
        plgpu.copy_gmem_to_smem(b_gmem.at[chunk, cols], b_smem.at[slot], loaded.at[slot])

    # TODO: start chunk 0 into slot 0.

    @pl.loop(0, steps)
    def _(ki):
        slot = jax.lax.rem(ki, S)
        # TODO: start chunk ki + 1 (if there is one) into its slot, once the MMA that read that slot
        #       before (chunk ki + 1 - S) has released it.
        # TODO: wait for chunk ki, and issue its MMA into acc_tmem (releasing the slot on consumed[slot]).
        del slot

    # TODO: wait until every MMA has finished, then read acc_tmem back into this block's tile of z.
    del fetch

def tcgen05_pipeline(a: Float[Array, "M K"], b: Float[Array, "K N"]) -> Float[Array, "M N"]:
    m, k = a.shape
    n = b.shape[1]
    return plgpu.kernel(
        pipeline_kernel,
        out_type=jax.ShapeDtypeStruct((m, n), jnp.float32),
        grid=(m // TM, n // TN),
        grid_names=("m", "n"),
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
