"""Puzzle 26: double-buffering by hand: fetch the next chunk while you sum this one.

Puzzle 25 waited for each copy straight after starting it, so the core sat
idle while the data moved. The point of an asynchronous copy is to do
something useful meanwhile. The classic pattern is *double-buffering*: two
VMEM slots, and while the core works on the chunk in one slot, the DMA
engine fills the other with the next chunk.

For chunks ``0, 1, ..., n-1`` and slots ``0, 1`` (chunk ``i`` lives in slot
``i % 2``), each step ``i`` does, in this order:

1. start the copy of chunk ``i + 1`` into the *other* slot (if there is a
   chunk ``i + 1``); that slot's previous chunk, ``i - 1``, is finished;
2. wait for the copy of chunk ``i`` (started one step earlier; chunk 0's
   copy is started before the loop);
3. compute on chunk ``i``.

Each slot gets its own semaphore (``pltpu.SemaphoreType.DMA((2,))`` is an
array of two; ``sems.at[slot]`` picks one), and the buffer is one scratch of
shape ``(2, CH, C)``: ``bufs.at[slot]`` is a slot as a ref (for a copy),
``bufs[slot]`` its value. A copy must be waited on exactly once, with the
same source, destination and semaphore it was started with; a small helper
``copy(i, slot)`` that builds the descriptor keeps the start and the wait in
step.

``lax.fori_loop(0, n, body, carry)`` runs the steps; ``pl.when(cond)`` skips
the start on the last one.

Task: column sums ``z[0, c] = sum_r x[r, c]`` of ``x`` of shape ``(R, C)``,
where R is a multiple of ``CH = 8``. ``x`` stays in HBM; ``z`` (shape
``(1, C)``) is an ordinary VMEM output. Write the kernel.
"""

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jaxtyping import Array, Float

CH = 8  # rows per chunk


def spec(x: Float[Array, "R C"]) -> Float[Array, "1 C"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return jnp.sum(x, axis=0, keepdims=True)


def double_buffer_kernel(x_hbm, z_ref, bufs, sems):
    # x_hbm: (R, C) in HBM. z_ref: (1, C) in VMEM. bufs: (2, CH, C) VMEM slots. sems: two DMA semaphores.
    n = x_hbm.shape[0] // CH

    def copy(i, slot):
        return pltpu.make_async_copy(x_hbm.at[pl.ds(i * CH, CH)], bufs.at[slot], sems.at[slot])

    copy(0, 0).start()
    z_ref[...] = jnp.zeros(z_ref.shape, z_ref.dtype)

    def step(i, carry):
        slot = i % 2

        @pl.when(i + 1 < n)
        def _fetch_next():
            copy(i + 1, 1 - slot).start()

        copy(i, slot).wait()
        z_ref[...] += jnp.sum(bufs[slot], axis=0, keepdims=True)
        return carry

    lax.fori_loop(0, n, step, 0)


def double_buffer(x: Float[Array, "R C"]) -> Float[Array, "1 C"]:
    c = x.shape[1]
    return pl.pallas_call(
        double_buffer_kernel,
        out_shape=jax.ShapeDtypeStruct((1, c), x.dtype),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        scratch_shapes=[pltpu.VMEM((2, CH, c), x.dtype), pltpu.SemaphoreType.DMA((2,))],
    )(x)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
