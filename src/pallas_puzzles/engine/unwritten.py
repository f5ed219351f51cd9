"""What an output element holds until a kernel writes it: a value no correct kernel writes, so elements
never written show up as such in every target's comparison, not as stale or zero data."""

from __future__ import annotations

from typing import Any

import numpy as np


def sentinel_for(dtype: Any) -> Any:
    """A value no correct kernel writes: marks output elements never written."""
    import ml_dtypes  # a jax dependency; its finfo also knows bfloat16

    dt = np.dtype(dtype)
    if np.issubdtype(dt, np.floating) or dt.kind == "V" or "float" in dt.name:
        return np.asarray(float(ml_dtypes.finfo(dt).min) * 0.75, dtype=dt)
    if np.issubdtype(dt, np.integer):
        return np.asarray(np.iinfo(dt).min + 7, dtype=dt)
    return None


def fill_for(dtype: Any, override: float | None) -> Any:
    """What an output element holds until a program writes it: the sentinel, or the case's own fill."""
    if override is None or (np.isnan(override) and not _floating(dtype)):
        return sentinel_for(dtype)
    return np.asarray(override, dtype)


def _floating(dtype: Any) -> bool:
    dt = np.dtype(dtype)
    return np.issubdtype(dt, np.floating) or dt.kind == "V" or "float" in dt.name
