"""host_ops' numpy rules give lax's answers, and leave to lax what they cannot give to the bit.

Each case traces a lax function, takes the equation's own parameters (as the installed JAX makes
them), and compares the rule's answer with the primitive run by XLA, bit for bit (NaN where NaN).
What only XLA can answer to the bit (float sums in its order, exp) must be left to it.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from pallas_puzzles.engine.targets.pallas_call.intercept import host_ops, weak_values

rng = np.random.default_rng(7)
F32 = np.array([[1.5, -2.25, 0.0, -0.0], [np.nan, np.inf, -np.inf, 3e38]], np.float32)
G32 = np.array([[0.5, 4.0, -1.0, 2.0], [1.0, np.nan, -np.inf, 7.0]], np.float32)
I32 = np.array([[7, -7, 0, 2**31 - 1], [-(2**31), 5, -3, 9]], np.int32)
J32 = np.array([[2, 2, -3, -1], [-1, -5, 3, 4]], np.int32)
BOOL = np.array([[True, False, True, False], [False, False, True, True]])
U8 = np.array([[0, 255, 7, 128]], np.uint8)
SUB = np.array([[1e-39, -3e-40, 1.5, 0.0]], np.float32)  # two subnormals


def _equation(function: Callable[..., Any], *args: Any) -> tuple[Any, list[Any]]:
    """The one equation `function` traces to, and its operands (constants it folded in included)."""
    jaxpr = jax.make_jaxpr(function)(*args).jaxpr
    assert len(jaxpr.eqns) == 1, jaxpr
    equation = jaxpr.eqns[0]
    by_var = {id(v): a for v, a in zip(jaxpr.invars, args)}
    return equation, [by_var[id(v)] if id(v) in by_var else v.val for v in equation.invars]


def rule_and_lax(function: Callable[..., Any], *args: Any) -> tuple[Any, Any]:
    """(the rule's answer, XLA's answer) for the one primitive `function` binds."""
    equation, operands = _equation(function, *args)
    primitive = equation.primitive
    rule = host_ops.rules().get(primitive.name)
    computes = primitive.name not in host_ops.MOVES
    ours = None if rule is None else host_ops.answer(rule, operands, equation.params, primitive.multiple_results,
                                                     computes)
    theirs = primitive.bind(*map(jnp.asarray, operands), **equation.params)
    return ours, theirs


def _as_list(value: Any) -> list[np.ndarray]:
    return [np.asarray(v) for v in value] if isinstance(value, (list, tuple)) else [np.asarray(value)]


def _window(x: Any, starts: Any, sizes: Any) -> Any:
    """lax.dynamic_slice as the primitive alone (no wrapping of negative starts before it)."""
    return lax.dynamic_slice(x, starts, sizes, allow_negative_indices=False)


def _update(x: Any, update: Any, starts: Any) -> Any:
    return lax.dynamic_update_slice(x, update, starts, allow_negative_indices=False)


def _shifted_by_every_amount(dtype: Any) -> tuple[np.ndarray, np.ndarray]:
    """(values, amounts): each of a few values (the extremes among them) shifted by each amount from
    within the width to past it, -1 too (read as unsigned: past it)."""
    info, bits = np.iinfo(dtype), np.dtype(dtype).itemsize * 8
    values = np.array([info.min, info.min + 1, 0, 1, 5, info.max], dtype)
    amounts = np.array([0, 1, bits - 1, bits, bits + 1, 100, -1], np.int64).astype(dtype)
    return np.broadcast_to(values, (amounts.size, values.size)).copy(), np.repeat(amounts[:, None], values.size, 1)


EXACT = [
    ("add f32", lax.add, F32, G32), ("sub i32", lax.sub, I32, J32), ("mul i32 wraps", lax.mul, I32, J32),
    ("mul f32", lax.mul, F32, G32), ("max f32 nan", lax.max, F32, G32), ("min i32", lax.min, I32, J32),
    ("eq", lax.eq, F32, G32), ("ne nan", lax.ne, F32, F32), ("lt", lax.lt, I32, J32), ("ge", lax.ge, F32, G32),
    ("and bool", lax.bitwise_and, BOOL, BOOL[::-1]), ("or i32", lax.bitwise_or, I32, J32),
    ("xor", lax.bitwise_xor, I32, J32), ("not bool", lax.bitwise_not, BOOL), ("not u8", lax.bitwise_not, U8),
    ("neg i32", lax.neg, J32), ("div i32 toward zero", lax.div, I32, J32),
    ("rem i32 sign of dividend", lax.rem, I32, J32), ("sign i32", lax.sign, I32),
    ("abs i32", lax.abs, J32), ("shift left", lax.shift_left, I32, np.full_like(I32, 3)),
    ("shift right logical", lax.shift_right_logical, I32, np.full_like(I32, 4)),
    ("shift right arithmetic", lax.shift_right_arithmetic, I32, np.full_like(I32, 31)),
    *((f"{how.__name__} {np.dtype(dtype).name} past the width", how, *_shifted_by_every_amount(dtype))
      for how in (lax.shift_left, lax.shift_right_logical, lax.shift_right_arithmetic)
      for dtype in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32)),
    ("convert i32 -> f32", lambda x: lax.convert_element_type(x, np.float32), I32),
    ("convert f32 -> i32 in range", lambda x: lax.convert_element_type(x, np.int32), G32[:, :1] * -3.7),
    ("convert i32 -> u8 wraps", lambda x: lax.convert_element_type(x, np.uint8), I32),
    ("convert f32 -> bool", lambda x: lax.convert_element_type(x, np.bool_), F32),
    ("convert bool -> i32", lambda x: lax.convert_element_type(x, np.int32), BOOL),
    ("broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (3, 2, 4), (1, 2)), F32),
    ("broadcast a scalar", lambda x: lax.broadcast_in_dim(x, (2, 3), ()), np.float32(2.5)),
    ("concatenate", lambda x, y: lax.concatenate([x, y, x], 1), F32, G32),
    ("reduce_max", lambda x: lax.reduce_max(x, (1,)), F32), ("reduce_min i32", lambda x: lax.reduce_min(x, (0,)), I32),
    ("reduce_sum i32 wraps", lambda x: lax.reduce_sum(x, (0, 1)), I32),
    ("reduce_or", lambda x: lax.reduce_or(x, (0,)), BOOL), ("reduce_and", lambda x: lax.reduce_and(x, (1,)), BOOL),
    ("select_n bool", lambda p, a, b: lax.select_n(p, a, b), BOOL, F32, G32),
    ("select_n int", lambda p, a, b, c: lax.select_n(p, a, b, c), np.array([[0, 1, 2, 1], [2, 2, 0, 0]], np.int32),
     F32, G32, -F32),
    ("iota", lambda: lax.broadcasted_iota(np.int32, (3, 5), 1)),
    ("slice strided", lambda x: lax.slice(x, (0, 1), (2, 4), (1, 2)), F32),
    ("squeeze", lambda x: lax.squeeze(x, (0,)), U8), ("reshape", lambda x: lax.reshape(x, (4, 2)), I32),
    ("transpose", lambda x: lax.transpose(x, (1, 0)), F32),
    ("pad", lambda x: lax.pad(x, np.float32(-1), ((1, 0, 0), (0, 2, 0))), F32),
    ("dot_general int8 -> int32", lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ())),
                                                               preferred_element_type=np.int32),
     rng.integers(-128, 128, (3, 5)).astype(np.int8), rng.integers(-128, 128, (5, 4)).astype(np.int8)),
    ("clamp i32", lambda lo, x, hi: lax.clamp(lo, x, hi), np.int32(-3), I32, np.int32(6)),
    ("unstack", lambda x: lax.unstack(x, 1) if hasattr(lax, "unstack") else None, F32),
    ("dynamic_slice", lambda x, i, j: _window(x, (i, j), (1, 3)), F32, np.int32(1), np.int32(1)),
    ("dynamic_slice clamps a window past the end", lambda x, i, j: _window(x, (i, j), (2, 3)), I32,
     np.int32(1), np.int32(3)),
    ("dynamic_slice clamps a negative start", lambda x, i: _window(x, (i, np.int32(0)), (1, 4)), F32, np.int32(-3)),
    ("dynamic_slice by unsigned starts", lambda x, i: _window(x, (i, i), (1, 2)), U8, np.uint32(7)),
    ("dynamic_update_slice", lambda x, u, i, j: _update(x, u, (i, j)), F32, G32[:1, :2], np.int32(1), np.int32(1)),
    ("dynamic_update_slice clamps", lambda x, u, i: _update(x, u, (i, i)), I32, J32[:, :3], np.int32(-4)),
    ("a dynamic slice moves subnormals", lambda x, i: _window(x, (np.int32(0), i), (1, 2)), SUB, np.int32(1)),
    ("a select moves subnormals as they are", lambda p, a, b: lax.select_n(p, a, b), BOOL[:1], SUB, -SUB),
    ("so do broadcasts", lambda x: lax.broadcast_in_dim(x, (2, 1, 4), (1, 2)), SUB),
    ("and pads", lambda x: lax.pad(x, np.float32(-1e-39), ((1, 0, 0), (0, 1, 0))), SUB),
]

@pytest.mark.parametrize("case", EXACT, ids=[c[0] for c in EXACT])
def test_exact_rules_give_lax_answer_to_the_bit(case):
    _, function, *args = case
    if function(*map(jnp.asarray, args)) is None:
        pytest.skip("this jax has no lax.unstack")
    ours, theirs = rule_and_lax(function, *args)
    assert ours is not None, "the rule left a case it should answer to lax"
    for mine, lax_value in zip(_as_list(ours), _as_list(theirs), strict=True):
        assert mine.dtype == lax_value.dtype and mine.shape == lax_value.shape
        if mine.dtype.kind == "f":  # the same bits, so -0.0 and NaN count
            assert np.array_equal(mine.view(f"u{mine.dtype.itemsize}"), lax_value.view(f"u{mine.dtype.itemsize}"))
        else:
            assert np.array_equal(mine, lax_value)


LEFT_TO_LAX = [
    ("exp", lax.exp, G32), ("exp2", lax.exp2, G32), ("float division", lax.div, F32, G32),
    ("float remainder", lax.rem, F32, G32),
    ("a subnormal product", lax.mul, np.array([1e-36], np.float32), np.array([0.007], np.float32)),
    ("a subnormal operand", lax.add, np.array([1e-39], np.float32), np.array([1.0], np.float32)),
    ("a subnormal compared", lax.eq, SUB, np.zeros_like(SUB)), ("a subnormal's maximum", lax.max, SUB, -SUB),
    ("float sum", lambda x: lax.reduce_sum(x, (1,)), G32),
    ("float dot", lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ()))), G32, G32.T),
    ("integer division by zero", lax.div, I32, np.zeros_like(I32)),
    ("integer remainder by zero", lax.rem, I32, np.zeros_like(I32)),
    ("NaN to int", lambda x: lax.convert_element_type(x, np.int32), F32),
    ("out of range to int8", lambda x: lax.convert_element_type(x, np.int8), np.array([300.0], np.float32)),
    ("to bfloat16", lambda x: lax.convert_element_type(x, jnp.bfloat16), G32),
    ("float sign", lax.sign, F32), ("float clamp", lambda lo, x, hi: lax.clamp(lo, x, hi), np.float32(0), F32,
                                    np.float32(1)),
    ("empty max", lambda x: lax.reduce_max(x, (0,)), np.zeros((0, 3), np.float32)),
    ("interior padding", lambda x: lax.pad(x, np.float32(0), ((0, 0, 1), (0, 0, 0))), F32),
    ("mixed product", lambda a, b: lax.mul(a, b, out_dtype=np.int32) if "out_dtype" in lax.mul.__doc__ else None,
     U8, U8),
]


@pytest.mark.parametrize("case", LEFT_TO_LAX, ids=[c[0] for c in LEFT_TO_LAX])
def test_what_numpy_cannot_give_to_the_bit_is_left_to_lax(case):
    _, function, *args = case
    try:
        traced = jax.make_jaxpr(function)(*args)
    except TypeError:
        pytest.skip("this jax cannot express the case")
    if not traced.jaxpr.eqns:
        pytest.skip("this jax cannot express the case")
    ours, _ = rule_and_lax(function, *args)
    assert ours is None


def literal(value: Any, dtype: Any, weak: bool = False) -> Any:
    """A JAX host literal (TypedNdArray) of this value and dtype, weakly typed or not."""
    from jax._src import literals

    return literals.TypedNdArray(np.asarray(value, dtype), jax.core.ShapedArray(np.shape(value), np.dtype(dtype),
                                                                                weak_type=weak))


def test_weakly_typed_values_are_taken_only_where_asked_and_narrow_floats_never():
    from jax._src import literals

    weak = jnp.asarray(3) + 1  # a Python int's weak type survives
    assert getattr(weak, "weak_type", False)
    weak_values = [weak, literal(1, np.int32, True), literals.TypedInt(5, np.dtype(np.int32)),
                   literals.TypedFloat(0.5, np.dtype(np.float32))]
    for value in weak_values:
        assert not host_ops.numpy_may_take(value) and not host_ops.numpy_may_take_unbound(value)
        assert host_ops.numpy_may_take(value, weak=True) and host_ops.numpy_may_take_unbound(value, weak=True)
    for value in (jnp.ones(3, jnp.bfloat16), np.ones(3, np.float16), 3, 2.5, literals.TypedInt(5, np.dtype("int64"))):
        assert not host_ops.numpy_may_take_unbound(value, weak=True), value
    assert host_ops.numpy_may_take(literal(1, np.int32, False)) and host_ops.numpy_may_take(True)
    assert host_ops.numpy_may_take(jnp.ones(3, jnp.float32)) and host_ops.numpy_may_take(np.int32(4))


def _jax_weak_type(primitive: Any, avals: list[Any], params: dict[str, Any]) -> bool:
    out = primitive.abstract_eval(*avals, **params)
    if isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], (set, frozenset)):
        out = out[0]  # (avals, effects) on the versions that return effects
    return out.weak_type


@pytest.mark.parametrize("name", sorted(weak_values.WEAK_RULES))
def test_each_weak_rule_types_results_as_jax_does(name):
    """For every mix of weak and strong operands: the weak type weak_values gives a result is JAX's."""
    import itertools

    primitive = dict((p.name, p) for p, _ in host_ops.rules_by_primitive())[name]
    unary = name in ("not", "neg", "sign", "abs", "convert_element_type")
    params_options: list[dict[str, Any]] = [{}]
    if name == "convert_element_type":
        params_options = [dict(new_dtype=np.dtype(np.float32), weak_type=w, sharding=None) for w in (False, True)]
    if name == "dynamic_slice":
        params_options = [dict(slice_sizes=(2,))]
    arity = {"dynamic_slice": 2, "dynamic_update_slice": 3}.get(name, 1 if unary else 2)
    for params in params_options:
        for weak_flags in itertools.product((False, True), repeat=arity):
            operands = [literal(1, np.int32, w) for w in weak_flags]
            if name == "select_n":
                operands = [literal(True, np.bool_, False), *operands]
            if name.startswith("dynamic"):  # an array, (an update,) then a start index
                operands[0] = literal([1, 2, 3, 4], np.int32, weak_flags[0])
                if name == "dynamic_update_slice":
                    operands[1] = literal([5, 6], np.int32, weak_flags[1])
            avals = [o.aval for o in operands]
            assert weak_values.WEAK_RULES[name](operands, params) == _jax_weak_type(primitive, avals, params), \
                (name, weak_flags, params)


def test_weak_operands_give_weak_results_in_an_eager_interpretation():
    """Index arithmetic on Python literals stays on the host, typed as JAX types it."""
    from jax._src import literals

    from pallas_puzzles.engine.targets.pallas_call.intercept import eager

    eager.install()
    five, two = literals.TypedInt(5, np.dtype(np.int32)), literal(2, np.int32, True)
    eager._state.numpy_here = True
    try:
        both_weak = lax.mul_p.bind(five, two)
        one_strong = lax.add_p.bind(np.int32(1), two)
        converted = lax.convert_element_type_p.bind(five, new_dtype=np.dtype(np.float32), weak_type=True,
                                                    sharding=None)
    finally:
        eager._state.numpy_here = False
    assert isinstance(both_weak, np.ndarray) and weak_values.is_weak(both_weak) and int(both_weak) == 10
    assert type(one_strong) is np.ndarray and one_strong.dtype == np.int32 and int(one_strong) == 3
    assert weak_values.is_weak(converted) and converted.dtype == np.float32 and float(converted) == 5.0
    int8 = jnp.ones(2, jnp.int8)  # a weak int takes the other operand's dtype, a strong int32 does not
    assert jnp.add(both_weak, int8).dtype == jnp.int8 and jnp.add(one_strong, int8).dtype == jnp.int32


def test_every_rule_names_a_primitive_of_the_installed_jax():
    found = {primitive.name for primitive, _ in host_ops.rules_by_primitive()}
    assert found == set(host_ops.rules()) - ({"unstack"} - found)
    assert {"add", "dot_general", "convert_element_type", "select_n", "broadcast_in_dim"} <= found


def test_answers_are_new_arrays_never_views():
    source = np.arange(8, dtype=np.int32).reshape(2, 4)
    for function, operand in ((lambda x: lax.reshape(x, (4, 2)), source),
                              (lambda x: lax.squeeze(x, (0,)), source[None]),
                              (lambda x: lax.slice(x, (0, 0), (1, 4)), source)):
        ours, _ = rule_and_lax(function, operand)
        assert not np.shares_memory(ours, operand)


# -- in a real check, every answer numpy gives is XLA's ------------------------------------------

SHADOWED = ["constant_add_blocked", "fused_outer_mul_relu_backward", "long_softmax", "quantized_matmul",
            "fused_layernorm", "gather_rows", "grouped_matmul"]
# pl.kernel over two TensorCores (tpu-kernel): each core runs op by op on its own thread, windows of refs
# taken by dynamic slices
SHADOWED_ON_CORES = ["tensorcore_kernel", "core_barrier_sum", "pipeline_cores", "cache_append"]


@pytest.fixture(scope="module")
def shadowed_checks() -> Any:
    """Check reference solutions with every hosted answer recomputed by JAX's own bind and compared:
    {puzzle: passed}, the number compared, and the answers that differ."""
    from helpers import COURSE
    from jax._src import core

    from pallas_puzzles.backends import INTERPRET
    from pallas_puzzles.engine.checker import check_puzzle
    from pallas_puzzles.engine.targets.pallas_call.fast_path import FastPath
    from pallas_puzzles.engine.targets.pallas_call.intercept import eager
    from pallas_puzzles.engine.targets.tpu_interpret import TpuInterpreter
    from pallas_puzzles.engine.targets.tpu_kernel.target import TpuKernel

    target, on_cores = TpuInterpreter(FastPath()), TpuKernel(FastPath())
    target.start()
    on_cores.start()
    compared: collections.Counter[str] = collections.Counter()
    differ: list[Any] = []
    hosted = host_ops.rules_by_primitive()

    def shadow(primitive: Any, ours: Any) -> Any:
        def bind(*args: Any, **params: Any) -> Any:
            out = ours(*args, **params)
            parts = out if primitive.multiple_results else [out]
            if not getattr(eager._state, "numpy_here", False) or not all(isinstance(p, np.ndarray) for p in parts):
                return out
            eager._state.numpy_here = False  # JAX's own answer, through XLA
            try:
                truth = core.Primitive.bind(primitive, *args, **params)
            finally:
                eager._state.numpy_here = True
            compared[primitive.name] += 1
            for mine, theirs in zip(parts, truth if primitive.multiple_results else [truth], strict=True):
                if weak_values.is_weak(mine) != weak_values.is_weak(theirs):
                    differ.append((primitive.name, "weak type", mine, theirs))
                theirs = np.asarray(theirs)
                if mine.dtype != theirs.dtype or mine.shape != theirs.shape or mine.tobytes() != theirs.tobytes():
                    if not (mine.dtype.kind == "f" and np.array_equal(mine, theirs, equal_nan=True)):  # NaN payloads
                        differ.append((primitive.name, mine, theirs))
            return out
        return bind

    saved = [(primitive, primitive.bind) for primitive, _ in hosted]
    for primitive, ours in saved:
        primitive.bind = shadow(primitive, ours)
    try:
        passed = {name: check_puzzle(COURSE.find(name), COURSE.find(name).solution_path, INTERPRET,
                                     fail_fast=False, target=checker).passed
                  for names, checker in ((SHADOWED, target), (SHADOWED_ON_CORES, on_cores)) for name in names}
    finally:
        for primitive, ours in saved:
            primitive.bind = ours
    return passed, compared, differ


def test_in_real_checks_every_numpy_answer_is_xlas_to_the_bit(shadowed_checks):
    passed, compared, differ = shadowed_checks
    assert all(passed.values()), passed
    assert compared.total() > 2000, "the checks ran op by op, numpy answering"
    assert compared["dynamic_slice"] > 50, "the cores' windows of refs were taken on the host"
    assert not differ, differ[:3]
