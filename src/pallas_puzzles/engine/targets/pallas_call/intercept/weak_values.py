"""Weakly typed values in host_ops' numpy answers: the interpreter's index arithmetic on Python literals.

JAX gives a Python literal (the `8` of `i * 8`) a weak type: the literal takes the other
operand's dtype, and a result is weak only when every operand was. A numpy array has no
such flag, so host_ops alone left every operation touching a weak value to XLA: about
2,000 scalar dispatches over puzzles 1-12 in one checker. Here,
for the operations whose weak type follows a simple rule, a weak operand is taken by its
value and dtype, and a weak result is handed back as JAX's own host literal
(TypedNdArray with a weak type), which JAX and host_ops take as it
takes the literals it makes itself. Every other operation still refuses a weak operand.

JAX's entry points: its host literal class, TypedNdArray (private: pallas_call/jax_private.py's
host_literal_class), and jax.core.ShapedArray, its `aval`. The rules below restate the weak-type
rules of JAX's lax: the standard one (weak when every operand is; the n-ary elementwise
operations, and dynamic_update_slice), select_n's (every case operand), dynamic_slice's (its
operand's) and convert_element_type's (its `weak_type` parameter); tests/engine/test_host_ops.py
checks each against JAX's abstract evaluation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from pallas_puzzles.engine.targets.pallas_call import jax_private

WeakRule = Callable[[Sequence[Any], dict[str, Any]], bool]


def is_weak(value: Any) -> bool:
    """Is this a weakly typed JAX value (an array or host literal made from a Python scalar)?"""
    return bool(getattr(getattr(value, "aval", None), "weak_type", False))


def _every_operand(args: Sequence[Any], params: dict[str, Any]) -> bool:
    return all(map(is_weak, args))


def _every_case(args: Sequence[Any], params: dict[str, Any]) -> bool:
    return all(map(is_weak, args[1:]))  # the predicate does not count


def _operand_only(args: Sequence[Any], params: dict[str, Any]) -> bool:
    return is_weak(args[0])  # the start indices do not count


def _as_asked(args: Sequence[Any], params: dict[str, Any]) -> bool:
    return bool(params["weak_type"])


# The elementwise operations whose result is weak exactly when every operand is (JAX's standard rule).
_STANDARD = ("add", "sub", "mul", "max", "min", "eq", "ne", "lt", "le", "gt", "ge", "and", "or", "xor", "not",
             "neg", "div", "rem", "sign", "abs", "shift_left", "shift_right_logical", "shift_right_arithmetic")

# Primitive name -> whether its result is weak, from its operands and parameters.
WEAK_RULES: dict[str, WeakRule] = {
    **dict.fromkeys(_STANDARD, _every_operand),
    "select_n": _every_case,
    "convert_element_type": _as_asked,
    "dynamic_slice": _operand_only,
    "dynamic_update_slice": _every_operand,
}


def typed(out: np.ndarray, weak: bool) -> Any:
    """The answer as JAX would type it: a weak result becomes JAX's weakly typed host literal."""
    if not weak:
        return out
    from jax import core

    return jax_private.host_literal_class()(out, aval=core.ShapedArray(out.shape, out.dtype, weak_type=True))
