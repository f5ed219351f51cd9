"""Every hook into JAX's Mosaic GPU interpreter, installed once per process.

The hooks act only while a case is active (record.active). Each module installs its own:
async_ops.py (wgmma read asynchronously, wgmma_wait, TMA store groups), interpreter.py (which
line each operation comes from, each callback in its thread's turn, failures, TMA stores left running),
memory_marks.py (elements written), barriers.py and races.py. Private API: the interpreter's
gpu_callbacks and shared_memory modules, from mosaic_gpu/jax_private.py (with the versions checked).
"""

from __future__ import annotations

from pallas_puzzles.engine.targets.mosaic_gpu import (
    async_ops,
    barriers,
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
    memory_marks.install(shared_memory.GPUSharedMemory)
    costs.install(gpu_callbacks, shared_memory.GPUSharedMemory)
    barriers.install(shared_memory)
    races.install()
    _installed = True
