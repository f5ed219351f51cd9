"""host_ops' rules for the operations that only move values: copies, selects, layouts, windows.

Moving a value keeps its bits, subnormal floats included (XLA:CPU flushes those only when it
computes), so host_ops takes these operations whatever floats they carry. Each rule gives lax's
answer to the bit as a new numpy array (never a view), or None to leave the operation to JAX;
tests/engine/test_host_ops.py checks each against XLA.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np


def _broadcast_in_dim(operand: np.ndarray, *, shape: Sequence[int], broadcast_dimensions: Sequence[int],
                      **_: Any) -> Any:
    expanded = [1] * len(shape)
    for source, target in enumerate(broadcast_dimensions):
        expanded[target] = operand.shape[source]
    return np.array(np.broadcast_to(operand.reshape(expanded), tuple(shape)))


def _select_n(which: np.ndarray, *cases: np.ndarray) -> Any:
    if len(cases) == 1:
        return np.array(cases[0])
    if which.dtype == np.bool_:
        return np.where(which, cases[1], cases[0])
    return np.choose(which, cases)


def _iota(*, dtype: Any, shape: Sequence[int], dimension: int, **_: Any) -> Any:
    line = np.arange(shape[dimension], dtype=np.dtype(dtype))
    expanded = [1] * len(shape)
    expanded[dimension] = shape[dimension]
    return np.array(np.broadcast_to(line.reshape(expanded), tuple(shape)))


def _slice(operand: np.ndarray, *, start_indices: Sequence[int], limit_indices: Sequence[int],
           strides: Sequence[int] | None) -> Any:
    steps = strides or (1,) * len(start_indices)
    return np.array(operand[tuple(map(slice, start_indices, limit_indices, steps))])


def _pad(operand: np.ndarray, padding_value: np.ndarray, *, padding_config: Sequence[tuple[int, int, int]]) -> Any:
    if any(low < 0 or high < 0 or interior for low, high, interior in padding_config):
        return None
    widths = [(low, high) for low, high, _ in padding_config]
    return np.pad(operand, widths, constant_values=padding_value)


def _clamped_window(operand: np.ndarray, sizes: Sequence[int],
                    starts: Sequence[np.ndarray]) -> tuple[slice, ...] | None:
    """The window XLA's dynamic slices take: each start clamped so the window fits in the operand."""
    if len(starts) != operand.ndim or any(s.ndim or s.dtype.kind not in "iu" for s in starts):
        return None
    begins = [min(max(int(start), 0), dim - size) for start, dim, size in zip(starts, operand.shape, sizes)]
    return tuple(slice(begin, begin + size) for begin, size in zip(begins, sizes))


def _dynamic_slice(operand: np.ndarray, *starts: np.ndarray, slice_sizes: Sequence[int]) -> Any:
    window = _clamped_window(operand, slice_sizes, starts)
    return None if window is None else np.array(operand[window])


def _dynamic_update_slice(operand: np.ndarray, update: np.ndarray, *starts: np.ndarray) -> Any:
    window = _clamped_window(operand, update.shape, starts)
    if window is None or update.dtype != operand.dtype:
        return None
    out = operand.copy()
    out[window] = update
    return out


def _unstack(operand: np.ndarray, *, axis: int) -> Any:
    return [np.array(np.take(operand, i, axis=axis)) for i in range(operand.shape[axis])]


# Primitive name -> rule (host_ops.rules() takes them all, host_ops.MOVES names them).
RULES: dict[str, Callable[..., Any]] = {
    "broadcast_in_dim": _broadcast_in_dim,
    "concatenate": lambda *xs, dimension: np.concatenate(xs, axis=dimension),
    "select_n": _select_n,
    "iota": _iota,
    "slice": _slice,
    "squeeze": lambda x, *, dimensions: np.array(np.squeeze(x, axis=tuple(dimensions))),
    "reshape": lambda x, *, new_sizes, dimensions=None, **_: None if dimensions else np.array(x.reshape(new_sizes)),
    "transpose": lambda x, *, permutation: np.transpose(x, permutation).copy(),
    "pad": _pad,
    "dynamic_slice": _dynamic_slice,
    "dynamic_update_slice": _dynamic_update_slice,
    "unstack": _unstack,
}
