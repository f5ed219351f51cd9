"""On a compiled backend, every output starts as the sentinel, so elements no program writes show
as unwritten there too.

An output buffer on a GPU holds whatever its memory held before. Seen on an H100 (issue 35): a
kernel whose grid rounds down and one that stores only when it has several programs both passed,
because the elements they never wrote held the right values, left in that memory by the check's
earlier run of the same shapes. The interpreter starts every output as NaN and fills each block
with the sentinel on its first visit (sentinel.py); on hardware no code of ours runs before the
kernel, so each output is aliased instead (`input_output_aliases`) to an extra input filled with
the sentinel. The learner's kernel never sees that input: it gets the refs it declared.

Only calls of the plain form are changed (arrays as operands; in_specs and out_specs a BlockSpec
per operand, or left out); any other form runs as written, so that a mistake in the call meets
JAX's own error rather than one of ours.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

from pallas_puzzles.engine.targets.pallas_call.intercept.records import CallRecord
from pallas_puzzles.engine.unwritten import fill_for

Call = tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any], tuple[Any, ...]]


def prefilled(kernel: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
              operands: Sequence[Any], record: CallRecord, fill_value: float | None = None) -> Call:
    """(kernel, args, kwargs, operands) for the pallas_call: each output it does not alias already
    starts as the sentinel (or `fill_value`); the call as given where its form is not the plain one."""
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    unchanged: Call = (kernel, args, kwargs, tuple(operands))
    out_shape = args[0] if args else kwargs.get("out_shape")
    outs = jax.tree.leaves(out_shape)
    grid_spec = kwargs.get("grid_spec")
    holder = grid_spec if grid_spec is not None else kwargs
    in_specs = _get(holder, "in_specs")
    out_specs = _get(holder, "out_specs")
    flat_out = _per_output(out_specs, len(outs))
    plain_grid = grid_spec is None or type(grid_spec) is pl.GridSpec  # not a TPU one with scalar prefetch
    if (not plain_grid or record.n_prefetch or len(jax.tree.leaves(operands)) != len(operands)
            or flat_out is None or not _plain_inputs(in_specs, len(operands))):
        return unchanged
    taken = set(record.aliases.values())
    filled = [i for i, o in enumerate(outs)
              if i not in taken and fill_for(o.dtype, fill_value) is not None
              and (i >= len(record.outputs) or record.outputs[i].memory_space is None)]
    if not filled:
        return unchanged
    n = len(operands)
    donors = tuple(jnp.full(outs[i].shape, fill_for(outs[i].dtype, fill_value), outs[i].dtype) for i in filled)
    donor_specs = [flat_out[i] if flat_out[i] is not None else pl.BlockSpec() for i in filled]
    if _given(in_specs):
        new_in: Any = tuple(in_specs) + tuple(donor_specs)
    elif not _given(out_specs):
        new_in = in_specs  # left out on both sides: every operand, donors too, whole
    else:
        new_in = tuple(pl.BlockSpec() for _ in range(n)) + tuple(donor_specs)
    aliases = dict(kwargs.get("input_output_aliases") or {})
    aliases.update({n + k: i for k, i in enumerate(filled)})
    new_kwargs = dict(kwargs, input_output_aliases=aliases)
    if grid_spec is not None:
        new_kwargs["grid_spec"] = grid_spec = copy.copy(grid_spec)  # the learner's own is left as written
        grid_spec.in_specs = new_in
    elif new_in is not in_specs:
        new_kwargs["in_specs"] = new_in

    def learners_refs(*refs: Any) -> Any:  # the donors' refs sit between the inputs' and the outputs'
        return kernel(*refs[:n], *refs[n + len(donors):])

    learners_refs.__name__ = getattr(kernel, "__name__", "kernel")
    learners_refs.__qualname__ = learners_refs.__name__
    return learners_refs, args, new_kwargs, tuple(operands) + donors


def _get(holder: Any, name: str) -> Any:
    from jax.experimental import pallas as pl

    value = holder.get(name) if isinstance(holder, dict) else getattr(holder, name, None)
    return pl.no_block_spec if value is None else value


def _given(specs: Any) -> bool:
    from jax.experimental import pallas as pl

    return specs is not pl.no_block_spec


def _plain_inputs(in_specs: Any, count: int) -> bool:
    from jax.experimental import pallas as pl

    if not _given(in_specs):
        return True
    return (isinstance(in_specs, (list, tuple)) and len(in_specs) == count
            and all(isinstance(s, pl.BlockSpec) for s in in_specs))


def _per_output(out_specs: Any, count: int) -> list[Any] | None:
    """One BlockSpec (or None: the whole array) per output; None when out_specs has another form."""
    from jax.experimental import pallas as pl

    if not _given(out_specs):
        return [None] * count
    if isinstance(out_specs, pl.BlockSpec):
        return [out_specs] if count == 1 else None
    if isinstance(out_specs, (list, tuple)) and len(out_specs) == count and all(
            isinstance(s, pl.BlockSpec) for s in out_specs):
        return list(out_specs)
    return None
