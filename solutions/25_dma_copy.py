"""Puzzle 25: move the data yourself: HBM -> VMEM -> HBM with one DMA each way.

Until now the pipeline moved every block for you: a BlockSpec told Pallas
which block each program needs, and it copied that block from HBM (the big,
slow memory) into VMEM (the small, fast memory next to the compute units)
before the kernel ran. Today's TPU kernels often move data themselves. Three
pieces make that possible:

* ``pl.BlockSpec(memory_space=pl.ANY)`` leaves an operand where it is (in
  HBM): the kernel gets a ref to the *whole* array, and may not read it with
  ``ref[...]``; only a copy can touch it.
* ``scratch_shapes`` gives the kernel extra refs: ``pltpu.VMEM(shape, dtype)``
  is a buffer in VMEM, ``pltpu.SemaphoreType.DMA(())`` a DMA semaphore, a
  counter that a copy raises when its data has landed.
* ``copy = pltpu.make_async_copy(src_ref, dst_ref, sem)`` describes a copy
  (a DMA). ``copy.start()`` sets it going and returns at once; the core is
  free to do other work while it runs. ``copy.wait()`` blocks until the
  semaphore says the data has arrived. Only after the wait may you touch the
  destination: before it, the data may or may not have landed (on hardware
  it depends on timing; the checker reports any such read).

Source and destination must have the same shape; ``ref.at[...]`` takes a
window of a ref without copying (``x_hbm.at[pl.ds(8, 16)]``), should you
ever need part of an array.

Task: ``z = 2 * x + 1`` for ``x`` of shape ``(R, C)``. The launcher is given;
write the kernel: copy ``x`` into the VMEM buffer, compute there, and copy
the result back out into ``z`` (also in HBM). One semaphore is enough when
each copy is waited on before the next starts.
"""

import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jaxtyping import Array, Float


def spec(x: Float[Array, "R C"]) -> Float[Array, "R C"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return 2.0 * x + 1.0


def dma_copy_kernel(x_hbm, z_hbm, buf, sem):
    # x_hbm, z_hbm: the whole arrays, left in HBM. buf: a VMEM buffer of x's shape. sem: a DMA semaphore.
    copy_in = pltpu.make_async_copy(x_hbm, buf, sem)
    copy_in.start()
    copy_in.wait()
    buf[...] = 2.0 * buf[...] + 1.0
    copy_out = pltpu.make_async_copy(buf, z_hbm, sem)
    copy_out.start()
    copy_out.wait()


def dma_copy(x: Float[Array, "R C"]) -> Float[Array, "R C"]:
    return pl.pallas_call(
        dma_copy_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec(memory_space=pl.ANY),
        scratch_shapes=[pltpu.VMEM(x.shape, x.dtype), pltpu.SemaphoreType.DMA(())],
    )(x)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
