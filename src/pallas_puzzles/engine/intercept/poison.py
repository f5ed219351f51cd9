"""What the interpreter reads from memory no one wrote: NaN, or finite garbage.

Pallas's TPU interpreter fills block padding and fresh scratch buffers with one
value, NaN for floats. A kernel that scrubs NaNs (jnp.nan_to_num, isnan tests)
instead of masking by position passes with NaN padding, yet reads finite garbage
on hardware. The checker therefore alternates the fill per shape case between
NaN and large finite values of both signs (StrictSession.poison).

The interpreter has no public option for the value ("nan" or "zero" only), so
this replaces its one private helper, jax._src.pallas.mosaic.interpret.utils.
get_uninitialized_value, that every fill goes through (read on jax 0.10.2 and
0.12.0.1). Outside a session, or for integer and bool memory, the original
value is kept.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from pallas_puzzles.engine.intercept.session import active

GARBAGE = 1.0e6  # large, finite and exact in float32, bfloat16 and float16; far from any puzzle output

_original: Callable[..., Any] | None = None


def poison_for_case(index: int) -> float:
    """Case 0 reads NaN (the clearest symptom); later cases finite garbage, alternating in sign."""
    if index == 0:
        return math.nan
    return GARBAGE if index % 2 else -GARBAGE


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


def install() -> None:
    """Route the interpreter's fill value through the active session (idempotent)."""
    global _original
    from jax._src.pallas.mosaic.interpret import utils

    if _original is None:
        _original = utils.get_uninitialized_value
        utils.get_uninitialized_value = _poisoned_value
