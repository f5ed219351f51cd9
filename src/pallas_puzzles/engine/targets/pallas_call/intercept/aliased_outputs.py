"""An output aliased to an input comes back in the shape its pallas_call declares.

JAX's TPU interpreter pads every input to whole blocks, and for an output aliased to an input
(`input_output_aliases`) it hands back that padded input buffer itself: a correct big_blocks kernel
with `input_output_aliases={1: 0}` came back (512, 1024) where it declared (300, 500), and the
checker reported a shape mistake the learner never made. A TPU returns the declared shape. So each
aliased output is cut back to its declared shape (the call's out_avals), which removes only the
interpreter's padding; an output whose shape already matches is left as it is.

The same code in jax 0.10.2 and 0.12.0.1. Private entry point: the TPU interpreter's
interpret_pallas_call (pallas_call/jax_private.py lists it with the versions checked).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from pallas_puzzles.engine.targets.pallas_call import jax_private

_installed = False


def declared(outputs: list[Any], out_avals: Any, aliases: Any) -> list[Any]:
    """`outputs` with each aliased one cut back to the shape declared for it."""
    aliased = {int(output) for _, output in aliases or ()}
    cut = []
    for index, (value, aval) in enumerate(zip(outputs, out_avals)):
        shape = tuple(aval.shape)
        if index in aliased and tuple(value.shape) != shape and len(value.shape) == len(shape):
            value = value[tuple(slice(0, size) for size in shape)]
        cut.append(value)
    return cut


def _declared_shapes(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def interpret_pallas_call(*args: Any, **kwargs: Any) -> Any:
        outputs = original(*args, **kwargs)
        return declared(list(outputs), kwargs["out_avals"], kwargs.get("input_output_aliases"))

    return interpret_pallas_call


def install() -> None:
    """Cut aliased outputs back to their declared shapes (idempotent)."""
    global _installed
    if not _installed:
        interpreter = jax_private.interpreter()
        interpreter.interpret_pallas_call = _declared_shapes(interpreter.interpret_pallas_call)
        _installed = True
