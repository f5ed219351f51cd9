"""Every hook into JAX's Mosaic GPU interpreter, installed once per process.

The hooks act only while a case is active (record.active). Each module installs its own:
async_ops.py (wgmma read asynchronously, wgmma_wait, TMA store groups), copy_sites.py (what the
interpreter is not told of a TMA load: its options), interpreter.py (which
line each operation comes from, each callback in its thread's turn, failures, TMA stores left running),
memory_marks.py (elements written), barriers.py and races.py. With the fast path on, the
interpreter's callbacks take numpy arguments (numpy_callbacks.py). Private API: the interpreter's
gpu_callbacks and shared_memory modules, from mosaic_gpu/jax_private.py (with the versions checked).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from pallas_puzzles.engine.targets import numpy_callbacks
from pallas_puzzles.engine.targets.mosaic_gpu import (
    async_ops,
    barriers,
    copy_sites,
    costs,
    interpreter,
    jax_private,
    memory_marks,
    races,
)

_installed = False


def install() -> None:
    global _installed
    if _installed:
        return
    gpu_callbacks, shared_memory = jax_private.gpu_callbacks(), jax_private.gpu_shared_memory()
    # First the wrappers that need to know which line and thread they run for (interpreter.py's, outermost).
    jaxpr_interpreter = jax_private.gpu_jaxpr_interpreter()
    async_ops.install(gpu_callbacks, shared_memory.GPUSharedMemory, jaxpr_interpreter)
    interpreter.install(gpu_callbacks, shared_memory.GPUSharedMemory, jaxpr_interpreter)
    copy_sites.install(gpu_callbacks, jaxpr_interpreter)
    memory_marks.install(shared_memory.GPUSharedMemory)
    costs.install(gpu_callbacks, shared_memory.GPUSharedMemory)
    barriers.install(shared_memory)
    races.install()
    if numpy_callbacks.enabled():
        _numpy_arguments(shared_memory)
    _installed = True


def _numpy_arguments(shared_memory: Any) -> None:
    """Every io_callback the interpreter makes takes numpy arguments; its numbers then arrive as numpy
    scalars, which its _to_int reads as it reads jax scalars."""
    for module in jax_private.callback_users():
        module.callback = numpy_callbacks.MarkingCallbackModule(module.callback)
    shared_memory._to_int = _numpy_ints(shared_memory._to_int)
    numpy_callbacks.install(jax_private.jax_callbacks(), jax_private.callback_logger())


def _numpy_ints(original: Callable[[Any], Any]) -> Callable[[Any], Any]:
    import numpy as np

    @functools.wraps(original)
    def _to_int(x: Any) -> Any:
        if isinstance(x, (np.ndarray, np.generic)):
            return int(x)
        return original(x)

    return _to_int
