"""Reading a learner's `pallas_call` arguments: the grid, each operand's BlockSpec, the lines."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from pallas_puzzles.engine.learner_lines import learner_call_site, source_of
from pallas_puzzles.engine.targets.pallas_call.intercept.records import BlockInfo, CallRecord, ScratchInfo
from pallas_puzzles.results import CallLayout, OperandLayout


def _block_dims(block_shape: Sequence[Any]) -> list[int] | None:
    """Block size per dimension (1 for a squeezed one); None for element-offset dims."""
    from jax.experimental import pallas as pl

    dims = []
    for entry in block_shape:
        if entry is None or isinstance(entry, pl.Squeezed):
            dims.append(1)
        elif isinstance(entry, (int, np.integer)):
            dims.append(int(entry))
        elif isinstance(entry, pl.Blocked):
            dims.append(int(entry.block_size))
        else:  # Element, BoundedSlice: element offsets, left to the interpreter
            return None
    return dims


def _flatten_specs(specs: Any) -> list[Any] | None:
    import jax
    from jax.experimental import pallas as pl

    if isinstance(specs, type(pl.no_block_spec)):
        return None
    return jax.tree.leaves(specs, is_leaf=lambda s: s is None or isinstance(s, pl.BlockSpec))


def memory_space_name(space: Any) -> str:
    """A memory space as one lower-case word ("any", "vmem", "smem", ...); "" for none."""
    if space is None:
        return ""
    return str(getattr(space, "value", space)).lower()


def _scratch_of(kwargs: dict[str, Any]) -> list[ScratchInfo]:
    import jax

    grid_spec = kwargs.get("grid_spec")
    shapes = getattr(grid_spec, "scratch_shapes", None) if grid_spec is not None else kwargs.get("scratch_shapes")
    scratch = []
    for entry in jax.tree.leaves(shapes or (), is_leaf=lambda s: hasattr(s, "inner_aval")):
        aval = getattr(entry, "inner_aval", None)
        space = memory_space_name(getattr(entry, "memory_space", None))
        dtype = str(getattr(aval, "dtype", ""))
        if "sem" in dtype.lower() or "sem" in str(entry).lower():
            space = "semaphore"
        scratch.append(ScratchInfo(tuple(int(d) for d in getattr(aval, "shape", ())), dtype, space))
    return scratch


def grid_of(kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], Any, Any, int, tuple[Any, ...]]:
    """(grid, in_specs, out_specs, number of scalar-prefetch operands, dimension semantics)."""
    grid_spec = kwargs.get("grid_spec")
    if grid_spec is not None:
        grid = grid_spec.grid
        in_specs, out_specs = grid_spec.in_specs, grid_spec.out_specs
        n_prefetch = int(getattr(grid_spec, "num_scalar_prefetch", 0) or 0)
    else:
        grid = kwargs.get("grid", ())
        in_specs, out_specs = kwargs.get("in_specs"), kwargs.get("out_specs")
        n_prefetch = 0
    if isinstance(grid, (int, np.integer)):
        grid = (int(grid),)
    semantics = getattr(kwargs.get("compiler_params"), "dimension_semantics", None)
    return tuple(grid or ()), in_specs, out_specs, n_prefetch, tuple(semantics or ())


def static_grid(grid: tuple[Any, ...]) -> tuple[int, ...] | None:
    try:
        return tuple(int(g) for g in grid)
    except (TypeError, ValueError):  # a traced grid size: nothing to enumerate
        return None


def _ref_names(kernel: Callable[..., Any], count: int) -> list[str]:
    try:
        params = list(inspect.signature(kernel).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return [names[i] if i < len(names) else f"ref{i}" for i in range(count)]


def _block_info(spec: Any, array: Any, name: str, role: str) -> BlockInfo:
    block_shape = getattr(spec, "block_shape", None) if spec is not None else None
    index_map = getattr(spec, "index_map", None) if spec is not None else None
    info = BlockInfo(
        name=name, role=role, array_shape=tuple(int(s) for s in array.shape), dtype=str(array.dtype),
        block_shape=tuple(block_shape) if block_shape is not None else None,
        index_map=index_map, index_map_line=source_of(index_map) if index_map else None,
        memory_space=getattr(spec, "memory_space", None) if spec is not None else None,
        pipeline_mode=getattr(spec, "pipeline_mode", None) if spec is not None else None,
    )
    if info.block_shape is not None:
        info.block_dims = _block_dims(info.block_shape)
    return info


def describe(kernel: Callable[..., Any], kwargs: dict[str, Any], operands: Sequence[Any],
             out_shape: Any, learner_file: str) -> CallRecord:
    """What one pallas_call will do, in terms of the learner's names and lines."""
    import jax

    grid, in_specs, out_specs, n_prefetch, semantics = grid_of(kwargs)
    arrays = jax.tree.leaves(operands)
    outs = jax.tree.leaves(out_shape)
    scratch = _scratch_of(kwargs)
    names = _ref_names(kernel, len(arrays) + len(outs) + len(scratch))
    for info, name in zip(scratch, names[len(arrays) + len(outs):]):
        info.name = name
    flat_in = _flatten_specs(in_specs)
    flat_out = _flatten_specs(out_specs)
    blocked_arrays = arrays[n_prefetch:]
    if flat_in is None or len(flat_in) != len(blocked_arrays):
        flat_in = [None] * len(blocked_arrays)
    if flat_out is None or len(flat_out) != len(outs):
        flat_out = [None] * len(outs)
    inputs = [_block_info(s, a, names[n_prefetch + i], "input")
              for i, (s, a) in enumerate(zip(flat_in, blocked_arrays))]
    outputs = [_block_info(s, o, names[len(arrays) + i], "output")
               for i, (s, o) in enumerate(zip(flat_out, outs))]
    prefetch = [_block_info(None, a, names[i], "prefetch") for i, a in enumerate(arrays[:n_prefetch])]
    return CallRecord(
        kernel_name=getattr(kernel, "__name__", "kernel"),
        kernel_line=source_of(kernel),
        call_line=learner_call_site(learner_file),
        grid=static_grid(grid) or (),
        inputs=inputs,
        outputs=outputs,
        n_prefetch=n_prefetch,
        semantics=semantics,
        prefetch=prefetch,
        scratch=scratch,
        aliases={int(i): int(o) for i, o in dict(kwargs.get("input_output_aliases") or {}).items()},
    )


def concrete_prefetch(operands: Sequence[Any], n_prefetch: int) -> list[Any] | None:
    """The scalar-prefetch operands as numpy, or None when they are traced (under jit)."""
    import jax

    values = jax.tree.leaves(operands)[:n_prefetch]
    try:
        return [np.asarray(v) for v in values]
    except Exception:  # traced under jit: the interpreter will check at run time
        return None


def _operand_layout(info: BlockInfo, steps: int) -> OperandLayout:
    space = memory_space_name(info.memory_space) or ("smem" if info.role == "prefetch" else "")
    block: tuple[int, ...] | None = tuple(info.block_dims) if info.block_dims is not None else None
    indices = tuple(info.block_indices) if info.block_indices is not None else None
    if info.block_shape is None and not space:  # no BlockSpec: the whole array is the one block
        block, indices = info.array_shape, ((0,) * len(info.array_shape),) * steps
    if space:  # not pipelined: the kernel sees the whole operand where it lives
        block, indices = None, None
    return OperandLayout(name=info.name, role=info.role, shape=info.array_shape, dtype=info.dtype, block=block,
                         memory_space=space, block_indices=indices, index_map_line=info.index_map_line)


def _with_copies(op: OperandLayout, record: CallRecord, position: int) -> OperandLayout:
    """An operand left in HBM, with the bytes the kernel's own copies moved to or from it.

    The interpreter gives the call's inputs, then its outputs, one HBM buffer each, in order
    (the ledger keeps the order); no buffers means the kernel was not interpreted."""
    buffers = record.ledger.hbm_buffers
    if op.memory_space not in ("any", "hbm") or position >= len(buffers):
        return op
    mine = [c for c in record.ledger.started() if buffers[position] in (c.reads_hbm, c.writes_hbm)]
    where = record.kernel_line or record.call_line
    lines = mine[0].lines(where.file) if mine and where is not None else ()
    return replace(op, copied_bytes=sum(c.bytes for c in mine), copy_count=len(mine),
                   copy_line=lines[0] if lines else None)


def layout(record: CallRecord) -> CallLayout:
    """The call as plain data for results: what each grid step moves."""
    steps = int(np.prod(record.grid)) if record.grid else 1
    operands = [_operand_layout(info, steps) for info in record.prefetch]
    operands += [_with_copies(_operand_layout(info, steps), record, n)
                 for n, info in enumerate(record.inputs + record.outputs)]
    operands += [OperandLayout(name=f"scratch{i}", role="scratch", shape=s.shape, dtype=s.dtype, block=None,
                               memory_space=s.memory_space) for i, s in enumerate(record.scratch)]
    return CallLayout(kernel=record.kernel_name, grid=record.grid,
                      semantics=tuple(memory_space_name(s) for s in record.semantics),
                      operands=tuple(operands), call_line=record.call_line, kernel_line=record.kernel_line)
