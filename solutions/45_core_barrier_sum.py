"""Puzzle 45: two cores, one answer: a reduction combined in the kernel, after a core barrier.

Puzzle 28 split a sum over two TensorCores and left the last step, adding the two
partial sums, to XLA outside the kernel. Here the kernel finishes the job itself, as
JAX's core_map guide does it: each core reduces its half of the rows, publishes its
partial in HBM, and one core adds the partials and writes the answer.

Publishing needs a meeting point. The two cores run at their own pace, so core 0 may
reach "read core 1's partial" before core 1 has written it, and read whatever that
memory held (garbage on a TPU; NaN here, and the checker's race detector sees the two
copies unordered). A *core barrier* orders them:

    pltpu.core_barrier(sem, core_axis_name="core")

Each core signals the semaphore ``sem`` of every other core and waits until every other
core has signalled its own: no core leaves the barrier before all have reached it, so
everything written before it (here, the partials) is there for everyone after it. The
semaphore is a REGULAR one (``pltpu.SemaphoreType.REGULAR``): a counter in the core's
SMEM, the TPU's small scalar memory, which other cores may signal. Every core must call
the barrier: a core that skips it leaves the others waiting for ever.

(``pl.kernel`` is a thin wrapper around ``pl.core_map``, which runs a function on every
core of a mesh, and ``pl.run_scoped``: it allocates the outputs in HBM and the
``scratch_types`` in each core's VMEM and SMEM, and passes them to the body.)

Task: column sums ``z[0, c] = sum_r x[r, c]`` of ``x`` of shape ``(R, C)``, R a multiple
of ``CORES * 8``. The kernel has two outputs: ``parts_hbm`` of shape ``(CORES, C)``, one
row per core to publish its partial in, and ``z_hbm`` of shape ``(1, C)``; the launcher
returns only ``z``. Write the body: this core's partial, the publishing, the barrier,
and the combine on core 0.
"""

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jaxtyping import Array, Float

CORES = 2  # TensorCores per device on the chip the checker simulates (a TPU v4 or v5p)


def spec(x: Float[Array, "R C"]) -> Float[Array, "1 C"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return jnp.sum(x, axis=0, keepdims=True)


def core_barrier_sum_body(x_hbm, parts_hbm, z_hbm, rows_vmem, part_vmem, other_vmem, sem):
    # x_hbm (R, C), parts_hbm (CORES, C), z_hbm (1, C): HBM. rows_vmem (R / CORES, C),
    # part_vmem and other_vmem (1, C): this core's VMEM. sem: a REGULAR semaphore.
    core = lax.axis_index("core")
    rows = rows_vmem.shape[0]
    pltpu.sync_copy(x_hbm.at[pl.ds(core * rows, rows)], rows_vmem)
    part_vmem[...] = jnp.sum(rows_vmem[...], axis=0, keepdims=True)
    pltpu.sync_copy(part_vmem, parts_hbm.at[pl.ds(core, 1)])

    pltpu.core_barrier(sem, core_axis_name="core")  # every partial is in parts_hbm after this

    @pl.when(core == 0)
    def _combine():
        pltpu.sync_copy(parts_hbm.at[pl.ds(1, 1)], other_vmem)
        part_vmem[...] += other_vmem[...]
        pltpu.sync_copy(part_vmem, z_hbm)


def core_barrier_sum(x: Float[Array, "R C"]) -> Float[Array, "1 C"]:
    r, c = x.shape
    _, z = pl.kernel(
        core_barrier_sum_body,
        out_type=(jax.ShapeDtypeStruct((CORES, c), x.dtype), jax.ShapeDtypeStruct((1, c), x.dtype)),
        mesh=pltpu.TensorCoreMesh(axis_name="core", num_cores=CORES),
        scratch_types=[
            pltpu.VMEM((r // CORES, c), x.dtype),
            pltpu.VMEM((1, c), x.dtype),
            pltpu.VMEM((1, c), x.dtype),
            pltpu.SemaphoreType.REGULAR,
        ],
    )(x)
    return z


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
