"""Hooks into JAX's Mosaic GPU interpreter: which learner line each memory operation comes from,
the first failure, a TMA store left running, and one interpreter limit lifted.

Private API (mosaic_gpu/jax_private.py lists it, with the versions checked; the chapter needs
jax >= 0.12): the interpreter's gpu_callbacks (its callback functions, looked up by module
attribute when a kernel is traced, and `reset_gpu_interpret_mode_state`) and
GPUSharedMemory (set_failed, kernel_thread_finished). The hooks only read what
passes through; the one change of behaviour is `copy_smem_to_gmem` with a predicate (see
_predicated_store). Barriers: barriers.py; races: races.py; written elements: memory_marks.py;
hooks.py installs them all.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from pallas_puzzles.engine.learner_lines import make_line, same_file
from pallas_puzzles.engine.targets.mosaic_gpu import jax_private
from pallas_puzzles.engine.targets.mosaic_gpu.record import (
    IndexBelowZero,
    StoreNotWaited,
    WindowBeforeStart,
    active,
)
from pallas_puzzles.engine.targets.mosaic_gpu.schedule import AWAY, DONE, RUNNING, gated
from pallas_puzzles.source_line import SourceLine

# Callback name -> how an access made inside it is described to a learner.
OPS = {"_get": "read", "_swap": "write", "copy_gmem_to_smem": "tma-load", "copy_smem_to_gmem": "tma-store",
       "wgmma": "wgmma"}

_tls = threading.local()  # .op: (callback name, source_info, mesh location) of the callback this thread is in
_last_store: dict[Any, SourceLine | None] = {}  # warpgroup -> the line of its latest TMA store


def current_op() -> tuple[str, Any, Any]:
    return getattr(_tls, "op", None) or ("", None, None)


def block_and_warpgroup() -> tuple[tuple[int, ...], int]:
    """Where the current callback runs: the block's grid coordinates and the warpgroup in the block."""
    location = current_op()[2]
    if location is None:
        return (), 0
    return tuple(location.cluster_coords), int(location.thread_id)


def line_of(source_info: Any) -> SourceLine | None:
    """The innermost frame of the learner's file in a kernel operation's recorded traceback."""
    record = active.record
    frames = getattr(getattr(source_info, "traceback", None), "frames", None) or ()
    if record is None:
        return None
    for frame in frames:  # innermost first
        if same_file(frame.file_name, record.learner_file):
            return make_line(frame.file_name, int(frame.line_num), frame.function_name)
    return None


def made_by(source_info: Any) -> str:
    """For an operation JAX's own code made (emit_pipeline's copies): the Pallas function, outermost
    in the recorded traceback, that made it ("emit_pipeline")."""
    frames = getattr(getattr(source_info, "traceback", None), "frames", None) or ()
    pallas = [frame.function_name for frame in frames if "interpret" not in frame.file_name
              and jax_private.PALLAS_SOURCES in frame.file_name.replace("\\", "/")]
    return pallas[-1].split(".")[0] if pallas else ""


def memory_name(key: Any) -> str:
    for space, index in jax_private.gpu_shared_memory().IDX_BY_GPU_MEMORY_SPACE.items():
        if index == key.memory_space_id:
            return space.name
    return "memory"


def _in_op(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def callback(*args: Any, **kwargs: Any) -> Any:
        outer = getattr(_tls, "op", None)
        location = kwargs.get("mesh_location")
        if location is None:  # the memory callbacks get it positionally: (token, mesh_location, thread, ...)
            location = next((a for a in args[:3] if hasattr(a, "cluster_coords")), None)
        _tls.op = (name, kwargs.get("source_info"), location)
        try:
            return original(*args, **kwargs)
        finally:
            _tls.op = outer

    return callback


def _capture_failure(original: Callable[..., Any]) -> Callable[..., Any]:
    """The interpreter keeps the first failure inside its shared memory, which is cleared before
    the error reaches the caller (as a bare JaxRuntimeError); keep the exception itself."""
    @functools.wraps(original)
    def set_failed(self: Any, exception: Exception, *args: Any, **kwargs: Any) -> Any:
        if active.record is not None:
            active.record.note_failure(exception)
        return original(self, exception, *args, **kwargs)

    return set_failed


def _predicated_store(original: Callable[..., Any]) -> Callable[..., Any]:
    """emit_pipeline stores an SMEM output block only when its block index changes (a predicate);
    the interpreter refuses any predicate (NotImplementedError: predicate not supported, jax
    0.12.0.1 gpu_callbacks.copy_smem_to_gmem). Evaluate it here: a false one skips the copy."""
    @functools.wraps(original)
    def copy_smem_to_gmem(*args: Any, predicate: Any = None, token: Any = None, **kwargs: Any) -> Any:
        if predicate is not None and not bool(np.asarray(predicate)):
            return token
        _last_store[kwargs.get("thread")] = line_of(kwargs.get("source_info"))
        return original(*args, predicate=None, token=token, **kwargs)

    return copy_smem_to_gmem


def _window_inside(original: Callable[..., Any]) -> Callable[..., Any]:
    """A TMA window that starts before its array (a pl.ds start moved below 0): a GPU reads the rows
    before the start as zeros and drops them on a copy out; or a shared-memory slot below 0 (a ring
    index stepped back past 0). The interpreter fails on either with a bare AssertionError: name the copy."""
    @functools.wraps(original)
    def __call__(self: Any, *args: Any, **kwargs: Any) -> Any:
        if active.record is not None:
            for into, key, access in ((False, self.src_allocation_key, self.src_access),
                                      (True, self.dst_allocation_key, self.dst_access)):
                fault = WindowBeforeStart if memory_name(key) == "GMEM" else IndexBelowZero
                for dim, index in enumerate(access.range):
                    start = index.start if isinstance(index, slice) else index
                    if start is not None and start < 0:
                        raise fault(line_of(current_op()[1]), into, dim, int(start))
        return original(self, *args, **kwargs)

    return __call__


def _warp_done(*, token: Any, thread: Any) -> Any:
    return token


def _warp_ends(original: Callable[..., Any]) -> Callable[..., Any]:
    """A warp of a WarpMesh ends with no callback of the interpreter's to say so (its warpgroup's
    thread_map just joins it): give it one, so the scheduler knows it is done."""
    @functools.wraps(original)
    def interpret(self: Any, jaxpr: Any, token: Any, *args: Any) -> Any:
        outermost = not self.__dict__.get("_pp_interpreting", False)
        self.__dict__["_pp_interpreting"] = True
        try:
            token, outs = original(self, jaxpr, token, *args)
        finally:
            self.__dict__["_pp_interpreting"] = not outermost
        if outermost and hasattr(self.thread, "warp_id"):
            import jax
            from jax.experimental import io_callback

            token = io_callback(gated(_warp_done, DONE), jax.ShapeDtypeStruct((), token.dtype),
                                token=token, thread=self.thread)
        return token, outs

    return interpret


def _kernel_end(original: Callable[..., Any]) -> Callable[..., Any]:
    """A warpgroup that ends with a TMA store still reading SMEM: name the store's line."""
    @functools.wraps(original)
    def kernel_thread_finished(self: Any, thread: Any) -> Any:
        try:
            return original(self, thread)
        except ValueError as exc:
            if active.record is None or not self.pending_smem_to_gmem_read_clocks.get(thread):
                raise
            raise StoreNotWaited(_last_store.get(thread)) from exc

    return kernel_thread_finished


def wrap(owner: Any, **wrappers: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
    """Replace each named attribute of one of JAX's modules or classes by its wrapper (the hooks' installs)."""
    for name, wrapper in wrappers.items():
        setattr(owner, name, wrapper(getattr(owner, name)))


def reset() -> None:
    """Forget a failed kernel: the interpreter's global state and ours."""
    jax_private.gpu_callbacks().reset_gpu_interpret_mode_state()
    _last_store.clear()


# What a thread does after these callbacks, when not computing on to its next one (schedule.py).
_AFTER = {"kernel_thread_finished": DONE, "sync_warps_with_warpgroup": AWAY}


def install(gpu_callbacks: Any, memory: Any, interpreter: type) -> None:
    """Wrap the interpreter's callbacks and GPUSharedMemory's failure and kernel-end hooks (once: hooks.py):
    each callback runs in its thread's turn (outermost), knowing which line it runs for."""
    gpu_callbacks.copy_smem_to_gmem = _predicated_store(gpu_callbacks.copy_smem_to_gmem)
    for name in jax_private.CALLBACKS_WITH_SOURCE_INFO:
        setattr(gpu_callbacks, name, _in_op(name, getattr(gpu_callbacks, name)))
    for name in jax_private.THREAD_CALLBACKS:
        setattr(gpu_callbacks, name, gated(getattr(gpu_callbacks, name), _AFTER.get(name, RUNNING)))
    gpu_callbacks.AsyncCopyTask.__call__ = _window_inside(gpu_callbacks.AsyncCopyTask.__call__)
    interpreter.interpret = _warp_ends(interpreter.interpret)
    memory.set_failed = _capture_failure(memory.set_failed)
    memory.kernel_thread_finished = _kernel_end(memory.kernel_thread_finished)
