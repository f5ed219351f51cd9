"""Puzzle 44: a kernel that runs on every TensorCore: pl.kernel, run_scoped and sync_copy.

This chapter continues the TPU chapters (the manual-DMA chapter above all) in the
style of JAX's current TPU guides. There a kernel is not a ``pallas_call`` with a
grid and BlockSpecs, but a function that runs once on every TensorCore of a device:

    pl.kernel(body, out_type=jax.ShapeDtypeStruct(shape, dtype),
              mesh=pltpu.TensorCoreMesh(axis_name="core", num_cores=CORES))(x)

What lives where. ``body`` gets one ref per input, then one per output, and every one
of them is in HBM, the chip's large main memory. The TensorCore cannot compute on HBM:
its vector units read and write VMEM, the core's own small and fast memory (16 to 128
MiB, by generation). ``pltpu.sync_copy(src, dst)`` has the core's DMA engine copy
between the two and waits until the copy has landed. A VMEM buffer is asked for with
``pl.run_scoped(fn, pltpu.VMEM(shape, dtype))``: it exists while ``fn(buf)`` runs and
its VMEM is free again after, so a kernel holds VMEM only where it needs it.

The cores. A TPU v4 or v5p puts two TensorCores behind each JAX device (megacore), and
the body runs on both at the same time: ``lax.axis_index("core")`` tells each one which
it is. Nothing splits the work for you; as written, both cores would do all of it. On
a TPU7x each TensorCore is a JAX device of its own: there ``num_cores=1``, and the two
cores of a chip are reached with ``jax.shard_map`` over devices. The checker simulates a
chip with two TensorCores per device. Always pass ``num_cores=``: on a TPU JAX could ask
the chip, on a CPU it cannot. (``pltpu.TensorCoreMesh`` is jax 0.12's spelling; jax 0.10
has ``pltpu.create_tensorcore_mesh("core", num_cores=...)``, and the checker accepts the
0.12 spelling there too.)

Task: ``z = x * x + 1`` for ``x`` of shape ``(R, C)``, R a multiple of ``CORES * 8``.
Core c copies rows ``[c * R / CORES, (c + 1) * R / CORES)`` of ``x`` into a VMEM
buffer, computes there, and copies the result into the same rows of ``z``.
"""

import jax
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jaxtyping import Array, Float

CORES = 2  # TensorCores per device on the chip the checker simulates (a TPU v4 or v5p)


def spec(x: Float[Array, "R C"]) -> Float[Array, "R C"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return x * x + 1.0


def tensorcore_kernel_body(x_hbm, z_hbm):
    # x_hbm, z_hbm: the whole (R, C) arrays, in HBM. This runs once on each core.
    rows = x_hbm.shape[0] // CORES  # this core's share
    mine = pl.ds(lax.axis_index("core") * rows, rows)

    def square_plus_one(buf):  # buf: (rows, C) in this core's VMEM, for this call only
        pltpu.sync_copy(x_hbm.at[mine], buf)
        buf[...] = buf[...] * buf[...] + 1.0
        pltpu.sync_copy(buf, z_hbm.at[mine])

    pl.run_scoped(square_plus_one, pltpu.VMEM((rows, x_hbm.shape[1]), x_hbm.dtype))


def tensorcore_kernel(x: Float[Array, "R C"]) -> Float[Array, "R C"]:
    return pl.kernel(
        tensorcore_kernel_body,
        out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
        mesh=pltpu.TensorCoreMesh(axis_name="core", num_cores=CORES),
    )(x)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
