"""Puzzle 46: one pipeline, two cores: emit_pipeline split with core_axis_name.

Puzzle 27 ran ``pltpu.emit_pipeline`` inside a kernel on one core. In a ``pl.kernel``
over a TensorCore mesh the body runs on every core, and so would the pipeline: both
cores would fetch every block, compute it and write it back, twice the work for the
same answer (and two cores writing one block at once: the checker reports it). JAX's
quickstart splits the pipeline instead:

    pltpu.emit_pipeline(body, grid=(rows // BR, cols // BC), in_specs=[...], out_specs=...,
                        core_axis_name="core",
                        dimension_semantics=(pltpu.PARALLEL, pltpu.ARBITRARY))(x_hbm, y_hbm, z_hbm)

``core_axis_name`` names the mesh axis whose cores share the grid, and
``dimension_semantics`` says which grid axis may be shared: a ``PARALLEL`` axis is cut
into one contiguous range per core (its blocks must not depend on each other), an
``ARBITRARY`` one runs in order on one core. Each core's pipeline then double-buffers
its own blocks: while the core computes block i in VMEM, its DMA engine already copies
block i + 1 in from HBM and block i - 1 back out. The ranges need not be equal: with 3
row blocks one core gets 2 and the other 1.

Task: ``z = x * sigmoid(x) * y`` (a SiLU gate) for ``x`` and ``y`` of shape ``(R, C)``,
R a multiple of ``BR = 8`` and C of ``BC = 128``, in blocks of ``(BR, BC)``: the row-block
axis shared by the cores, the column-block axis in order. The launcher is given; write
the kernel body: the block computation and the split pipeline.
"""

import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jaxtyping import Array, Float

CORES = 2  # TensorCores per device on the chip the checker simulates (a TPU v4 or v5p)
BR, BC = 8, 128  # the pipeline's block: 8 sublanes by 128 lanes, one vector register tile


def spec(x: Float[Array, "R C"], y: Float[Array, "R C"]) -> Float[Array, "R C"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return x * jax.nn.sigmoid(x) * y


def pipeline_cores_body(x_hbm, y_hbm, z_hbm):
    # x_hbm, y_hbm, z_hbm: whole (R, C) arrays in HBM; this runs on each core.
    rows, cols = x_hbm.shape

    def gate(x_ref, y_ref, z_ref):  # (BR, BC) blocks in VMEM
        # TODO: this block of z.
        pass

    # TODO: run gate over (BR, BC) blocks with pltpu.emit_pipeline(...)(x_hbm, y_hbm, z_hbm),
    # the row-block axis shared by the cores.


def pipeline_cores(x: Float[Array, "R C"], y: Float[Array, "R C"]) -> Float[Array, "R C"]:
    return pl.kernel(
        pipeline_cores_body,
        out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
        mesh=pltpu.TensorCoreMesh(axis_name="core", num_cores=CORES),
    )(x, y)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
