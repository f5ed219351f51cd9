"""What the interpreter reads from memory no one wrote: NaN, large garbage, or stale data.

Pallas's TPU interpreter fills block padding and fresh scratch buffers with one
value, NaN for floats. A kernel that scrubs NaNs (jnp.nan_to_num, isnan tests)
instead of masking by position passes with NaN padding, yet reads other values
on hardware; one that throws away "implausibly large" values of memory it never
wrote passes with any huge garbage. On hardware that memory holds stale data of
ordinary size. The checker therefore changes the fill per shape case: NaN, then
in turn +1e6, a value taken from the case's own inputs, and -1e6
(StrictSession.poison). In the stale-data cases the output blocks start out
holding that value too (StrictSession.sentinel), as a TPU's output buffers hold
the previous block's data; in the +1e6 cases they start as NaN, which a TPU's
memory may also hold: only that shows an output "cleared" with z_ref[...] * 0.

The interpreter has no public option for the value ("nan" or "zero" only), so
this replaces its one private helper, get_uninitialized_value, that every fill
goes through (pallas_call/jax_private.py, with the versions checked). Outside a
session, or for integer and bool memory, the original value is kept. A probe may
also fill float scratch alone with another value (session.scratch_fill, through
SharedMemory.allocate_buffer), to tell a carry read before it was written from
padding read.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from pallas_puzzles.engine.targets.pallas_call import jax_private
from pallas_puzzles.engine.targets.pallas_call.intercept.session import active

GARBAGE = 1.0e6  # large, finite and exact in float32, bfloat16 and float16; far from any puzzle output

_original: Callable[..., Any] | None = None


STALE_IF_NONE = 0.375  # stale data for a case whose inputs offer no float (exact in every float type)


def unwritten_memory(index: int, inputs: Sequence[np.ndarray] = ()) -> tuple[float, float | None]:
    """What memory no program wrote holds in shape case `index`: (padding and scratch, output
    blocks before their first write; None there: the sentinel that marks elements never written).

    Case 0 reads NaN (the clearest symptom); then, in turn, +1e6 with output blocks starting as NaN
    (a kernel that "clears" one by multiplying it by zero keeps the NaN), stale data, -1e6.
    """
    if index == 0:
        return math.nan, None
    turn = (index - 1) % 3
    if turn == 1:
        stale = stale_value(inputs)
        return stale, stale
    if turn == 0:
        return GARBAGE, math.nan
    return -GARBAGE, None


def stale_value(inputs: Sequence[np.ndarray]) -> float:
    """A value of ordinary size from the case's inputs: what a buffer last used for them would hold."""
    for array in inputs:
        if "float" in np.dtype(array.dtype).name and array.size:
            value = float(np.asarray(array).flat[0])
            if value != 0.0 and math.isfinite(value):
                return value
    return STALE_IF_NONE


def _poisoned_value(dtype: Any, uninitialized_memory: str) -> Any:
    assert _original is not None
    session = active.session
    value = _original(dtype, uninitialized_memory)
    if session is None or uninitialized_memory != "nan" or math.isnan(session.poison):
        return value
    import jax.numpy as jnp

    if jnp.issubdtype(dtype, jnp.floating):
        return session.poison
    return value


def _scratch_filled(original: Callable[..., Any]) -> Callable[..., Any]:
    """A probe's scratch fill (session.scratch_fill) for float buffers allocated in VMEM or SMEM.

    Those are scratch and the blocks the pipeline copies into (their first contents are
    overwritten before the kernel sees them); padding lives with the arrays in HBM and keeps
    the session's poison."""
    @functools.wraps(original)
    def allocate_buffer(self: Any, key: Any, ref_count: Any, value: Any, *args: Any, **kwargs: Any) -> Any:
        session = active.session
        fill = session.scratch_fill if session is not None else None
        if fill is not None and isinstance(key, tuple) and str(key[0]).lower() in ("vmem", "smem"):
            if np.issubdtype(np.asarray(value).dtype, np.floating):
                value = np.full(np.shape(value), fill, np.asarray(value).dtype)
        return original(self, key, ref_count, value, *args, **kwargs)

    return allocate_buffer


def install() -> None:
    """Route the interpreter's fill values through the active session (idempotent)."""
    global _original
    if _original is None:
        shared_memory, utils = jax_private.shared_memory(), jax_private.interpret_utils()
        _original = utils.get_uninitialized_value
        utils.get_uninitialized_value = _poisoned_value
        memory = shared_memory.SharedMemory
        memory.allocate_buffer = _scratch_filled(memory.allocate_buffer)
