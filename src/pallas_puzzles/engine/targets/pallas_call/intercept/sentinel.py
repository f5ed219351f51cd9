"""A sentinel written into each output block before its first visit, so elements that no
program writes show up as such instead of as stale or zero data."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from pallas_puzzles.engine.targets.pallas_call.intercept.records import CallRecord
from pallas_puzzles.engine.unwritten import fill_for


def _first_visit_flags(grid: tuple[int, ...], maps: list[Callable[..., Any] | None],
                       prefetch_refs: Sequence[Any]) -> list[Any]:
    """Per output: whether this grid point is the first of a run of visits to its block.

    Written in lax, not jnp: traced once per case, each jnp operator is a jitted function traced
    again inside (7 % of a small check on jax 0.12), and its floor division takes five operations
    where the grid's indices, never negative, need one."""
    import jax.numpy as jnp
    from jax import lax
    from jax.experimental import pallas as pl

    if not grid:
        return [True for _ in maps]
    ids = [pl.program_id(a) for a in range(len(grid))]
    strides = [int(np.prod(grid[a + 1:])) for a in range(len(grid))]
    linear = functools.reduce(lax.add, [lax.mul(i, np.int32(s)) for i, s in zip(ids, strides)])
    first = lax.eq(linear, np.int32(0))
    # The point before this one; before the first, the last (each index at its axis's end).
    before_linear = lax.sub(linear, np.int32(1))
    previous = [lax.select(first, np.int32(g - 1), lax.rem(lax.div(before_linear, np.int32(s)), np.int32(g)))
                for s, g in zip(strides, grid)]
    flags = []
    for index_map in maps:
        if index_map is None:
            flags.append(first)
            continue
        now, before = index_map(*ids, *prefetch_refs), index_map(*previous, *prefetch_refs)
        now = now if isinstance(now, (tuple, list)) else (now,)
        before = before if isinstance(before, (tuple, list)) else (before,)
        changed = functools.reduce(lax.bitwise_or, [_differ(jnp.asarray(a), jnp.asarray(b))
                                                    for a, b in zip(now, before)], np.bool_(False))
        flags.append(lax.bitwise_or(first, changed))
    return flags


def _differ(a: Any, b: Any) -> Any:
    """a != b, for two block indices, in their common dtype (as jnp's != promotes them)."""
    import jax.numpy as jnp
    from jax import lax

    common = jnp.promote_types(a.dtype, b.dtype)
    return lax.ne(lax.convert_element_type(a, common), lax.convert_element_type(b, common))


def with_sentinel_fill(kernel: Callable[..., Any], record: CallRecord, skip_outputs: set[int],
                       fill_value: float | None = None) -> Callable[..., Any]:
    """The learner's kernel, preceded by a sentinel fill of each output block on its first visit.

    `fill_value` replaces the sentinel where a case or a probe run asks: stale data of
    ordinary size (poison.py), or a small value that an accumulating store visibly
    changes, telling "never written" from "read before written".
    """
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    n_prefetch, n_in, n_out = record.n_prefetch, len(record.inputs), len(record.outputs)
    maps = [o.index_map if o.block_shape is not None else None for o in record.outputs]

    def strict_kernel(*refs: Any) -> Any:
        prefetch_refs = refs[:n_prefetch]
        out_refs = refs[n_prefetch + n_in: n_prefetch + n_in + n_out]
        flags = _first_visit_flags(record.grid, maps, prefetch_refs)
        for position, (ref, flag) in enumerate(zip(out_refs, flags)):
            value = fill_for(ref.dtype, fill_value)
            if position in skip_outputs or value is None:
                continue

            def fill(ref: Any = ref, value: Any = value) -> None:
                ref[...] = jnp.full(ref.shape, value, ref.dtype)

            if flag is True:
                fill()
            else:
                pl.when(flag)(fill)
        return kernel(*refs)

    strict_kernel.__name__ = getattr(kernel, "__name__", "kernel")
    strict_kernel.__qualname__ = strict_kernel.__name__
    return strict_kernel
