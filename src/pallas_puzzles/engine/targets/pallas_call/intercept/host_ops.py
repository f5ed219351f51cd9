"""Common lax operations computed with numpy while the TPU interpreter runs op by op.

Run eagerly, every operation of the interpreter and of the kernel goes through XLA:
a small program per operation and per shape, traced, lowered and compiled (or read
from JAX's disk cache) the first time a puzzle's block shapes appear, then dispatched.
For a check's small arrays numpy computes the same values without any of that. An
operation is taken here only when numpy's answer is lax's to the bit; anything else
goes on to JAX unchanged:
- subnormal floats in float arithmetic: XLA:CPU flushes them to zero (not in MOVES);
- float division: XLA:CPU's differs from IEEE's in the last place (a layer norm showed it);
- float sums and dot products: XLA orders their additions its own way, and the spec's
  program is XLA's (a kernel summing in numpy's order missed that layer norm's tolerance);
- exp and the other approximated functions; dtypes numpy lacks (bfloat16 and friends);
- weakly typed values, but in the operations weak_values.py can type the result of;
- integer division or remainder by zero, float to integer conversions of values out of range,
  and every operation not in the table.

Values handed back are new numpy arrays (never views: JAX's values change under no one).

JAX's entry points: the primitives, found by name among jax.lax's (eager.py installs the rules
as their impls and binds), and one private name, the class of arrays that hold values (never a
tracer; pallas_call/jax_private.py's array_class).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from pallas_puzzles.engine.targets.pallas_call.intercept import host_moves
from pallas_puzzles.engine.targets.pallas_call.intercept.weak_values import is_weak

# dtypes numpy computes exactly as XLA's CPU backend does (no bfloat16, float16, float8: XLA widens those)
_EXACT = frozenset(map(np.dtype, ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                                  "float32", "float64")))
_EXACT_32 = frozenset(d for d in _EXACT if d.itemsize <= 4)  # what JAX's bind keeps as it is (x64 off)
_concrete: type | None = None  # jax_private.array_class(), once JAX is imported


def numpy_may_take(value: Any, dtypes: frozenset[np.dtype] = _EXACT, weak: bool = False) -> bool:
    """A value numpy may take: a numpy array, or a jax array or JAX host literal, of a plain dtype;
    weakly typed only with `weak` (for the operations weak_values knows how to type)."""
    if type(value) is np.ndarray:  # most values of an eager interpretation: the fast way
        return value.dtype in dtypes
    if type(value) is bool:  # a Python bool: JAX makes it a bool array, never weak
        return True
    if getattr(value, "dtype", None) not in dtypes:
        return False
    if isinstance(value, np.generic):
        return True
    if is_weak(value):  # JAX's literals, and arrays made from them
        return weak and (isinstance(value, (np.ndarray, int, float)) or isinstance(value, _concrete_array()))
    return isinstance(value, (np.ndarray, _concrete_array()))  # a host literal (TypedNdArray) or a value


def numpy_may_take_unbound(value: Any, weak: bool = False) -> bool:
    """The same, for a value not yet canonicalised by JAX's bind (a 64-bit value would become 32-bit)."""
    return numpy_may_take(value, _EXACT_32, weak)


def _concrete_array() -> type:
    """JAX's class of arrays with values (a tracer, a value still being traced, has none)."""
    global _concrete
    if _concrete is None:
        from pallas_puzzles.engine.targets.pallas_call import jax_private

        _concrete = jax_private.array_class()
    return _concrete


Rule = Callable[..., Any]


def answer(rule: Rule, args: Sequence[Any], params: dict[str, Any], many: bool, computes: bool = True) -> Any:
    """The rule's answer as numpy arrays (a list of them for a primitive of many results), or None.
    `computes`: the operation does float arithmetic (not only moves values, which keeps their bits)."""
    arrays = [a if type(a) is np.ndarray else np.asarray(a, dtype=getattr(a, "dtype", None)) for a in args]
    floats = [a for a in arrays if a.dtype.kind == "f"]
    if computes and any(map(_subnormal, floats)):
        return None
    if floats:
        with np.errstate(all="ignore"):  # lax says nothing of overflow or invalid values: nor does numpy here
            out = rule(*arrays, **params)
    else:  # integers wrap without a word in numpy too
        out = rule(*arrays, **params)
    if out is None:
        return None
    parts = [np.asarray(part) for part in out] if many else [np.asarray(out)]
    if computes and any(map(_subnormal, parts)):
        return None
    return parts if many else parts[0]


# A float's magnitude bits (sign cleared), and the largest a subnormal has: its exponent bits are all 0.
_MAGNITUDE = {np.dtype(np.float32): (np.uint32, 0x7FFFFFFF, 0x007FFFFF),
              np.dtype(np.float64): (np.uint64, 0x7FFFFFFFFFFFFFFF, 0x000FFFFFFFFFFFFF)}


def _subnormal(array: np.ndarray) -> bool:
    """Holds a subnormal float? XLA:CPU flushes those to zero as it computes (moving them, it keeps
    them), numpy keeps them: where one comes in or would come out, the operation is left to XLA."""
    layout = _MAGNITUDE.get(array.dtype)
    if layout is None or not array.size:
        return False  # not a float numpy computes here, or nothing in it
    unsigned, magnitude, largest = layout
    bits = np.bitwise_and(array.view(unsigned), unsigned(magnitude))
    return bool(np.any((bits != 0) & (bits <= unsigned(largest))))


def _elementwise(function: Callable[..., Any]) -> Rule:
    def rule(*args: np.ndarray, **params: Any) -> Any:
        if any(value is not None for value in params.values()):
            return None  # a mixed-dtype product (out_dtype), a chosen accuracy: lax's own
        return function(*args)

    return rule


def _int_division(numerator: np.ndarray, denominator: np.ndarray, remainder: bool) -> Any:
    if numerator.dtype.kind not in "iu" or not np.all(denominator):
        return None  # XLA's float division is not always IEEE's to the bit; its answer for a zero divisor
    if remainder:
        return np.fmod(numerator, denominator)  # C's remainder: the sign of the numerator, as lax.rem
    quotient = np.abs(numerator) // np.abs(denominator)  # lax.div rounds toward zero
    return np.where((numerator < 0) != (denominator < 0), -quotient, quotient).astype(numerator.dtype)


def _shift(operand: np.ndarray, amount: np.ndarray, how: str) -> Any:
    """XLA's shifts: an amount is read as unsigned, and one past the width shifts every bit out (the
    sign bit fills an arithmetic shift). JAX's PRNG shifts an int32 seed by 32 as it makes a key, which
    for the interpreter's grid order cost every checker one program."""
    if operand.dtype.kind not in "iu":
        return None
    size = operand.dtype.itemsize
    bits = size * 8
    past = (amount < 0) | (amount >= bits)
    within = np.where(past, 0, amount).astype(operand.dtype)
    if how == "left":
        shifted, out = np.left_shift(operand, within), np.zeros_like(operand)
    elif how == "arithmetic":
        signed = operand.astype(np.dtype(f"i{size}"))
        shifted = np.right_shift(signed, within).astype(operand.dtype)
        out = np.right_shift(signed, bits - 1).astype(operand.dtype)
    else:
        shifted = np.right_shift(operand.astype(np.dtype(f"u{size}")), within).astype(operand.dtype)
        out = np.zeros_like(operand)
    return np.where(past, out, shifted)


def _convert(operand: np.ndarray, *, new_dtype: Any, **_: Any) -> Any:
    target = np.dtype(new_dtype)  # (whether the result is weak is weak_values' business)
    if target not in _EXACT:
        return None
    if operand.dtype.kind == "f" and target.kind in "iu":
        info = np.iinfo(target)
        if not np.all(np.isfinite(operand)) or np.any(operand <= info.min - 1) or np.any(operand >= info.max + 1):
            return None  # XLA saturates or maps NaN to 0; numpy's cast is undefined there
        return np.trunc(operand).astype(target)
    if target.kind == "b":
        return operand != 0
    return operand.astype(target)


def _reduce(function: Callable[..., Any], exact_for_floats: bool = True) -> Rule:
    def rule(operand: np.ndarray, *, axes: Sequence[int], **_: Any) -> Any:
        if operand.size == 0 or (operand.dtype.kind == "f" and not exact_for_floats):
            return None  # the reduction's identity, and the order of float additions, are lax's
        return np.asarray(function(operand, axis=tuple(axes))).astype(operand.dtype)

    return rule


def _dot_general(lhs: np.ndarray, rhs: np.ndarray, *, dimension_numbers: Any, preferred_element_type: Any = None,
                 **_: Any) -> Any:
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    out = np.dtype(preferred_element_type) if preferred_element_type is not None else lhs.dtype
    if lhs.dtype != rhs.dtype or lhs.dtype.kind not in "iub" or out.kind not in "iu":
        return None  # float products are summed in XLA's order
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    lhs_names = [next(letters) for _ in range(lhs.ndim)]
    rhs_names = [next(letters) for _ in range(rhs.ndim)]
    for left, right in zip(list(lhs_contract) + list(lhs_batch), list(rhs_contract) + list(rhs_batch)):
        rhs_names[right] = lhs_names[left]
    batch = [lhs_names[d] for d in lhs_batch]
    lhs_free = [n for d, n in enumerate(lhs_names) if d not in lhs_contract and d not in lhs_batch]
    rhs_free = [n for d, n in enumerate(rhs_names) if d not in rhs_contract and d not in rhs_batch]
    spec = f"{''.join(lhs_names)},{''.join(rhs_names)}->{''.join(batch + lhs_free + rhs_free)}"
    return np.einsum(spec, lhs.astype(out), rhs.astype(out))


def _clamp(low: np.ndarray, operand: np.ndarray, high: np.ndarray) -> Any:
    if operand.dtype.kind == "f":
        return None  # NaN bounds: leave to lax
    return np.minimum(np.maximum(operand, low), high)


def _ints_only(function: Callable[..., Any]) -> Rule:
    """Floats left to lax: the sign of -0.0 and of NaN is its to give."""
    def rule(operand: np.ndarray) -> Any:
        return function(operand) if operand.dtype.kind in "iu" else None

    return rule


def rules() -> dict[str, Rule]:
    """Primitive name -> numpy rule: its result, or None to leave the operation to JAX."""
    return {
        "add": _elementwise(np.add),
        "sub": _elementwise(np.subtract),
        "mul": _elementwise(np.multiply),
        "max": _elementwise(np.maximum),
        "min": _elementwise(np.minimum),
        "eq": _elementwise(np.equal),
        "ne": _elementwise(np.not_equal),
        "lt": _elementwise(np.less),
        "le": _elementwise(np.less_equal),
        "gt": _elementwise(np.greater),
        "ge": _elementwise(np.greater_equal),
        "and": _elementwise(np.bitwise_and),
        "or": _elementwise(np.bitwise_or),
        "xor": _elementwise(np.bitwise_xor),
        "not": _elementwise(np.invert),
        "neg": _elementwise(np.negative),
        "div": lambda a, b: _int_division(a, b, remainder=False),
        "rem": lambda a, b: _int_division(a, b, remainder=True),
        "sign": _ints_only(np.sign),
        "abs": _ints_only(np.abs),
        "shift_left": lambda a, b: _shift(a, b, "left"),
        "shift_right_logical": lambda a, b: _shift(a, b, "logical"),
        "shift_right_arithmetic": lambda a, b: _shift(a, b, "arithmetic"),
        "convert_element_type": _convert,
        "reduce_sum": _reduce(lambda x, axis: np.sum(x, axis=axis, dtype=x.dtype), exact_for_floats=False),
        "reduce_max": _reduce(np.max),
        "reduce_min": _reduce(np.min),
        "reduce_or": _reduce(np.any),
        "reduce_and": _reduce(np.all),
        "dot_general": _dot_general,
        "clamp": _clamp,
        **host_moves.RULES,
    }


# Rules that only move values (copies, selects, layouts): XLA keeps a subnormal's bits there too.
MOVES = frozenset(host_moves.RULES)


def rules_by_primitive() -> list[tuple[Any, Rule]]:
    """(JAX's primitive, its rule) for every rule whose primitive the installed JAX has."""
    from jax import lax
    from jax.extend.core import Primitive

    primitives: dict[str, Any] = {}
    for value in vars(lax).values():
        if isinstance(value, Primitive):
            primitives.setdefault(value.name, value)
    return [(primitives[name], rule) for name, rule in rules().items() if name in primitives]
