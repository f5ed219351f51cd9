"""What the GPU card counts in the interpreter beyond the course's kernels: a Blackwell tcgen05 MMA and a
register store into GMEM, run in this process with the Mosaic GPU target's hooks."""

from __future__ import annotations

from helpers import COURSE, skip_if_jax_too_old


def test_a_tcgen05_mma_counts_its_flops_and_the_tma_bytes_that_fed_it():
    skip_if_jax_too_old(COURSE.find("wgmma_matmul"))  # the GPU interpreter is new in jax 0.12
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu
    from jax.sharding import AbstractDevice, AbstractMesh

    from pallas_puzzles.engine.targets.mosaic_gpu import costs
    from pallas_puzzles.engine.targets.mosaic_gpu.record import CaseRecord, active
    from pallas_puzzles.engine.targets.mosaic_gpu.target import MosaicGpuTarget

    MosaicGpuTarget().start()
    m = n = k = 128
    swizzled = (plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(128))

    def body(a_gmem, b_gmem, o_gmem, a_smem, b_smem, acc_tmem, loaded, multiplied):
        plgpu.copy_gmem_to_smem(a_gmem, a_smem, loaded)
        plgpu.copy_gmem_to_smem(b_gmem, b_smem, loaded)
        plgpu.barrier_wait(loaded)
        plgpu.tcgen05_mma(acc_tmem, a_smem, b_smem, multiplied, accumulate=False)
        plgpu.barrier_wait(multiplied)
        o_gmem[...] = plgpu.async_load_tmem(acc_tmem)
        plgpu.wait_load_tmem()

    kernel = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((m, n), jnp.float32), scratch_types=[
        plgpu.SMEM((m, k), jnp.float16, transforms=swizzled), plgpu.SMEM((k, n), jnp.float16, transforms=swizzled),
        plgpu.TMEM((m, n), jnp.float32), plgpu.Barrier(num_arrivals=2), plgpu.Barrier(orders_tensor_core=True)])
    record = CaseRecord(learner_file=__file__)
    active.record, active.interpreting = record, True
    b200 = AbstractMesh((), (), abstract_device=AbstractDevice(device_kind="NVIDIA B200", num_cores=8, platform="gpu"))
    try:
        with jax.sharding.use_abstract_mesh(b200), plgpu.force_gpu_interpret_mode(plgpu.InterpretGPUParams()):
            out = jax.block_until_ready(kernel(jnp.ones((m, k), jnp.float16), jnp.ones((k, n), jnp.float16)))
    finally:
        active.record, active.interpreting = None, False
    assert float(out[0, 0]) == k
    counts = costs.counts(record.costs, min_bytes=2 * m * k * 2 + m * n * 4)
    assert (counts.flops, counts.mma_dtype) == (2 * m * n * k, "float16")
    assert counts.gmem_bytes_read == 2 * m * k * 2  # the two TMA loads
    assert counts.gmem_bytes_written == m * n * 4  # the store of the TMEM load, straight from registers
    assert counts.smem_bytes == 2 * m * k * 2 and counts.blocks == 1 and counts.copy_waits == 1
