"""Every private JAX name the pallas_call family uses, and the one way the family reaches them.

The family is the strict `pallas_call` stand-in (intercept/: the TPU interpreter's hooks, the
eager path and its numpy answers) and the tpu-interpret target. Checked on jax 0.10.2 and
0.12.0.1 (CHECKED_ON): every name in NAMES exists on both unless its entry's `on` says
otherwise; tests/engine/test_jax_private.py looks each one up on the running jax and says
which moved. The accessors below hand out JAX's own modules, imported on first use: the
hooks patch those module objects in place, and the names they replace are the entries with
use="patched" (or "global"). Public APIs serve the rest: pltpu.InterpretParams,
jax.extend.core.Primitive, jax.extend.source_info_util, jax.core.ShapedArray, and jax.lax's
primitives (host_ops' rules).

Imports no JAX itself: session.py and tpu_interpret.py import it at module level, and the
CLI reads targets without JAX.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, Any

from pallas_puzzles.engine.targets.private_names import PrivateNames, load, names

if TYPE_CHECKING:
    import logging

CHECKED_ON = ("0.10.2", "0.12.0.1")

INTERPRETER = "jax._src.pallas.mosaic.interpret.interpret_pallas_call"  # the TPU interpreter
SHARED_MEMORY = "jax._src.pallas.mosaic.interpret.shared_memory"  # its buffers and semaphores
RACE_DETECTION = "jax._src.pallas.mosaic.interpret.race_detection_state"
INTERPRET_UTILS = "jax._src.pallas.mosaic.interpret.utils"
THREAD_MAP = "jax._src.pallas.mosaic.interpret.thread_map"  # how the interpreter runs several cores
TPU_LOWERING = "jax._src.pallas.mosaic.lowering"
PALLAS_CALL = "jax._src.pallas.pallas_call"
MPMD = "jax._src.pallas.mpmd"  # pl.kernel's primitive (mpmd_map) and its lowering on a CPU
CALLBACK = "jax._src.callback"  # also the name of the logger JAX reports failed io_callbacks to
CORE = "jax._src.core"
MLIR = "jax._src.interpreters.mlir"
LAX = "jax._src.lax.lax"
LAX_UTILS = "jax._src.lax.utils"
ARRAY = "jax._src.array"
LITERALS = "jax._src.literals"
INDEXING = "jax._src.state.indexing"
LIB = "jax._src.lib"  # jaxlib as JAX imports it
# Lowering any interpreted pallas_call imports Pallas's Mosaic GPU interpreter just to test whether
# the call asked for it (PALLAS_CALL's lowering); tpu_interpret.py makes that import fail fast.
GPU_INTERPRETER = "jax._src.pallas.mosaic_gpu.interpret.interpret_pallas_call"
TPU_PRIMITIVES = "jax._src.pallas.mosaic.primitives"  # make_async_copy's descriptor

NAMES = PrivateNames("pallas_call", CHECKED_ON, (
    # eager.py: interpreting op by op, callbacks called directly, MLIR contexts reused;
    # intercept/smem_scalars.py reads each kernel's jaxpr on its way into the interpreter, and
    # intercept/aliased_outputs.py cuts its aliased outputs back to their declared shapes
    *names(INTERPRETER, "interpret_pallas_call", use="patched"),
    *names(PALLAS_CALL, "pallas_call_p.impl", use="patched"),
    *names(CALLBACK, "io_callback_p.impl", use="patched"),
    *names(CALLBACK, "logger"),
    *names(CORE, "stage_p.impl", use="patched"),
    *names(MLIR, "make_ir_context", use="patched"),
    *names(MLIR, "_create_ir_context", on=("0.12.0.1",)),  # jax 0.10 makes every context afresh
    # eager_cores.py: pl.kernel's calls and each core's loop, op by op
    *names(MPMD, "mpmd_map_p.impl", use="patched"),
    *names(MPMD, "_mpmd_map_fallback_lowering"),
    *names(PALLAS_CALL, "_pallas_call_lowering", use="patched"),
    *names(INTERPRETER, "thread_map", use="patched"),
    # core_threads.py: which cores still run, and the line of each semaphore wait
    *names(THREAD_MAP, "_thread_map_callback", "_run_jaxpr", use="patched"),
    *names(INTERPRETER, "callback", use="patched"),  # its reference to JAX's callback module, wrapped
    *names(INTERPRETER, "semaphore_wait"),
    # host_ops.py, weak_values.py: values numpy may take, JAX's weakly typed host literal
    *names(ARRAY, "ArrayImpl"),
    *names(LITERALS, "TypedNdArray"),
    *names(LAX_UTILS, "_standard_weak_type_rule", use="mirrored"),  # weak_values restates these three
    *names(LAX, "_select_weak_type_rule", "_convert_element_type_weak_type_rule", use="mirrored"),
    # dma_ledger.py: the copies a kernel starts, when they land, the waits and HBM buffers
    *names(TPU_PRIMITIVES, "AsyncCopyDescriptor._used", use="field"),  # explain/cause.py: a copy never started
    *names(INTERPRETER, "DMA.__init__", "DMA.execute_write", use="patched"),
    *names(INTERPRETER, "TPU_MEMORY_SPACE_NAMES"),
    *names(INTERPRETER, "DMA.id", "DMA.src_memory_space", "DMA.dst_memory_space", "DMA.src_buffer_id",
            "DMA.dst_buffer_id", "DMA.dst_sem", "DMA.dst_global_core_id", "DMA.source_info", "DMA.data", use="field"),
    *names(SHARED_MEMORY, "Semaphore.wait", "SharedMemory.allocate_buffer",
            "SharedMemory.get_sempahores_with_nonzero_count", use="patched"),
    *names(SHARED_MEMORY, "Semaphore.id", "Semaphore.count_by_core", "Semaphore.tasks", use="field"),
    # semaphore_clocks.py: a wait ordered after the signals it takes, not after every signal so far
    *names(SHARED_MEMORY, "Semaphore.signal", use="patched"),
    *names(SHARED_MEMORY, "Semaphore.clocks", "Semaphore.cv", use="field"),
    *names(SHARED_MEMORY, "Semaphore.detect_races"),
    # semaphore_bounds.py: an index past the end of an array of semaphores is refused, not clamped
    *names(INTERPRETER, "state_discharge", use="patched"),
    *names(SHARED_MEMORY, "SharedMemory.get_semaphores_and_increment_clock", use="patched"),
    # dma_watch.py: stalled waits, races raised, copies checked when traced, round-robin clocks
    *names(SHARED_MEMORY, "SharedMemory.check_failed", "SharedMemory.get_random_virtual_device_id", use="patched"),
    *names(SHARED_MEMORY, "SharedMemory.num_cores", "SharedMemory.vector_clock_size", use="field"),
    *names(RACE_DETECTION, "RaceDetectionState.check_read", "RaceDetectionState.check_write", use="patched"),
    *names(RACE_DETECTION, "RaceDetectionState.writes", use="field"),
    *names(RACE_DETECTION, "_ranges_overlap"),
    *names(RACE_DETECTION, "print", use="global", on=("0.10.2",)),  # jax 0.12 raises on a race itself
    *names(LIB, "xla_client.Traceback.get_traceback"),
    # grid_order.py, negative_indices.py, poison.py, static_slices.py
    *names(INTERPRETER, "_get_randomized_grid_coordinates", use="patched"),
    *names(INTERPRET_UTILS, "to_range", "get_uninitialized_value", use="patched"),
    *names(INDEXING, "NDIndexer.from_indices_shape", use="patched"),
    # tpu_blocks.py restates Mosaic's block-shape rules
    *names(TPU_LOWERING, "_check_block_mappings", "lower_jaxpr_into_pipelined_module", use="mirrored"),
    # tpu_interpret.py
    *names(GPU_INTERPRETER, use="blocked"),
    # launcher_trace.py: a pallas_call's stand-in in a traced launcher is a pure_callback of ours
    *names(CALLBACK, "_FlatCallback.callback_func", use="field"),
))


def interpreter() -> ModuleType:
    """The TPU interpreter: interpret_pallas_call, DMA, the grid's order (patched by the hooks)."""
    return load(INTERPRETER)


def shared_memory() -> ModuleType:
    """The interpreter's memory: SharedMemory and Semaphore (patched by the hooks)."""
    return load(SHARED_MEMORY)


def race_detection_state() -> ModuleType:
    """The interpreter's race detector (patched by the hooks)."""
    return load(RACE_DETECTION)


def interpret_utils() -> ModuleType:
    """The interpreter's helpers: to_range, get_uninitialized_value (patched by the hooks)."""
    return load(INTERPRET_UTILS)


def pallas_call() -> ModuleType:
    """Pallas's pallas_call module: pallas_call_p, whose impl eager.py redefines."""
    return load(PALLAS_CALL)


def mpmd() -> ModuleType:
    """Pallas's mpmd module: mpmd_map_p (what pl.kernel binds), whose impl eager_cores.py redefines."""
    return load(MPMD)


def thread_map() -> ModuleType:
    """The interpreter's thread_map module: how it runs each core on a thread (patched by core_threads.py)."""
    return load(THREAD_MAP)


def callback() -> ModuleType:
    """JAX's callback module: io_callback_p, whose impl eager.py redefines."""
    return load(CALLBACK)


def core() -> ModuleType:
    """JAX's core: stage_p, whose impl eager.py redefines."""
    return load(CORE)


def mlir() -> ModuleType:
    """JAX's MLIR lowering: make_ir_context, which eager.py replaces."""
    return load(MLIR)


def indexing() -> ModuleType:
    """Refs' indexing: NDIndexer, whose from_indices_shape static_slices.py replaces."""
    return load(INDEXING)


def array_class() -> type:
    """The class of JAX arrays that hold values (a tracer is not one)."""
    return load(ARRAY).ArrayImpl


def host_literal_class() -> type:
    """JAX's host literal, a numpy array with an `aval` (weakly typed where JAX made it from a Python scalar)."""
    return load(LITERALS).TypedNdArray


def current_traceback() -> Any:
    """The whole Python stack of the caller, as JAX records a traceback."""
    return load(LIB).xla_client.Traceback.get_traceback()


def callback_function(eqn: Any) -> Any:
    """The Python function a callback equation (pure_callback, io_callback) calls; None for another."""
    return getattr(eqn.params.get("callback"), "callback_func", None)


def jax_callbacks() -> Any:
    """JAX's callback module, whose io_callback_impl numpy_callbacks.py replaces (for the multi-device
    and Mosaic GPU families, whose jax_private.py list that name)."""
    return load(CALLBACK)


def callback_logger() -> logging.Logger:
    """The logger JAX reports a failed io_callback to (its callback module's own)."""
    import logging

    return logging.getLogger(CALLBACK)


def copy_descriptor_used(descriptor: Any) -> bool:
    """Whether a make_async_copy descriptor was ever started or waited on (JAX logs it if not)."""
    return bool(getattr(descriptor, "_used", True))
