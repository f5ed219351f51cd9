"""Puzzle 42: Mosaic GPU, warp specialization: a producer and a consumer warpgroup.

In puzzle 39 one warpgroup both started the copies and computed, so every
step paid for issuing copies and waiting in between. Hopper kernels split
the work instead: ``plgpu.kernel(..., num_threads=2, thread_name="wg")``
runs the body on two warpgroups of one block, which share its SMEM and
barriers; ``jax.lax.axis_index("wg")`` tells them apart, and
``@pl.when(wg == 0)`` gives each its own code.

- The *producer* (warpgroup 0) only copies: chunk ``i`` into slot
  ``i % 2``, arriving on that slot's ``full`` barrier.
- The *consumer* (warpgroup 1) only computes: it waits on ``full`` for a
  chunk, uses it, and then *releases* the slot: ``plgpu.commit_smem()``
  (its reads are done, as the TMA sees them) and
  ``plgpu.barrier_arrive(empty.at[slot])``.
- Before refilling a slot (from chunk 2 on), the producer waits on that
  slot's ``empty`` barrier, so it never overwrites a chunk the consumer is
  still reading.

Two barrier arrays, ``full`` and ``empty``, each ``plgpu.Barrier(
num_arrivals=1, num_barriers=2)``. Each phase of ``full[s]`` is one copy;
each phase of ``empty[s]`` is one release. Every wait must be matched by
exactly one arrival in its phase, or a warpgroup waits for ever (the
checker stops such a kernel within a second and says which wait hangs).

Task: puzzle 39's fold (``z = x[0:16] + x[16:32] + ...``, shape
``(CH, C)``) with a producer and a consumer. The consumer keeps the sum in
registers and, after the last chunk, copies ``z`` out.
"""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jaxtyping import Array, Float

CH = 16  # rows per chunk


def spec(x: Float[Array, "R C"]) -> Float[Array, "CH C"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    r, c = x.shape
    return jnp.sum(x.reshape(r // CH, CH, c), axis=0)


def specialized_kernel(x_gmem, z_gmem, bufs, z_smem, full, empty):
    # x_gmem: (R, C); z_gmem: (CH, C); bufs: (2, CH, C) SMEM slots; z_smem: (CH, C); full, empty: two barriers each.
    n = x_gmem.shape[0] // CH
    wg = jax.lax.axis_index("wg")

    @pl.when(wg == 0)
    def _producer():
        def produce(i, carry):
            slot = i % 2

            @pl.when(i >= 2)
            def _wait_for_room():
                plgpu.barrier_wait(empty.at[slot])

            plgpu.copy_gmem_to_smem(x_gmem.at[pl.ds(i * CH, CH)], bufs.at[slot], full.at[slot])
            return carry

        jax.lax.fori_loop(0, n, produce, 0)

    @pl.when(wg == 1)
    def _consumer():
        def consume(i, acc):
            slot = i % 2
            plgpu.barrier_wait(full.at[slot])
            acc = acc + bufs[slot]
            plgpu.commit_smem()
            plgpu.barrier_arrive(empty.at[slot])
            return acc

        acc = jax.lax.fori_loop(0, n, consume, jnp.zeros(z_smem.shape, jnp.float32))
        z_smem[...] = acc
        plgpu.commit_smem()
        plgpu.copy_smem_to_gmem(z_smem, z_gmem)
        plgpu.wait_smem_to_gmem(0)


def warp_specialized(x: Float[Array, "R C"]) -> Float[Array, "CH C"]:
    c = x.shape[1]
    return plgpu.kernel(
        specialized_kernel,
        out_type=jax.ShapeDtypeStruct((CH, c), x.dtype),
        num_threads=2,
        thread_name="wg",
        scratch_types=[
            plgpu.SMEM((2, CH, c), x.dtype),
            plgpu.SMEM((CH, c), x.dtype),
            plgpu.Barrier(num_arrivals=1, num_barriers=2),
            plgpu.Barrier(num_arrivals=1, num_barriers=2),
        ],
    )(x)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
