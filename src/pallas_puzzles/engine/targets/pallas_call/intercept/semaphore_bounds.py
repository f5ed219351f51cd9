"""A semaphore picked from an array of semaphores past its end: found, not clamped.

`sems.at[i]` is an index into the kernel's array of semaphore ids, which the
interpreter takes with JAX's indexing: an index past the end is clamped to the
last semaphore, so `recv_sems.at[step]` on a grid one step too long silently
shares the last step's semaphore, and the fault shows much later as a copy read
before it landed. Here every index into a semaphore array is checked as it runs:
one outside the array gives an id no semaphore has, which says what was asked
for, and the interpreter's semaphore lookup raises `SemaphoreIndex` for it.

Private names (pallas_call/jax_private.py lists them): the interpreter's module
reference `state_discharge` (whose transform_array the interpreter uses for
semaphore arrays only) and SharedMemory.get_semaphores_and_increment_clock.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

_SPAN = 256  # an index and an array's size are packed into one negative int16 id: both are far smaller


class SemaphoreIndex(IndexError):
    """A semaphore operation on `sems.at[index]` where the array holds `size` semaphores."""

    def __init__(self, index: int, size: int) -> None:
        super().__init__(f"semaphore index {index} in an array of {size} semaphore{'s' if size != 1 else ''}")
        self.index, self.size = index, size


def _encode(index: Any, size: int) -> Any:
    return -1 - (size * _SPAN + (index + _SPAN // 2) % _SPAN)


def _decode(sem_id: int) -> tuple[int, int]:
    packed = -1 - sem_id
    return packed % _SPAN - _SPAN // 2, packed // _SPAN


def _starts(indexer: Any, shape: Sequence[int]) -> list[tuple[Any, int, int]]:
    """(start, length, the dimension's size) of each dimension the indexer picks from, first dimension first."""
    found = []
    for index, size in zip(indexer.indices, shape):
        sliced = hasattr(index, "start") and hasattr(index, "size")  # a pl.ds; an array index has no .start
        start, length = (index.start, index.size) if sliced else (index, 1)
        if hasattr(start, "dtype") or isinstance(start, int):
            found.append((start, int(length), int(size)))
    return found


def _known(value: Any) -> int | None:
    """The value of an index known now (interpreting op by op), None while it is traced."""
    import jax

    return None if isinstance(value, jax.core.Tracer) else int(value)


def _traced_outside(checks: list[tuple[Any, int, int]]) -> tuple[Any, Any, Any]:
    """(whether some index lies outside, the first such index, its dimension's size), as traced values."""
    import jax.numpy as jnp

    bad: Any = False
    index: Any = 0
    size: Any = 0
    for start, length, dim in reversed(checks):  # the first dimension outside wins
        here = jnp.logical_or(jnp.asarray(start) < 0, jnp.asarray(start) + length > dim)
        bad, index, size = jnp.logical_or(here, bad), jnp.where(here, start, index), jnp.where(here, dim, size)
    return bad, index, size


class CheckedSemaphores:
    """Stands in for the interpreter's `state_discharge` module: transform_array (a semaphore id picked from
    an array) gives an impossible id, packing the index and the array's size, when the index lies outside."""

    def __init__(self, real: Any) -> None:
        self._real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def transform_array(self, x: Any, transforms: Any) -> Any:
        import jax.numpy as jnp

        result, checks = x, []
        for transform in transforms or ():
            if transform is not None and hasattr(transform, "indices") and hasattr(result, "shape"):
                picks = _starts(transform, result.shape)
                if 0 in result.shape:  # an empty array of semaphores: no index fits
                    start = picks[0][0] if picks else 0
                    return jnp.asarray(_encode(jnp.asarray(start), 0), result.dtype)
                checks += picks
            result = self._real.transform_array(result, [transform])
        if not checks or getattr(result, "shape", ()) != ():
            return result
        known = [(_known(start), length, dim) for start, length, dim in checks]
        if all(start is not None for start, _, _ in known):  # op by op: checked at once, nothing traced
            outside = next(((start, dim) for start, length, dim in known
                            if start is not None and (start < 0 or start + length > dim)), None)
            return result if outside is None else jnp.asarray(_encode(*outside), result.dtype)
        bad, index, size = _traced_outside(checks)
        return jnp.where(bad, _encode(jnp.asarray(index, result.dtype), jnp.asarray(size, result.dtype)), result)


def _refusing(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def get_semaphores(self: Any, sem_ids: Sequence[Any], *args: Any, **kwargs: Any) -> Any:
        for sem_id in sem_ids:
            if sem_id is not None and int(sem_id) < 0:
                raise SemaphoreIndex(*_decode(int(sem_id)))
        return original(self, sem_ids, *args, **kwargs)

    return get_semaphores


_installed = False


def install() -> None:
    """Check every index into a semaphore array, once per process (both TPU targets' hooks call this)."""
    global _installed
    if _installed:
        return
    from pallas_puzzles.engine.targets.pallas_call import jax_private

    ipc, memory = jax_private.interpreter(), jax_private.shared_memory().SharedMemory
    ipc.state_discharge = CheckedSemaphores(ipc.state_discharge)
    memory.get_semaphores_and_increment_clock = _refusing(memory.get_semaphores_and_increment_clock)
    _installed = True
