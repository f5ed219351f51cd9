"""Every private JAX name the tpu-multichip family uses, and the one way the family reaches them.

The family (hooks.py, watch.py) hooks the same TPU interpreter as the pallas_call family, whose
adapter names its modules; this one lists the names multichip uses on top, and hands out the
interpreter's modules (JAX's own module objects, patched in place: the entries with
use="patched" or "global" are the names the hooks replace). Checked on jax 0.10.2 and 0.12.0.1
(CHECKED_ON): every name in NAMES exists on both unless its entry's `on` says otherwise;
tests/engine/test_jax_private.py looks each one up on the running jax and says which moved.
Public APIs serve the rest: jax.extend.source_info_util, pltpu.reset_tpu_interpret_mode_state.

Imports no JAX itself (the CLI reads target.py without JAX).
"""

from __future__ import annotations

from typing import Any

from pallas_puzzles.engine.targets.pallas_call.jax_private import (
    CALLBACK,
    INTERPRET_UTILS,
    INTERPRETER,
    RACE_DETECTION,
    SHARED_MEMORY,
    callback_logger,
    interpret_utils,
    interpreter,
    jax_callbacks,
    race_detection_state,
    shared_memory,
)
from pallas_puzzles.engine.targets.private_names import PrivateNames, load, names

__all__ = ["CHECKED_ON", "NAMES", "callback_logger", "interpret_utils", "interpreter", "jax_callbacks",
           "race_detection_state", "runtime_tokens", "shared_memory"]

CHECKED_ON = ("0.10.2", "0.12.0.1")

DISPATCH = "jax._src.dispatch"


NAMES = PrivateNames("tpu_multichip", CHECKED_ON, (
    # hooks.py: every remote copy, signal, wait, store and kernel edge reported to the monitor
    *names(INTERPRETER, "dma_start", "dma_wait", "semaphore_signal", "semaphore_wait", "interpret_pallas_call",
            "_barrier", "_validate", "_clear_shared_memory", "_check_for_revisiting", use="patched"),
    *names(INTERPRETER, "DMA", use="patched"),  # replaced by a subclass that reports each copy
    *names(INTERPRETER, "callback", use="patched"),  # its reference to JAX's callback module, wrapped
    *names(INTERPRETER, "dma_start.__wrapped__", "semaphore_signal.__wrapped__", "get_barrier_semaphore",
            "fail_on_exception", "_shared_memory", "DmaState.COMPLETED"),
    *names(INTERPRETER, "DMA.id", "DMA.state", "DMA.src_device_id", "DMA.dst_device_id", "DMA.source_info",
            "DMA.src_sem", "DMA.dst_sem", "DMA.data", use="field"),
    *names(INTERPRET_UTILS, "_device_id_to_logical", use="patched"),
    *names(SHARED_MEMORY, "SharedMemory.get_random_virtual_device_id", use="patched"),
    # callbacks.py: one device at a time, in a seeded order (turns.py); callbacks given numpy arguments
    *names(SHARED_MEMORY, "Semaphore.__init__", "SharedMemory.set_failed", use="patched"),
    *names(CALLBACK, "io_callback_impl", use="patched"),
    *names(CALLBACK, "_FlatCallback.callback_func", use="field"),
    *names(DISPATCH, "runtime_tokens"),
    # watch.py: deadlocks, races and the kernel's exit, read from the interpreter's state
    *names(SHARED_MEMORY, "SharedMemory.sem", "SharedMemory.fixed_id_sem", "SharedMemory.num_devices",
            "SharedMemory.clean_up_barrier", "SharedMemory._failure",
            "Semaphore.cv", "Semaphore.count_by_core", "Semaphore.tasks", use="field"),
    *names(RACE_DETECTION, "RaceDetectionState.check_read", "RaceDetectionState.check_write", use="patched"),
    *names(RACE_DETECTION, "RaceDetectionState.reads", "RaceDetectionState.writes",
            "RaceDetectionState.races_found", use="field"),
    *names(RACE_DETECTION, "_ranges_overlap", "vc"),
    *names(RACE_DETECTION, "vc.ordered", on=("0.10.2",)),  # jax 0.12's clocks order themselves:
    *names(SHARED_MEMORY, "SharedMemory.VectorClock.ordered", on=("0.12.0.1",)),
    *names(RACE_DETECTION, "print", use="global", on=("0.10.2",)),  # jax 0.12 raises on a race itself
))


def runtime_tokens() -> Any:
    """JAX's effect tokens of the runtime, which a failed kernel leaves behind on jax 0.10."""
    return load(DISPATCH).runtime_tokens
