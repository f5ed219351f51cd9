"""What a launcher gets from a kernel the check does not run (launcher_traffic.py traces the launcher
around its kernels): the outputs' shapes, as zeros or as an opaque operation on the operands."""

from __future__ import annotations

from typing import Any


def zeros_like(out_shape: Any) -> Any:
    """Stand-in outputs of a kernel that is not run (numpy: nothing to compile)."""
    import jax
    import numpy as np

    return jax.tree.map(lambda s: np.zeros(s.shape, s.dtype), out_shape)


def opaque(out_shape: Any, operands: Any) -> Any:
    """A kernel as an opaque operation on its operands, for a traced launcher (never run)."""
    import jax

    return jax.pure_callback(lambda *_: zeros_like(out_shape), out_shape, *operands, vmap_method="broadcast_all")


def outputs(out_shape: Any, operands: Any, traced: bool) -> Any:
    """The stand-in outputs: opaque where the launcher is being traced (`traced`), else zeros."""
    return opaque(out_shape, operands) if traced else zeros_like(out_shape)
