"""What the Blackwell target watches in JAX's GPU interpreter, on top of the Mosaic GPU target's hooks.

- the tcgen05 callbacks are wrapped like the Mosaic GPU ones (mosaic_gpu/interpreter.py's `_in_op`),
  so an access they make is described by the callback it comes from;
- an MMA with accumulate=True into TMEM that nothing has written in this block yet is noted (its
  output is NaN in the interpreter and garbage on a GPU: the finding says why);
- the interpreter's first failure is kept (GPUSharedMemory.set_failed), so that faults.py can
  word races and hangs on tensor memory.

Private API: blackwell/jax_private.py lists the tcgen05 callbacks wrapped here; GPUSharedMemory.set_failed
is the Mosaic GPU family's (mosaic_gpu/jax_private.py), wrapped once more.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

from pallas_puzzles.engine.targets.blackwell import jax_private, multicast_windows
from pallas_puzzles.engine.targets.mosaic_gpu import interpreter
from pallas_puzzles.engine.targets.mosaic_gpu.record import active
from pallas_puzzles.source_line import SourceLine


class Seen:
    """What the hooks saw during one case (reset by `forget`)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.failure: BaseException | None = None
        self.written: set[tuple[str, str, str]] = set()  # (block, TMEM allocation, window) written so far
        self.uninitialised: SourceLine | None = None  # the first MMA that accumulated onto unwritten TMEM
        self.read_unwritten: SourceLine | None = None  # the first TMEM load of a window nothing had written


seen = Seen()


def forget() -> None:
    multicast_windows.forget()
    with seen.lock:
        seen.failure = None
        seen.written.clear()
        seen.uninitialised = None
        seen.read_unwritten = None


# Callbacks that write TMEM -> the name of their TMEM key and transforms arguments.
TMEM_WRITERS = {"tcgen05_mma": "acc", "async_store_tmem": "dst", "async_copy_smem_to_tmem": "tmem"}


def _tmem_window(kwargs: dict[str, Any], prefix: str) -> tuple[str, str, str]:
    """One block's window of one TMEM allocation: the same window written again is initialised."""
    import numpy as np

    location = kwargs.get("mesh_location")
    block = (tuple(getattr(location, "cluster_coords", ())), tuple(getattr(location, "block_coords", ())))
    key = np.asarray(kwargs.get(f"{prefix}_allocation_key_as_array")).tobytes()
    return str(block), key.hex(), str(tuple(kwargs.get(f"{prefix}_transforms") or ()))


def _written(window: tuple[str, str, str]) -> bool:
    """The window, or the whole allocation it is part of, was written (a window inside a written whole
    counts; a whole after only some windows does not: the rest may be unwritten)."""
    return window in seen.written or (window[0], window[1], "()") in seen.written


def _watch_tmem(original: Callable[..., Any], prefix: str) -> Callable[..., Any]:
    @functools.wraps(original)
    def writes_tmem(*args: Any, **kwargs: Any) -> Any:
        if active.record is not None:
            window = _tmem_window(kwargs, prefix)
            accumulates = prefix == "acc" and bool(kwargs.get("accumulate"))
            with seen.lock:
                if accumulates and not _written(window) and seen.uninitialised is None:
                    seen.uninitialised = interpreter.line_of(kwargs.get("source_info"))
                seen.written.add(window)
        return original(*args, **kwargs)

    return writes_tmem


def _watch_load(original: Callable[..., Any]) -> Callable[..., Any]:
    """A TMEM load before any MMA wrote the window: an epilogue that did not wait (in its own warpgroup, it
    may run before the MMA warp has even started, so the race detector has nothing to pair it with)."""
    @functools.wraps(original)
    def async_load_tmem(*args: Any, **kwargs: Any) -> Any:
        if active.record is not None:
            window = _tmem_window(kwargs, "src")
            with seen.lock:
                if not _written(window) and seen.read_unwritten is None:
                    seen.read_unwritten = interpreter.line_of(kwargs.get("source_info"))
        return original(*args, **kwargs)

    return async_load_tmem


def _keep_failure(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def set_failed(self: Any, exception: Exception, *args: Any, **kwargs: Any) -> Any:
        if active.record is not None:
            with seen.lock:
                if seen.failure is None:
                    seen.failure = exception
        return original(self, exception, *args, **kwargs)

    return set_failed


_installed = False


def install() -> None:
    """Once per process, after the Mosaic GPU target's hooks (mosaic_gpu/hooks.py)."""
    global _installed
    if _installed:
        return
    callbacks = jax_private.gpu_callbacks()
    for name in jax_private.TCGEN05_CALLBACKS:
        if hasattr(callbacks, name):
            setattr(callbacks, name, interpreter._in_op(name, getattr(callbacks, name)))
    for name, prefix in TMEM_WRITERS.items():
        setattr(callbacks, name, _watch_tmem(getattr(callbacks, name), prefix))
    callbacks.async_load_tmem = _watch_load(callbacks.async_load_tmem)
    memory = jax_private.gpu_shared_memory().GPUSharedMemory
    memory.set_failed = _keep_failure(memory.set_failed)
    multicast_windows.install()
    _installed = True
