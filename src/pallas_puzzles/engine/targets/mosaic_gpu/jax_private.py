"""Every private JAX name the Mosaic GPU family uses, and the one way the family reaches them.

All of them belong to JAX's Mosaic GPU interpreter, which the mosaic-gpu target runs on a CPU
(hooks.py installs interpreter.py's, memory_marks.py's, costs.py's, barriers.py's and races.py's hooks;
target.py quiets its log). Checked on jax 0.10.2 and 0.12.0.1 (CHECKED_ON): the chapter needs
jax >= 0.12, and on 0.10.2 most of these names are absent (the entries' `on` says which: on
0.10.2 as installed for this project the GPU interpreter's modules do not even import, lacking
absl-py); tests/engine/test_jax_private.py looks each one up on the running jax and says which
moved. The
compiled path (mosaic-gpu-device: api.py, cuda_lowering.py) uses none of them, so running it on
a GPU (jax 0.11.2 there) checks nothing here; 0.11.2 is not among CHECKED_ON. The accessors
hand out JAX's own modules, imported on first use: the hooks patch those module objects and
classes in place, and the names they replace are the entries with use="patched".

Imports no JAX itself (the CLI reads target.py without JAX).
"""

from __future__ import annotations

import re
from types import ModuleType
from typing import Any

from pallas_puzzles.engine.targets.pallas_call.jax_private import (  # shared with the TPU interpreter
    CALLBACK,
    INTERPRET_UTILS,
    RACE_DETECTION,
    callback_logger,
    jax_callbacks,
)
from pallas_puzzles.engine.targets.private_names import PrivateNames, load, names

__all__ = ["CALLBACKS_WITH_SOURCE_INFO", "CHECKED_ON", "NAMES", "PALLAS_SOURCES", "THREAD_CALLBACKS",
           "WARNING_MODULES", "callback_logger", "callback_users", "gpu_callbacks", "gpu_jaxpr_interpreter",
           "gpu_primitives", "gpu_race_detection_state", "gpu_shared_memory", "jax_callbacks", "layout_inference",
           "ranges_overlap", "shared_memory_now"]

CHECKED_ON = ("0.10.2", "0.12.0.1")
NEW = ("0.12.0.1",)  # the names jax 0.10.2 lacks

PALLAS = "jax._src.pallas"
MOSAIC_GPU = "jax._src.pallas.mosaic_gpu"
GPU_CALLBACKS = "jax._src.pallas.mosaic_gpu.interpret.gpu_callbacks"
GPU_SHARED_MEMORY = "jax._src.pallas.mosaic_gpu.interpret.shared_memory"
GPU_RACE_DETECTION = "jax._src.pallas.mosaic_gpu.interpret.race_detection_state"
GPU_JAXPR_INTERPRET = "jax._src.pallas.mosaic_gpu.interpret.jaxpr_interpret"
GPU_PRIMITIVES = "jax._src.pallas.mosaic_gpu.primitives"
GPU_INTERPRET_PALLAS_CALL = "jax._src.pallas.mosaic_gpu.interpret.interpret_pallas_call"
# The interpreter's modules that make its io_callbacks, each through its own reference to JAX's
# callback module (hooks.py has those callbacks take numpy arguments: numpy_callbacks.py).
CALLBACK_USERS = (GPU_CALLBACKS, GPU_JAXPR_INTERPRET, GPU_INTERPRET_PALLAS_CALL)
# Mosaic GPU's layout search (cuda_lowering.py bounds it); under jax.experimental, but no API.
LAYOUT_INFERENCE = "jax.experimental.mosaic.gpu.layout_inference"
VECTOR_CLOCK = "jax._src.pallas.mosaic.interpret.vector_clock"  # the race detector's clocks

# A frame in Pallas's own source (emit_pipeline's copies are made there), as a path fragment.
PALLAS_SOURCES = "/" + PALLAS.replace(".", "/") + "/"
# The modules whose RuntimeWarnings (NaN from a wrong kernel) target.py silences, as a warnings regex.
WARNING_MODULES = re.escape(MOSAIC_GPU)

# The interpreter's callbacks that carry the source_info of the kernel line they run for.
CALLBACKS_WITH_SOURCE_INFO = (
    "_get", "_swap", "_barrier_wait", "_barrier_arrive", "_allocate_barriers", "_deallocate_barrier",
    "copy_gmem_to_smem", "copy_smem_to_gmem", "wait_smem_to_gmem", "commit_smem", "wgmma",
    "wgmma_accumulator_deref", "_named_barrier")
# The interpreter's callbacks that run for one of its threads (a warpgroup, a warp): schedule.py gives
# each its thread's turn. After kernel_thread_finished the thread is done; sync_warps_with_warpgroup
# starts its warps, and the warpgroup's next callback comes once they have all finished.
THREAD_CALLBACKS = (
    *CALLBACKS_WITH_SOURCE_INFO, "_allocate_buffer", "_deallocate_buffer", "kernel_thread_finished",
    "sync_warps_with_warpgroup", "sync_warpgroup_with_warps", "tcgen05_mma", "async_copy_smem_to_tmem",
    "tcgen05_commit_arrive", "async_store_tmem", "async_load_tmem", "commit_tmem", "wait_load_tmem")

NAMES = PrivateNames("mosaic_gpu", CHECKED_ON, (
    *names(PALLAS),
    *names(MOSAIC_GPU),
    # interpreter.py: which line each operation comes from, failures, TMA stores left running
    *names(GPU_CALLBACKS, *THREAD_CALLBACKS, use="patched", on=NEW),
    *names(GPU_CALLBACKS, "reset_gpu_interpret_mode_state", "_get_shared_memory", "get_races", on=NEW),
    *names(GPU_CALLBACKS, "AsyncCopyTask.__call__", use="patched", on=NEW),
    # copy_sites.py: each TMA load's options as it is traced, and a promise of in-bounds windows as it runs
    *names(GPU_JAXPR_INTERPRET, "JaxprInterpreter._interpret_copy_gmem_to_smem_p", use="patched", on=NEW),
    *names(GPU_JAXPR_INTERPRET, "JaxprInterpreter.mesh", use="field", on=NEW),
    *names(GPU_CALLBACKS, "AsyncCopyTask.source_info", use="field", on=NEW),
    *names(GPU_SHARED_MEMORY, "GPUSharedMemory.buffer_shape_and_dtype", on=NEW),
    *names(GPU_CALLBACKS, "AsyncCopyTask.src_access", "AsyncCopyTask.dst_access", "AsyncCopyTask.src_allocation_key",
           "AsyncCopyTask.dst_allocation_key", use="field", on=NEW),
    # costs.py: the GPU card's counts (it also wraps copy_gmem_to_smem, _barrier_wait, wgmma above and
    # GPUSharedMemory's allocate_buffer, get/store_buffer_content below)
    *names(GPU_CALLBACKS, "tcgen05_mma", use="patched", on=NEW),
    *names(GPU_SHARED_MEMORY, "GPUSharedMemory.set_failed", "GPUSharedMemory.kernel_thread_finished",
           use="patched", on=NEW),
    *names(GPU_SHARED_MEMORY, "GPUSharedMemory.pending_smem_to_gmem_read_clocks", "MeshLocation.cluster_coords",
           "MeshLocation.thread_id", "HostAllocationKey.memory_space_id", use="field", on=NEW),
    *names(GPU_SHARED_MEMORY, "IDX_BY_GPU_MEMORY_SPACE", on=NEW),
    # memory_marks.py: which elements of each fresh buffer were written (get_buffer_content: async_ops.py too)
    *names(GPU_SHARED_MEMORY, "GPUSharedMemory.allocate_buffer", "GPUSharedMemory.store_buffer_content",
           "GPUSharedMemory.swap_buffer_content", "GPUSharedMemory.get_buffer_content", use="patched", on=NEW),
    *names(INTERPRET_UTILS, "Access.range", "Access.permutation", "Access.inverse_permutation", use="field",
           on=NEW),
    # barriers.py: waits nothing can complete, barrier rules broken
    *names(GPU_SHARED_MEMORY, "Barrier.__init__", "Barrier.arrive", "Barrier._wait", "Barrier.deallocate",
           "GPUSharedMemory.reset_per_cluster_state", use="patched", on=NEW),
    *names(GPU_SHARED_MEMORY, "Barrier.cv", "Barrier.phase", "Barrier.arrivals_count", "Barrier.num_arrivals",
           "Barrier.aborted", "Barrier.last_observed_phase_by_thread", "Barrier.shared_memory", "Barrier.ref_count",
           "GPUSharedMemory.all_concurrent_threads", "Warpgroup.warpgroup_id", "Warpgroup.block_id",
           "Warpgroup.warps", "Warp.warp_id", "Warp.warpgroup", use="field", on=NEW),
    # async_ops.py: wgmma read asynchronously, wgmma_wait and TMA store groups
    *names(GPU_JAXPR_INTERPRET, "JaxprInterpreter.interpret", use="patched", on=NEW),
    *names(GPU_JAXPR_INTERPRET, "JaxprInterpreter.thread", use="field", on=NEW),
    *names(GPU_PRIMITIVES, "wgmma_wait_p", "commit_group_p", "wait_smem_to_gmem_p", on=NEW),
    *names(GPU_SHARED_MEMORY, "GPUSharedMemory.incr_clock", "GPUSharedMemory.get_next_tma_thread_id", on=NEW),
    *names(GPU_SHARED_MEMORY, "GPUSharedMemory.clocks", "GPUSharedMemory.lock", "GPUSharedMemory.detect_races",
           "GPUSharedMemory.pending_smem_to_gmem_write_clocks", use="field", on=NEW),
    # cuda_lowering.py: how long Mosaic GPU's layout search may try
    *names(LAYOUT_INFERENCE, "infer_layout", use="patched", on=NEW),
    *names(GPU_SHARED_MEMORY, "Warpgroup", on=NEW),
    # races.py: both accesses of a race, in the learner's words
    *names(GPU_RACE_DETECTION, "GPURaceDetectionState.check_read", "GPURaceDetectionState.check_write",
           use="patched", on=NEW),
    *names(GPU_RACE_DETECTION, "GPURaceDetectionState.reads", "GPURaceDetectionState.writes", use="field", on=NEW),
    *names(VECTOR_CLOCK, "NpVectorClock.ordered", on=NEW),
    *names(RACE_DETECTION, "_ranges_overlap"),
    # hooks.py: the interpreter's callbacks take numpy arguments (engine/targets/numpy_callbacks.py), so
    # its numbers arrive as numpy scalars, which _to_int is taught to read
    *[name for module in CALLBACK_USERS for name in names(module, "callback", use="patched", on=NEW)],
    *names(GPU_SHARED_MEMORY, "_to_int", use="patched", on=NEW),
    *names(CALLBACK, "io_callback_impl", use="patched"),
    *names(CALLBACK, "_FlatCallback.callback_func", use="field"),
))


def gpu_callbacks() -> ModuleType:
    """The interpreter's callbacks, looked up by module attribute when a kernel is traced (patched)."""
    return load(GPU_CALLBACKS)


def callback_users() -> tuple[ModuleType, ...]:
    """The interpreter's modules whose `callback` (JAX's callback module) hooks.py stands in for."""
    return tuple(load(module) for module in CALLBACK_USERS)


def gpu_shared_memory() -> ModuleType:
    """The interpreter's memory: GPUSharedMemory, Barrier, Warpgroup (patched)."""
    return load(GPU_SHARED_MEMORY)


def shared_memory_now() -> Any:
    """The interpreter's GPUSharedMemory of the kernel running now."""
    return load(GPU_CALLBACKS)._get_shared_memory()


def gpu_jaxpr_interpreter() -> type:
    """The interpreter of a kernel's jaxpr, JaxprInterpreter (patched: async_ops.py)."""
    return load(GPU_JAXPR_INTERPRET).JaxprInterpreter  # type: ignore[no-any-return]


def gpu_primitives() -> ModuleType:
    """Pallas's Mosaic GPU primitives (wgmma_wait_p and the like), read."""
    return load(GPU_PRIMITIVES)


def layout_inference() -> ModuleType:
    """Mosaic GPU's layout inference (its search's fuel is patched: cuda_lowering.py)."""
    return load(LAYOUT_INFERENCE)


def gpu_race_detection_state() -> ModuleType:
    """The interpreter's race detector: GPURaceDetectionState (patched)."""
    return load(GPU_RACE_DETECTION)


def ranges_overlap() -> Any:
    """The race detector's test of two index ranges for overlap (the TPU interpreter's, which it shares)."""
    return load(RACE_DETECTION)._ranges_overlap
