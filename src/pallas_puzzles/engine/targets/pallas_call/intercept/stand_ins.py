"""What a launcher gets from a kernel the check does not run (launcher_trace.py traces the launcher
around its kernels): the outputs' shapes, as zeros or as an opaque operation on the operands."""

from __future__ import annotations

from typing import Any


def zeros_like(out_shape: Any) -> Any:
    """Stand-in outputs of a kernel that is not run (numpy: nothing to compile)."""
    import jax
    import numpy as np

    return jax.tree.map(lambda s: np.zeros(s.shape, s.dtype), out_shape)


class StandIn:
    """What a kernel becomes in a traced launcher: a callback on its operands that would give zeros
    (never run). Launcher readers tell it from the learner's own callbacks by its class."""

    def __init__(self, out_shape: Any, kernel_name: str) -> None:
        self.out_shape, self.kernel_name = out_shape, kernel_name

    def __call__(self, *_: Any) -> Any:
        return zeros_like(self.out_shape)


def opaque(out_shape: Any, operands: Any, kernel_name: str) -> Any:
    """A kernel as an opaque operation on its operands, for a traced launcher (never run)."""
    import jax

    return jax.pure_callback(StandIn(out_shape, kernel_name), out_shape, *operands, vmap_method="broadcast_all")


def outputs(out_shape: Any, operands: Any, traced: bool, kernel_name: str) -> Any:
    """The stand-in outputs: opaque where the launcher is being traced (`traced`), else zeros."""
    return opaque(out_shape, operands, kernel_name) if traced else zeros_like(out_shape)
