"""Interpreter callbacks called with numpy arguments, as they use them, instead of jax arrays.

JAX's io_callback_impl places every argument of a host callback on the CPU device, as a jax
array, before calling it (its io_callback_impl, jax 0.10.2 and 0.12.0.1); the Pallas
interpreters' callbacks turn those arrays straight back into numbers and numpy arrays. The placing
took over half of an eight-device TPU run's time, and 40 % of a Mosaic GPU kernel's run (py-spy,
jax 0.12.0.1). A callback marked here is called with the numpy arrays the runtime hands over; every
other io_callback is JAX's as before.

The families hand over JAX's module (their jax_private.py lists the replaced name). PALLAS_PUZZLES_FAST=0
leaves JAX's io_callback_impl alone and marks nothing (tests/engine/test_fast_path.py compares the
verdicts both ways). Nothing here imports JAX at module level.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from pallas_puzzles import environment

MARK = "takes_numpy_arguments"

_installed = False


def enabled() -> bool:
    """Off with the rest of the fast path (PALLAS_PUZZLES_FAST=0)."""
    return not environment.FAST.turned_off()


def marked(function: Callable[..., Any]) -> Callable[..., Any]:
    """`function`, an interpreter callback, to be called with numpy arguments."""
    setattr(function, MARK, True)
    return function


def _takes_numpy(callback: Any) -> bool:
    return getattr(getattr(callback, "callback_func", None), MARK, False)


def install(jax_callbacks: Any, logger: Any) -> None:
    """Replace JAX's io_callback_impl (in `jax_callbacks`, JAX's callback module) once per process."""
    global _installed
    if _installed or not enabled():
        return
    import numpy as np
    from jax import tree_util

    original = jax_callbacks.io_callback_impl

    @functools.wraps(original)
    def io_callback_impl(*args: Any, callback: Any, **kwargs: Any) -> Any:
        if not _takes_numpy(callback):
            return original(*args, callback=callback, **kwargs)
        try:
            return tree_util.tree_map(np.asarray, callback(*args))
        except BaseException:
            logger.exception("jax.io_callback failed")  # as JAX's: the interpreter keeps the error
            raise

    jax_callbacks.io_callback_impl = io_callback_impl
    _installed = True


class MarkingCallbackModule:
    """Stands in for JAX's callback module inside an interpreter module: each callback it passes to
    io_callback is called with numpy arguments."""

    def __init__(self, real: Any) -> None:
        self._real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def io_callback(self, callback: Any, *args: Any, **kwargs: Any) -> Any:
        def numpy_callback(*call_args: Any, **call_kwargs: Any) -> Any:
            return callback(*call_args, **call_kwargs)

        return self._real.io_callback(marked(numpy_callback), *args, **kwargs)
