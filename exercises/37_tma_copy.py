"""Puzzle 37: Mosaic GPU, copy in and out with the TMA and a barrier.

Pallas on an NVIDIA Hopper GPU (H100) means Mosaic GPU, imported as
``plgpu``. A kernel is launched with ``plgpu.kernel(body, out_type=...,
scratch_types=[...])``. Its inputs and outputs stay in global memory
(GMEM, the GPU's HBM): the refs the body receives point there, and nothing
is copied for you. To compute on data, a block first brings it into shared
memory (SMEM, the fast on-chip memory of one streaming multiprocessor);
``scratch_types`` allocates SMEM buffers, e.g. ``plgpu.SMEM(shape, dtype)``.

The copies are made by the TMA, the GPU's copy engine, and they are
asynchronous:

- ``plgpu.copy_gmem_to_smem(src, dst, barrier)`` starts a copy in. When it
  completes, it *arrives* on ``barrier``, a ``plgpu.Barrier(num_arrivals=1)``
  in SMEM. ``plgpu.barrier_wait(barrier)`` blocks until the barrier has had
  its ``num_arrivals`` arrivals; before that, ``dst`` may hold anything.
- After the warpgroup has stored into SMEM with ordinary stores
  (``o_smem[...] = value``), ``plgpu.commit_smem()`` makes those stores
  visible to the TMA.
- ``plgpu.copy_smem_to_gmem(src, dst)`` starts a copy out, and
  ``plgpu.wait_smem_to_gmem(0)`` waits until no copy out is still reading
  SMEM. A kernel must not end (or reuse the buffer) before that.

In between, the kernel computes on whole arrays in registers:
``x_smem[...]`` loads the buffer, arithmetic is plain ``jax.numpy``. Code in
a ``plgpu.kernel`` body runs once per *warpgroup* (128 threads together),
not once per thread.

The checker runs the kernel in JAX's GPU interpreter with its race detector
on, so reading a buffer before its barrier, or copying out uncommitted
stores, fails here as it may on a GPU. It also lowers the kernel for CUDA on
your CPU, so rules only a GPU enforces (how much SMEM a block may use) are
checked too.

Task: ``z = 2 * x + 1`` for ``x`` of shape ``(R, C)`` (small enough for one
block). Copy ``x`` in, compute into ``z_smem``, copy ``z`` out.
"""

import jax
from jax.experimental.pallas import mosaic_gpu as plgpu
from jaxtyping import Array, Float


def spec(x: Float[Array, "R C"]) -> Float[Array, "R C"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return 2.0 * x + 1.0


def tma_copy_kernel(x_gmem, z_gmem, x_smem, z_smem, barrier):
    # x_gmem, z_gmem: (R, C) in GMEM. x_smem, z_smem: (R, C) SMEM buffers. barrier: one barrier.
    # TODO: copy x into x_smem (arriving on `barrier`) and wait for the copy.
    # TODO: compute 2 * x + 1 into z_smem, commit the stores, copy z_smem out to z_gmem and wait for that copy.
    pass


def tma_copy(x: Float[Array, "R C"]) -> Float[Array, "R C"]:
    return plgpu.kernel(
        tma_copy_kernel,
        out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
        scratch_types=[
            plgpu.SMEM(x.shape, x.dtype),
            plgpu.SMEM(x.shape, x.dtype),
            plgpu.Barrier(num_arrivals=1),
        ],
    )(x)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
