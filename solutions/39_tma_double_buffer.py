"""Puzzle 39: Mosaic GPU, a double-buffered copy loop: two slots, two barriers.

Puzzle 37 waited for its copy straight after starting it, so the warpgroup
sat idle while the data moved. The point of an asynchronous copy is to work
meanwhile: with two SMEM *slots*, the TMA fills one with the next chunk while
the warpgroup computes on the other.

For chunks ``0, 1, ..., n-1`` (chunk ``i`` lives in slot ``i % 2``), step
``i`` of the loop does, in this order:

1. start the copy of chunk ``i + 1`` into the *other* slot, if there is a
   chunk ``i + 1`` (chunk 0's copy is started before the loop);
2. wait for chunk ``i``'s copy;
3. compute on chunk ``i``, and end with ``plgpu.commit_smem()``: the reads
   of this slot must be finished, as the TMA sees it, before step ``i + 1``
   starts a copy into it.

Each slot has its own barrier: ``plgpu.Barrier(num_arrivals=1,
num_barriers=2)`` is an array of two, and ``barriers.at[slot]`` picks one.
A barrier counts *phases*: it completes one each time it has had its
``num_arrivals`` arrivals, and ``barrier_wait`` waits for the next phase
this warpgroup has not yet seen. So a slot's barrier must see one copy and
one wait per chunk, in turn. The buffer is one scratch of shape ``(2, CH,
C)``: ``bufs.at[slot]`` is a slot as a ref (a copy's destination),
``bufs[slot]`` loads its value.

``jax.lax.fori_loop(0, n, step, acc)`` runs the steps and carries a value
(here the running sum, kept in registers); ``pl.when(cond)`` skips the copy
on the last step.

Task: fold the chunks of ``CH = 16`` rows of ``x`` (shape ``(R, C)``, R a
multiple of 16) onto one: ``z = x[0:16] + x[16:32] + ...``, shape ``(CH, C)``.
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


def double_buffer_kernel(x_gmem, z_gmem, bufs, z_smem, barriers):
    # x_gmem: (R, C) in GMEM. z_gmem: (CH, C). bufs: (2, CH, C) SMEM slots. z_smem: (CH, C). barriers: two.
    n = x_gmem.shape[0] // CH

    def fetch(i, slot):
        plgpu.copy_gmem_to_smem(x_gmem.at[pl.ds(i * CH, CH)], bufs.at[slot], barriers.at[slot])

    fetch(0, 0)

    def step(i, acc):
        slot = i % 2

        @pl.when(i + 1 < n)
        def _fetch_next():
            fetch(i + 1, 1 - slot)

        plgpu.barrier_wait(barriers.at[slot])
        acc = acc + bufs[slot]
        plgpu.commit_smem()
        return acc

    acc = jax.lax.fori_loop(0, n, step, jnp.zeros(z_smem.shape, jnp.float32))
    z_smem[...] = acc
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(z_smem, z_gmem)
    plgpu.wait_smem_to_gmem(0)


def tma_double_buffer(x: Float[Array, "R C"]) -> Float[Array, "CH C"]:
    c = x.shape[1]
    return plgpu.kernel(
        double_buffer_kernel,
        out_type=jax.ShapeDtypeStruct((CH, c), x.dtype),
        scratch_types=[
            plgpu.SMEM((2, CH, c), x.dtype),
            plgpu.SMEM((CH, c), x.dtype),
            plgpu.Barrier(num_arrivals=1, num_barriers=2),
        ],
    )(x)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
