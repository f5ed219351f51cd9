"""The strict stand-in for `pl.pallas_call`, installed in the checker process.

Learner code calls the real `pl.pallas_call` with no `interpret=` argument.
While a StrictSession is active, the stand-in records the call, checks every
index_map over the whole grid, and on the CPU runs Pallas's TPU interpreter in
strict mode (out-of-bounds reads raise, padding reads as NaN) with a sentinel
fill that exposes output elements never written. Outside a session it is a
transparent pass-through.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from pallas_puzzles.engine.targets.pallas_call.intercept import (
    aliased_outputs,
    call_reader,
    device_prefill,
    eager,
    grid_order,
    index_maps,
    kernel_launch,
    negative_indices,
    poison,
    sentinel,
    smem_scalars,
    stand_ins,
    static_slices,
    tpu_blocks,
)
from pallas_puzzles.engine.targets.pallas_call.intercept.session import active

_original_pallas_call: Callable[..., Any] | None = None


def strict_pallas_call(kernel: Callable[..., Any], *args: Any, **kwargs: Any) -> Callable[..., Any]:
    assert _original_pallas_call is not None
    session = active.session
    if session is None:
        return _original_pallas_call(kernel, *args, **kwargs)
    out_shape = args[0] if args else kwargs.get("out_shape")

    @functools.wraps(_original_pallas_call)
    def call(*operands: Any) -> Any:
        import jax

        record = call_reader.describe(kernel, kwargs, operands, out_shape, session.learner_file)
        record.operands = tuple(None if isinstance(o, jax.core.Tracer) else o for o in operands)
        session.calls.append(record)
        if session.tpu_block_rules:
            tpu_blocks.check(record)
        prefetch = call_reader.concrete_prefetch(operands, record.n_prefetch)
        if prefetch is not None:
            index_maps.check_index_maps(record, prefetch, session.allow_revisits)
        if not session.run_kernels:
            return stand_ins.outputs(out_shape, operands, session.stand_ins, record.kernel_name)
        run_kernel, run_kwargs = kernel, dict(kwargs)
        if session.backend.interprets:
            aliased = set((kwargs.get("input_output_aliases") or {}).values())
            skip = aliased | {i for i, o in enumerate(record.outputs) if o.memory_space is not None}
            if call_reader.static_grid(call_reader.grid_of(kwargs)[0]) is not None:
                run_kernel = sentinel.with_sentinel_fill(kernel, record, skip, session.sentinel)
            run_kwargs["interpret"] = session.interpret_params()
            if session.sequential:
                run_kwargs["compiler_params"] = _in_order(run_kwargs.get("compiler_params"))
            out = eager.launcher(_original_pallas_call(run_kernel, *args, **run_kwargs))(*operands)
        else:  # compiled: an output's memory holds what it held before, so it starts as the sentinel
            run_kernel, run_args, run_kwargs, run_operands = device_prefill.prefilled(
                kernel, args, run_kwargs, operands, record, session.sentinel)
            out = _original_pallas_call(run_kernel, *run_args, **run_kwargs)(*run_operands)
        record.results = tuple(leaf for leaf in jax.tree.leaves(out) if not isinstance(leaf, jax.core.Tracer))
        # Finish this call before the launcher goes on: its copies and grid points are recorded against it.
        return jax.block_until_ready(out) if record.results else out

    return call


def _in_order(params: Any) -> Any:
    """The learner's compiler params with every grid axis "arbitrary" (run in order)."""
    import dataclasses

    semantics = getattr(params, "dimension_semantics", None)
    if semantics is None or not dataclasses.is_dataclass(params):
        return params
    return dataclasses.replace(params, dimension_semantics=tuple("arbitrary" for _ in semantics))


def install() -> None:
    """Replace pl.pallas_call (idempotent). Learner modules imported later see the stand-in."""
    global _original_pallas_call
    from jax.experimental import pallas as pl

    if _original_pallas_call is None:
        _original_pallas_call = pl.pallas_call
        pl.pallas_call = strict_pallas_call
    kernel_launch.install()
    poison.install()
    static_slices.install()
    negative_indices.install()
    grid_order.install()
    smem_scalars.install()
    aliased_outputs.install()


def reset_interpreter() -> None:
    """The TPU interpreter keeps global state after an exception; clear it."""
    from jax.experimental.pallas import tpu as pltpu

    pltpu.reset_tpu_interpret_mode_state()
