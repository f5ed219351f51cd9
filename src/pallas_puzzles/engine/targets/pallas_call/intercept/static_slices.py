"""Static slices past the end of a block are out of bounds, not clamped.

`z_ref[:32] = x_ref[:32]` on a 7-element block silently becomes `[:7]` in
Pallas, the numpy way, so the kernel runs on every backend that clamps and
fails on none; the interpreter's own bounds checks only see `pl.ds`. While a
check runs, a Python slice (or integer) on a ref whose static bound lies past
the block's edge raises StaticSliceOutOfBounds instead.

Refs index through one private constructor, NDIndexer.from_indices_shape
(pallas_call/jax_private.py, with the versions checked); this wraps it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from pallas_puzzles.engine.targets.pallas_call import jax_private
from pallas_puzzles.engine.targets.pallas_call.intercept.session import active

_WRITERS = {"__setitem__", "ref_set", "ref_swap", "ref_addupdate"}
_installed = False


class StaticSliceOutOfBounds(IndexError):
    """A static index or slice bound lies past the edge of a ref."""

    def __init__(self, message: str, writing: bool) -> None:
        super().__init__(message)
        self.writing = writing


def _static_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _describe(index: Any) -> str:
    if isinstance(index, slice):
        start = "" if index.start is None else index.start
        stop = "" if index.stop is None else index.stop
        return f"{start}:{stop}"
    return str(index)


def problem(indices: Any, shape: Sequence[int]) -> str | None:
    """Why these indices reach past `shape`, or None."""
    items = indices if isinstance(indices, tuple) else (indices,)
    if any(i is ... for i in items):
        at = next(n for n, i in enumerate(items) if i is ...)
        items = items[:at] + (slice(None),) * (len(shape) - len(items) + 1) + items[at + 1:]
    for dim, (index, size) in enumerate(zip(items, shape)):
        if isinstance(index, slice) and (index.step in (None, 1)):
            start, stop = _static_int(index.start), _static_int(index.stop)
            if (stop is not None and stop > size) or (start is not None and start > size):
                return f"[{_describe(index)}] along dimension {dim}, where the block has {size} element(s)"
        elif _static_int(index) is not None and not -size <= index < size:
            return f"index {index} along dimension {dim}, where the block has {size} element(s)"
    return None


def _writing() -> bool:
    frame = sys._getframe(2)
    for _ in range(12):
        if frame is None:
            break
        if frame.f_code.co_name in _WRITERS:
            return True
        frame = frame.f_back
    return False


def install() -> None:
    """Wrap NDIndexer.from_indices_shape (idempotent); it checks only while a session is active."""
    global _installed
    if _installed:
        return
    indexing = jax_private.indexing()
    original = indexing.NDIndexer.from_indices_shape.__func__

    def checked(cls: Any, indices: Any, shape: Any) -> Any:
        if active.session is not None and all(isinstance(s, int) for s in shape):
            found = problem(indices, tuple(shape))
            if found is not None:
                writing = _writing()
                verb = "stores to" if writing else "reads"
                raise StaticSliceOutOfBounds(
                    f"The kernel {verb} {found}: a static slice past the end of a block is cut short "
                    "without a word on most backends.", writing)
        return original(cls, indices, shape)

    indexing.NDIndexer.from_indices_shape = classmethod(checked)
    _installed = True
