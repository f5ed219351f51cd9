"""Running Pallas's TPU interpreter op by op instead of compiling it, and what makes that cheap.

Interpreted, a pallas_call becomes one XLA program per shape case: the interpreter's
Python is traced into it and its memory model runs as host callbacks. That program
holds callbacks bound to the case, so JAX never reuses it, and compiling it is most
of a small check. Run eagerly, the same interpreter code executes each operation as
it goes; the small programs of those operations are compiled once and reused by
every later case and puzzle. For large grids per-op dispatch costs more than one
compile, so the caller chooses by grid size (see `eagerly`).

Private entry points (pallas_call/jax_private.py lists them, with the versions checked):
- pallas_call_p: its impl, which runs when the primitive is bound outside any trace.
  JAX's jit-compiles the bind; ours interprets with the TPU interpreter's
  interpret_pallas_call (the function the compiled path lowers, with the same
  arguments) under jax.disable_jit.
- the launcher's function: pl.pallas_call returns it wrapped in jax.jit; `launcher`
  takes its __wrapped__ so the bind happens eagerly (tracing the kernel is unchanged).
- io_callback_p: its impl compiles a program around each callback;
  during an eager interpretation ours calls the callback itself with numpy arrays, as
  the compiled program does (jax's io_callback_impl would first place every argument
  on the device), and logs a failure as io_callback_impl does, under the logger
  session_scope listens to.
- each lax primitive that engine/targets/pallas_call/intercept/host_ops.py has a numpy rule for: its impl,
  and its bind (an instance attribute shadowing Primitive.bind, so the rule answers
  before JAX canonicalises the arguments and looks for the trace); during an eager
  interpretation, with `numpy_ops`, the rule answers where it can, and everywhere else
  both hand over to JAX's own at the cost of one attribute read.
- stage_p: its impl, while interpreting: arrays placed, scalars reused (`_placed_directly`).
- the MLIR lowering's make_ir_context: every lowering makes an MLIR context,
  and each cached program keeps its own alive. jax 0.12 reuses a thread's context 10
  times (its _create_ir_context makes one), jax 0.10 never does; `reuse_contexts`
  sets the count for both.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from pallas_puzzles.engine.targets.pallas_call import jax_private

# .limit: the largest grid run eagerly here; .numpy_ops: host_ops may answer; .interpreting: inside
# an eager interpretation; .numpy_here: host_ops answer in the one running now
_state = threading.local()
_installed = False
_context_reuse = 0  # times a thread's MLIR context is reused; 0: JAX's own behaviour
_make_context: Callable[[], Any] | None = None  # JAX's function that makes a fresh context


def _limit() -> int:
    return getattr(_state, "limit", 0)


@contextlib.contextmanager
def eagerly(limit: int, numpy_ops: bool = True) -> Iterator[None]:
    """Within this block, on this thread, interpreted pallas_calls whose grid has at most `limit`
    points run op by op; larger ones (and every call when `limit` is 0) are compiled. With
    `numpy_ops`, the operations host_ops knows are computed with numpy as they run."""
    previous = _limit(), getattr(_state, "numpy_ops", False)
    _state.limit, _state.numpy_ops = limit, numpy_ops
    try:
        yield
    finally:
        _state.limit, _state.numpy_ops = previous


def interpreting() -> bool:
    """Is this thread inside an eager interpretation?"""
    return bool(getattr(_state, "interpreting", 0))


@contextlib.contextmanager
def joined(limit: int, numpy_ops: bool) -> Iterator[None]:
    """Make another thread part of the eager interpretation that started it (a simulated core
    run eagerly by eager_cores.py): there nothing is traced, so numpy may answer throughout."""
    _state.limit, _state.numpy_ops = limit, numpy_ops
    _state.interpreting, _state.numpy_here = 1, numpy_ops
    try:
        yield
    finally:
        _state.interpreting, _state.numpy_here = 0, False


def settings() -> tuple[int, bool]:
    """This thread's (grid limit, numpy_ops), for a thread that joins its interpretation."""
    return _limit(), getattr(_state, "numpy_ops", False)


def launcher(call: Callable[..., Any]) -> Callable[..., Any]:
    """The function pl.pallas_call returned, without its jax.jit where calls may run eagerly."""
    return getattr(call, "__wrapped__", call) if _limit() else call


def grid_points(grid_mapping: Any, args: Sequence[Any] = ()) -> float:
    """How many grid points a call runs. A size given at run time is the call's leading operand:
    read when it holds a value (an eager call), infinite when it is traced."""
    dynamic = iter(args[: grid_mapping.num_dynamic_grid_bounds])
    sizes = [size if isinstance(size, int) else next(dynamic, None) for size in grid_mapping.grid]
    try:
        return math.prod(int(size) for size in sizes)  # type: ignore[arg-type]
    except TypeError:  # a traced size (JAX raises a TypeError of its own), or None: not known yet
        return math.inf


def _interpret_eagerly(original: Callable[..., Any]) -> Callable[..., Any]:
    import jax
    from jax.experimental.pallas.tpu import InterpretParams

    interpreter = jax_private.interpreter()

    def impl(*args: Any, interpret: Any = None, **params: Any) -> Any:
        if not isinstance(interpret, InterpretParams) or grid_points(params["grid_mapping"], args) > _limit():
            return original(*args, interpret=interpret, **params)
        _state.interpreting = getattr(_state, "interpreting", 0) + 1
        outer_numpy = getattr(_state, "numpy_here", False)
        _state.numpy_here = getattr(_state, "numpy_ops", False) and _one_core(interpret, params.get("mesh"))
        try:
            with jax.disable_jit():
                out = interpreter.interpret_pallas_call(*args, interpret_params=interpret, **params)
        finally:
            _state.interpreting -= 1
            _state.numpy_here = outer_numpy
        # The interpreter hands back its callbacks' numpy results: make them arrays, as the bind promises.
        return [jax.device_put(value) for value in out]

    return impl


def _one_core(interpret: Any, mesh: Any) -> bool:
    """Does the interpreter run this call's grid on one core? On more it traces each core's loop
    (thread_map), and that trace indexes values computed before it: numpy arrays cannot be indexed
    by a traced index, so numpy stays out of such calls (a core_map's mesh sets the count itself)."""
    return mesh is None and getattr(interpret, "num_cores_or_threads", 1) == 1


def _call_back_directly(original: Callable[..., Any]) -> Callable[..., Any]:
    import numpy as np
    from jax import tree_util

    logger = jax_private.callback_logger()

    def impl(*args: Any, **params: Any) -> Any:
        if not getattr(_state, "interpreting", 0):
            return original(*args, **params)
        try:
            return tree_util.tree_map(np.asarray, params["callback"](*map(np.asarray, args)))
        except BaseException:
            logger.exception("jax.io_callback failed")
            raise

    return impl


def _on_the_host(primitive: Any, rule: Callable[..., Any]) -> Callable[..., Any]:
    """The primitive's impl, answered by a host_ops rule inside an eager interpretation where it can;
    its bind, likewise, is given the rule's answer before JAX's bind runs. Where weak_values knows how
    the result's weak type follows, weakly typed operands are taken too and a weak result is typed."""
    import functools

    from pallas_puzzles.engine.targets.pallas_call.intercept.host_ops import (
        MOVES,
        answer,
        numpy_may_take,
        numpy_may_take_unbound,
    )
    from pallas_puzzles.engine.targets.pallas_call.intercept.weak_values import WEAK_RULES, typed

    many = primitive.multiple_results
    computes = primitive.name not in MOVES
    weak_rule = WEAK_RULES.get(primitive.name)

    def answered_first(jax_way: Callable[..., Any], may_take: Callable[[Any], bool]) -> Callable[..., Any]:
        if weak_rule is not None:
            may_take = functools.partial(may_take, weak=True)

        def hosted(*args: Any, **params: Any) -> Any:
            if getattr(_state, "numpy_here", False) and all(map(may_take, args)):
                out = answer(rule, args, params, many, computes)
                if out is not None:
                    return out if weak_rule is None else typed(out, weak_rule(args, params))
            return jax_way(*args, **params)

        return hosted

    # The bind first: JAX's would canonicalise (64-bit values become 32-bit), find the trace and reach
    # the impl 7 us later; it takes only values already canonical. An instance attribute: found before
    # Primitive.bind.
    primitive.bind = answered_first(primitive.bind, numpy_may_take_unbound)
    return answered_first(primitive.impl, numpy_may_take)


# Scalars staged during eager interpretations, by dtype, bits, weak type and device: a JAX array never changes,
# so one array can stand for every staging of the same scalar (grid indices, loop counters, flags).
_staged_scalars: dict[tuple[Any, ...], Any] = {}
STAGED_SCALARS_KEPT = 4096


def _placed_directly(original: Callable[..., Any]) -> Callable[..., Any]:
    """stage's impl. jnp functions lift the numpy arrays they are given into JAX arrays with it, and
    JAX compiles an identity program per shape to do so: the interpreter pads every case's output
    buffers with jnp.pad, a program per case. Inside an eager interpretation such an array is placed
    with jax.device_put instead: the same array, no program. A scalar (the interpreter stages about
    1,500 over puzzles 1-12, 20-40 us each) is placed once per value and then reused; placed, not staged
    JAX's way, because each scalar type's first program cost a checker 5-6 ms (`_placed_as_staged`)."""
    import jax
    import numpy as np

    from pallas_puzzles.engine.targets.pallas_call.intercept.host_ops import numpy_may_take

    def impl(value: Any) -> Any:
        if not getattr(_state, "interpreting", 0):
            return original(value)
        if isinstance(value, np.ndarray) and value.ndim and numpy_may_take(value):
            return jax.device_put(np.asarray(value))
        key = _scalar_key(value)
        if key is None:
            return original(value)
        key += (jax.config.jax_default_device,)  # a notebook may place its values elsewhere
        staged = _staged_scalars.get(key)
        if staged is None:
            if len(_staged_scalars) >= STAGED_SCALARS_KEPT:
                _staged_scalars.clear()
            staged = _staged_scalars[key] = _placed_as_staged(value, original)
        return staged

    return impl


def _placed_as_staged(value: Any, original: Callable[[Any], Any]) -> Any:
    """The array stage makes of a scalar, made by jax.device_put: the same bits, dtype and weak type
    (checked against the type JAX gives the value), with no program compiled; JAX's own stage where
    the two would differ."""
    import jax

    placed = jax.device_put(value)
    expected = jax.typeof(value)
    if placed.dtype == expected.dtype and placed.weak_type == expected.weak_type and placed.shape == ():
        return placed
    return original(value)


def _scalar_key(value: Any) -> tuple[Any, ...] | None:
    """A scalar's dtype, bits and weak type (None for anything else): -0.0 and 0.0 are two scalars."""
    import numpy as np

    from pallas_puzzles.engine.targets.pallas_call.intercept.weak_values import is_weak

    if type(value) is bool:
        return (bool, value)
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return (value.dtype, value.tobytes(), is_weak(value))
    return None


def _reused_context() -> Any:
    assert _make_context is not None
    held = getattr(_state, "context", None)
    if held is not None and held[1] < _context_reuse:
        _state.context = (held[0], held[1] + 1)
        return held[0]
    context = _make_context()
    _state.context = (context, 0)
    return context


def reuse_contexts(times: int) -> None:
    """Let each thread reuse its MLIR context `times` times (0: as JAX does by itself)."""
    global _context_reuse
    _context_reuse = times
    _state.context = None


def install() -> None:
    """Install the hooks (idempotent); they change nothing outside `eagerly` and `reuse_contexts`."""
    global _installed, _make_context
    if _installed:
        return
    from pallas_puzzles.engine.targets.pallas_call.intercept import host_ops

    pallas_call, callback, core, mlir = (jax_private.pallas_call(), jax_private.callback(), jax_private.core(),
                                         jax_private.mlir())
    pallas_call.pallas_call_p.def_impl(_interpret_eagerly(pallas_call.pallas_call_p.impl))
    callback.io_callback_p.def_impl(_call_back_directly(callback.io_callback_p.impl))
    for primitive, rule in host_ops.rules_by_primitive():
        primitive.def_impl(_on_the_host(primitive, rule))
    core.stage_p.def_impl(_placed_directly(core.stage_p.impl))
    jax_make_context = mlir.make_ir_context
    _make_context = getattr(mlir, "_create_ir_context", jax_make_context)

    def make_ir_context() -> Any:
        return _reused_context() if _context_reuse else jax_make_context()

    mlir.make_ir_context = make_ir_context
    _installed = True
