"""Puzzle 41: Mosaic GPU, a pipelined K loop with ``plgpu.emit_pipeline``.

Puzzle 40 brought the whole K extent of its tiles into SMEM at once, which
fits only for small K. A real matmul walks K in steps of ``TK``: step ``k``
multiplies the ``(TM, TK)`` tile of ``a`` by the ``(TK, TN)`` tile of ``b``
into the same accumulator. Written by hand that is puzzle 39's double
buffering; ``plgpu.emit_pipeline`` writes it for you:

    plgpu.emit_pipeline(
        body, grid=(k_steps,),
        in_specs=[plgpu.BlockSpec((TM, TK), lambda k: (i, k), ...), ...],
        max_concurrent_steps=2,
    )(a_gmem, b_gmem)

It allocates ``max_concurrent_steps`` SMEM slots per input, starts the
copies ahead, waits on their barriers, and calls ``body(indices, a_smem,
b_smem)`` once per step with the slots holding that step's tiles. An
index_map returns *block* indices: ``(i, k)`` is the tile at rows ``i * TM``
and columns ``k * TK``.

The accumulator must outlive the loop, so ``pl.run_scoped`` wraps the whole
pipeline, and the body adds into it with ``plgpu.wgmma``.

One subtlety makes the loop fast: ``plgpu.wgmma_wait(1)`` at the end of the
body lets this step's wgmma run on while the next step starts (only the
previous one must be finished). But emit_pipeline refills a slot as soon as
the body that used it returns, and a wgmma still running reads that slot.
``delay_release=1`` on the input BlockSpecs makes the pipeline keep each
slot one step longer (``max_concurrent_steps`` must exceed it). After the
pipeline, ``wgmma_wait(0)`` waits for the last wgmma.

Task: ``z = a @ b`` as in puzzle 40, with the K loop pipelined in steps of
``TK = 64``.
"""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jaxtyping import Array, Float

TM = 64  # rows of z per block
TN = 64  # columns of z per block
TK = 64  # K per pipeline step
SWIZZLE = (plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(128))  # wgmma's layout for float16


def spec(a: Float[Array, "M K"], b: Float[Array, "K N"]) -> Float[Array, "M N"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return jnp.dot(a.astype(jnp.float32), b.astype(jnp.float32))


def pipeline_kernel(a_gmem, b_gmem, z_gmem, z_smem):
    # a_gmem: (M, K), b_gmem: (K, N) float16 in GMEM; z_gmem: (M, N) float32; z_smem: (TM, TN).
    i = jax.lax.axis_index("m")
    j = jax.lax.axis_index("n")
    k_steps = a_gmem.shape[1] // TK

    def tiles(acc_ref):
        def step(indices, a_smem, b_smem):
            plgpu.wgmma(acc_ref, a_smem, b_smem)
            plgpu.wgmma_wait(1)

        plgpu.emit_pipeline(
            step,
            grid=(k_steps,),
            in_specs=[
                plgpu.BlockSpec((TM, TK), lambda k: (i, k), transforms=SWIZZLE, delay_release=1),
                plgpu.BlockSpec((TK, TN), lambda k: (k, j), transforms=SWIZZLE, delay_release=1),
            ],
            max_concurrent_steps=2,
        )(a_gmem, b_gmem)
        plgpu.wgmma_wait(0)
        return acc_ref[...]

    z_smem[...] = pl.run_scoped(tiles, plgpu.ACC((TM, TN), jnp.float32))
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(z_smem, z_gmem.at[pl.ds(i * TM, TM), pl.ds(j * TN, TN)])
    plgpu.wait_smem_to_gmem(0)


def pipeline_matmul(a: Float[Array, "M K"], b: Float[Array, "K N"]) -> Float[Array, "M N"]:
    m = a.shape[0]
    n = b.shape[1]
    return plgpu.kernel(
        pipeline_kernel,
        out_type=jax.ShapeDtypeStruct((m, n), jnp.float32),
        grid=(m // TM, n // TN),
        grid_names=("m", "n"),
        scratch_types=[plgpu.SMEM((TM, TN), jnp.float32)],
    )(a, b)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
