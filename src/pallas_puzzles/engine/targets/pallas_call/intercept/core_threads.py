"""Which simulated cores of the kernel being interpreted still run, and the line each semaphore wait is at.

On more than one core the TPU interpreter runs each core on a thread of its own: compiled (its
thread_map compiles each core's loop and runs it on a pool) or op by op (eager_cores.py). Either way
the cores are registered here when they start and struck off as each one ends, so the deadlock rule
(core_waits.py, applied by dma_watch) knows which cores could still signal. The interpreter passes
no line to a semaphore_wait; the stand-in for its callback module (as tpu_multichip/hooks.py does for
devices) binds the line that is being traced, so a stuck wait names it in both modes.

Private names (pallas_call/jax_private.py lists them, with the versions checked): thread_map's
_thread_map_callback and _run_jaxpr, the interpreter's semaphore_wait and its module reference
`callback`. Nothing here changes what a kernel computes.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

from pallas_puzzles.engine.targets.pallas_call import jax_private

_lock = threading.Lock()
_cores: tuple[int, ...] = ()  # global ids of the cores of the kernel running on threads
_running: set[int] = set()  # those that have not finished
_first = 0  # the global id of its core 0 (the device's first core)
_installed = False


def started(first: int, cores: int) -> None:
    """A kernel's cores `first` .. `first + cores - 1` start, each on a thread of its own."""
    global _cores, _first
    with _lock:
        _cores, _first = tuple(range(first, first + cores)), first
        _running.clear()
        _running.update(_cores)


def finished(local: int) -> None:
    """Core `local` of the running kernel (0 .. cores - 1) has left it, one way or another."""
    with _lock:
        _running.discard(_first + local)


def running() -> tuple[tuple[int, ...], frozenset[int]] | None:
    """(every core of the kernel, those still running); None when no kernel runs on several threads."""
    with _lock:
        return (_cores, frozenset(_running)) if _running else None


def _registering(callback: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(callback)
    def thread_map_callback(jaxpr: Any, token: Any, device_id: Any, num_threads: Any, *args: Any, **kwargs: Any) -> Any:
        threads = int(num_threads)
        started((int(device_id) if device_id is not None else 0) * threads, threads)
        return callback(jaxpr, token, device_id, num_threads, *args, **kwargs)

    return thread_map_callback


def _striking_off(run: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(run)
    def run_jaxpr(jaxpr: Any, consts: Any, *args: Any) -> Any:
        try:
            return run(jaxpr, consts, *args)
        finally:
            finished(int(args[0]))  # the thread's index comes first (thread_map's own convention)

    return run_jaxpr


class _CallbackModule:
    """Stands in for JAX's callback module inside the interpreter: a semaphore wait's callback, made
    while the kernel is traced, is given the line being traced (the interpreter passes it none)."""

    def __init__(self, real: Any, interpreter: Any) -> None:
        self._real, self._interpreter = real, interpreter

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def io_callback(self, callback: Any, *args: Any, **kwargs: Any) -> Any:
        if callback is self._interpreter.semaphore_wait:
            from jax.extend import source_info_util

            callback = functools.partial(callback, source_info=source_info_util.current())
        return self._real.io_callback(callback, *args, **kwargs)


def install() -> None:
    """Install the hooks once per process; they only record."""
    global _installed
    if _installed:
        return
    threads, interpreter = jax_private.thread_map(), jax_private.interpreter()
    threads._thread_map_callback = _registering(threads._thread_map_callback)
    threads._run_jaxpr = _striking_off(threads._run_jaxpr)
    interpreter.callback = _CallbackModule(interpreter.callback, interpreter)
    _installed = True
