"""A strict stand-in for ``pl.pallas_call`` used while a puzzle is checked.

Learner code calls the real ``pl.pallas_call`` with no ``interpret=`` argument.
The worker replaces ``jax.experimental.pallas.pallas_call`` with
:func:`strict_pallas_call`, which, while a :class:`StrictSession` is active:

* records the call (grid, BlockSpecs, the learner's source lines) so faults
  can be explained in terms of blocks;
* checks every BlockSpec's index_map over the whole grid before anything runs:
  block indices outside the array, and output blocks that two grid points
  write (a race on a GPU, a silent overwrite on a TPU);
* on the interpret backend, runs Pallas's TPU interpreter in its strict mode
  (out-of-bounds reads raise instead of clamping, padding reads as NaN) and
  fills each output block with a sentinel before its first visit, so output
  elements that no program writes are caught instead of showing stale data.

Outside a session the wrapper is a transparent pass-through.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import linecache
import logging
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pallas_puzzles.results import Finding, SourceLine

MAX_GRID_POINTS_CHECKED = 50_000


class StrictViolation(Exception):
    """A fault found before or while a kernel runs, already explained."""

    def __init__(self, finding: Finding) -> None:
        super().__init__(finding.title)
        self.finding = finding


def sentinel_for(dtype: Any) -> Any:
    """A value no correct kernel writes: marks output elements never written."""
    import ml_dtypes  # a jax dependency; its finfo also knows bfloat16

    dt = np.dtype(dtype)
    if np.issubdtype(dt, np.floating) or dt.kind == "V" or "float" in dt.name:
        return np.asarray(float(ml_dtypes.finfo(dt).min) * 0.75, dtype=dt)
    if np.issubdtype(dt, np.integer):
        return np.asarray(np.iinfo(dt).min + 7, dtype=dt)
    return None


@dataclass
class BlockInfo:
    """One operand's BlockSpec, as the learner wrote it."""

    name: str
    role: str  # "input" or "output"
    array_shape: tuple[int, ...]
    block_shape: tuple[int, ...] | None  # None: the whole array is one block
    index_map: Callable[..., Any] | None
    index_map_line: SourceLine | None
    memory_space: Any = None
    block_dims: list[tuple[str, int]] | None = None
    covered: np.ndarray | None = None  # outputs: elements some grid point's block covers


@dataclass
class CallRecord:
    kernel_name: str
    kernel_line: SourceLine | None
    call_line: SourceLine | None
    grid: tuple[int, ...]
    inputs: list[BlockInfo]
    outputs: list[BlockInfo]


@dataclass
class StrictSession:
    """Settings and records for one shape case of one check."""

    backend: str
    learner_file: str
    allow_revisits: bool = False
    calls: list[CallRecord] = field(default_factory=list)
    grid_points: list[tuple[int, ...]] = field(default_factory=list)
    callback_errors: list[BaseException] = field(default_factory=list)

    def record_grid_point(self, token: Any, grid_point: Any, core: Any) -> Any:
        self.grid_points.append(tuple(int(v) for v in np.asarray(grid_point).ravel()))
        return token

    def interpret_params(self) -> Any:
        from jax.experimental.pallas import tpu as pltpu

        return pltpu.InterpretParams(
            out_of_bounds_reads="raise",
            uninitialized_memory="nan",
            grid_point_recorder=self.record_grid_point,
        )


class _ActiveSession:
    """The session being checked, process-wide.

    Not a contextvar: the interpreter's callbacks (and so JAX's error log)
    run on XLA's own threads, which do not see the checking thread's context.
    A worker checks one case at a time, so one slot is enough.
    """

    def __init__(self) -> None:
        self.session: StrictSession | None = None

    def get(self) -> StrictSession | None:
        return self.session


_active = _ActiveSession()


class _CallbackErrorCatcher(logging.Handler):
    """JAX logs the original exception of a failed io_callback; keep it."""

    def emit(self, record: logging.LogRecord) -> None:
        session = _active.get()
        if session is not None and record.exc_info and record.exc_info[1] is not None:
            session.callback_errors.append(record.exc_info[1])


class session_scope:
    """Context manager that activates a session and silences JAX's callback log."""

    def __init__(self, session: StrictSession) -> None:
        self.session = session
        self._handler = _CallbackErrorCatcher()
        self._logger = logging.getLogger("jax._src.callback")

    def __enter__(self) -> StrictSession:
        self._previous = _active.session
        _active.session = self.session
        self._saved = (self._logger.propagate, self._logger.level)
        self._logger.addHandler(self._handler)
        self._logger.propagate = False
        self._logger.setLevel(logging.ERROR)
        return self.session

    def __exit__(self, *exc: object) -> None:
        self._logger.removeHandler(self._handler)
        self._logger.propagate, level = self._saved
        self._logger.setLevel(level)
        _active.session = self._previous


# --------------------------------------------------------------------------
# Source lines


def source_of(fn: Any) -> SourceLine | None:
    """Where a function (kernel, index_map lambda) was defined."""
    try:
        fn = inspect.unwrap(fn)
        while isinstance(fn, functools.partial):
            fn = fn.func
        code = fn.__code__
    except (AttributeError, ValueError):
        return None
    return make_line(code.co_filename, code.co_firstlineno, code.co_name)


def make_line(filename: str, lineno: int, function: str = "") -> SourceLine:
    text = linecache.getline(filename, lineno).strip()
    return SourceLine(file=filename, line=lineno, text=text, function=function)


def learner_call_site(learner_file: str) -> SourceLine | None:
    """The innermost frame of the learner's file on the current stack."""
    frame = sys._getframe(1)
    target = str(Path(learner_file).resolve())
    while frame is not None:
        if str(Path(frame.f_code.co_filename).resolve()) == target:
            return make_line(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)
        frame = frame.f_back
    return None


# --------------------------------------------------------------------------
# Reading the learner's pallas_call arguments


def _is_block_spec(obj: Any) -> bool:
    return type(obj).__name__ == "BlockSpec"


def _is_no_block_spec(obj: Any) -> bool:
    return type(obj).__name__ == "NoBlockSpec"


def _flatten_specs(specs: Any) -> list[Any] | None:
    import jax

    if _is_no_block_spec(specs):
        return None
    return jax.tree.leaves(specs, is_leaf=lambda s: s is None or _is_block_spec(s))


def _block_dims(block_shape: Sequence[Any]) -> list[tuple[str, int]] | None:
    """(kind, size) per dimension: kind is "blocked" or "squeezed"; None if unsupported."""
    dims = []
    for entry in block_shape:
        kind_name = type(entry).__name__
        if entry is None or kind_name == "Squeezed":
            dims.append(("squeezed", 1))
        elif isinstance(entry, (int, np.integer)):
            dims.append(("blocked", int(entry)))
        elif kind_name == "Blocked":
            dims.append(("blocked", int(entry.block_size)))
        else:  # Element, BoundedSlice: element offsets, left to the interpreter
            return None
    return dims


def _grid_of(kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], Any, Any, int, Any]:
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
    return tuple(grid or ()), in_specs, out_specs, n_prefetch, semantics


def _ref_names(kernel: Callable[..., Any], count: int) -> list[str]:
    try:
        params = list(inspect.signature(kernel).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return [names[i] if i < len(names) else f"ref{i}" for i in range(count)]


def _static_grid(grid: tuple[Any, ...]) -> tuple[int, ...] | None:
    try:
        return tuple(int(g) for g in grid)
    except (TypeError, ValueError):  # a traced grid size: nothing to enumerate
        return None


# --------------------------------------------------------------------------
# Static checks of index maps over the whole grid


def _evaluate(index_map: Callable[..., Any], point: tuple[int, ...], prefetch: Sequence[Any]) -> tuple[int, ...]:
    out = index_map(*point, *prefetch)
    if not isinstance(out, (tuple, list)):
        out = (out,)
    return tuple(int(np.asarray(v)) for v in out)


def _block_index_finding(info: BlockInfo, record: CallRecord, point: tuple[int, ...], index: tuple[int, ...],
                         dim: int, size: int) -> Finding:
    extent = info.array_shape[dim]
    start = index[dim] * size
    last_valid = max(-(-extent // size) - 1, 0)
    where = tuple(x for x in (info.index_map_line, record.call_line) if x is not None)
    return Finding(
        kind="oob-block",
        title=(f"{info.role.capitalize()} {info.name}: block index {index} at grid point {point} "
               f"lies outside the array."),
        explanation=(
            f"Along dimension {dim} a block holds {size} element(s), so block {index[dim]} starts at "
            f"element {start}; {info.name} has only {extent} there, so valid block indices run "
            f"0..{last_valid}. The index_map returns block numbers, not element offsets, and the "
            f"grid should have pl.cdiv(size, block) steps."
        ),
        where=where,
        grid_point=point,
        array=info.name,
    )


def check_index_maps(record: CallRecord, prefetch: Sequence[Any], semantics: Any,
                     allow_revisits: bool) -> None:
    """Raise StrictViolation for the first bad block index or double write."""
    grid = record.grid
    if not grid:
        return
    total = int(np.prod(grid))
    if total > MAX_GRID_POINTS_CHECKED:
        return
    points = list(itertools.product(*(range(g) for g in grid)))
    for info in record.inputs + record.outputs:
        if info.index_map is None or info.block_shape is None or info.memory_space is not None:
            continue
        dims = info.block_dims
        if dims is None:
            continue
        visits: dict[tuple[int, ...], list[int]] = {}
        complete = True
        for order, point in enumerate(points):
            try:
                index = _evaluate(info.index_map, point, prefetch)
            except Exception:  # an index_map we cannot evaluate eagerly: the interpreter checks it
                complete = False
                break
            if len(index) != len(dims):
                complete = False
                break
            for d, ((_kind, size), i) in enumerate(zip(dims, index)):
                extent = info.array_shape[d]
                if i < 0 or i * size >= extent:
                    raise StrictViolation(_block_index_finding(info, record, point, index, d, size))
            if info.role == "output":
                visits.setdefault(index, []).append(order)
        if info.role == "output" and complete:
            info.covered = _coverage(info.array_shape, dims, visits)
            _check_revisits(info, record, points, visits, semantics, allow_revisits)


def _coverage(shape: tuple[int, ...], dims: list[tuple[str, int]],
              blocks: dict[tuple[int, ...], list[int]]) -> np.ndarray:
    covered = np.zeros(shape, dtype=bool)
    for index in blocks:
        covered[tuple(slice(i * size, (i + 1) * size) for i, (_, size) in zip(index, dims))] = True
    return covered


def _check_revisits(info: BlockInfo, record: CallRecord, points: list[tuple[int, ...]],
                    visits: dict[tuple[int, ...], list[int]], semantics: Any, allow_revisits: bool) -> None:
    for block, orders in visits.items():
        if len(orders) < 2:
            continue
        first, second = points[orders[0]], points[orders[1]]
        consecutive = all(b - a == 1 for a, b in zip(orders, orders[1:]))
        where = tuple(x for x in (info.index_map_line, record.call_line) if x is not None)
        if not consecutive:
            later = next(points[b] for a, b in zip(orders, orders[1:]) if b - a != 1)
            raise StrictViolation(Finding(
                kind="revisit",
                title=f"Output {info.name}: block {block} is written at grid points {first} and {later}, with other blocks in between.",
                explanation=(
                    "Pallas copies an output block back to memory when the block index changes, so "
                    "coming back to a block later overwrites what was written before. Make the "
                    "index_map give every grid point its own output block, or keep the revisits "
                    "consecutive (the reduction axis last in the grid)."
                ),
                where=where, grid_point=later, array=info.name,
            ))
        changing_axes = [a for a in range(len(first)) if first[a] != second[a]]
        declared = tuple(semantics) if semantics else ()
        arbitrary = bool(declared) and all(
            a < len(declared) and "arbitrary" in str(declared[a]).lower() for a in changing_axes
        )
        if not (arbitrary or (allow_revisits and not declared)):
            axis_text = ", ".join(str(a) for a in changing_axes)
            raise StrictViolation(Finding(
                kind="race",
                title=f"Output {info.name}: grid points {first} and {second} both write block {block}.",
                explanation=(
                    f"Grid axis {axis_text} does not move the output block. On a GPU every grid "
                    "point runs at the same time, so these programs race to write one block. "
                    "Give each program its own output block, or, where the puzzle asks for a "
                    "reduction over the grid, mark that axis 'arbitrary' in dimension_semantics."
                ),
                where=where, grid_point=second, array=info.name,
            ))


# --------------------------------------------------------------------------
# The sentinel fill that catches output elements never written


def _first_visit_flags(grid: tuple[int, ...], maps: list[Callable[..., Any] | None],
                       prefetch_refs: Sequence[Any]) -> list[Any]:
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    if not grid:
        return [True for _ in maps]
    ids = [pl.program_id(a) for a in range(len(grid))]
    strides = [int(np.prod(grid[a + 1:])) for a in range(len(grid))]
    linear = sum(i * s for i, s in zip(ids, strides))
    previous = [((linear - 1) // s) % g for s, g in zip(strides, grid)]
    flags = []
    for index_map in maps:
        if index_map is None:
            flags.append(linear == 0)
            continue
        now, before = index_map(*ids, *prefetch_refs), index_map(*previous, *prefetch_refs)
        now = now if isinstance(now, (tuple, list)) else (now,)
        before = before if isinstance(before, (tuple, list)) else (before,)
        changed = functools.reduce(
            jnp.logical_or, [jnp.asarray(a) != jnp.asarray(b) for a, b in zip(now, before)], jnp.asarray(False)
        )
        flags.append(jnp.logical_or(linear == 0, changed))
    return flags


def _with_sentinel_fill(kernel: Callable[..., Any], record: CallRecord, n_prefetch: int,
                        skip_outputs: set[int]) -> Callable[..., Any]:
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    n_in = len(record.inputs)
    n_out = len(record.outputs)
    maps = [o.index_map if o.block_shape is not None else None for o in record.outputs]

    def strict_kernel(*refs: Any) -> Any:
        prefetch_refs = refs[:n_prefetch]
        out_refs = refs[n_prefetch + n_in: n_prefetch + n_in + n_out]
        flags = _first_visit_flags(record.grid, maps, prefetch_refs)
        for position, (ref, flag) in enumerate(zip(out_refs, flags)):
            value = sentinel_for(ref.dtype)
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


# --------------------------------------------------------------------------
# The wrapper itself


_original_pallas_call: Callable[..., Any] | None = None


def _describe(kernel: Callable[..., Any], kwargs: dict[str, Any], operands: Sequence[Any],
              out_shape: Any, session: StrictSession) -> tuple[CallRecord, int, Any]:
    import jax

    grid, in_specs, out_specs, n_prefetch, semantics = _grid_of(kwargs)
    arrays = jax.tree.leaves(operands)
    outs = jax.tree.leaves(out_shape)
    names = _ref_names(kernel, len(arrays) + len(outs))
    flat_in = _flatten_specs(in_specs)
    flat_out = _flatten_specs(out_specs)
    blocked_arrays = arrays[n_prefetch:]
    if flat_in is None or len(flat_in) != len(blocked_arrays):
        flat_in = [None] * len(blocked_arrays)
    if flat_out is None or len(flat_out) != len(outs):
        flat_out = [None] * len(outs)

    def info(spec: Any, shape: tuple[int, ...], name: str, role: str) -> BlockInfo:
        block_shape = getattr(spec, "block_shape", None) if spec is not None else None
        index_map = getattr(spec, "index_map", None) if spec is not None else None
        item = BlockInfo(
            name=name, role=role, array_shape=tuple(int(s) for s in shape),
            block_shape=tuple(block_shape) if block_shape is not None else None,
            index_map=index_map, index_map_line=source_of(index_map) if index_map else None,
            memory_space=getattr(spec, "memory_space", None) if spec is not None else None,
        )
        if item.block_shape is not None:
            item.block_dims = _block_dims(item.block_shape)
        return item

    inputs = [info(s, a.shape, names[n_prefetch + i], "input") for i, (s, a) in enumerate(zip(flat_in, blocked_arrays))]
    outputs = [info(s, o.shape, names[len(arrays) + i], "output") for i, (s, o) in enumerate(zip(flat_out, outs))]
    record = CallRecord(
        kernel_name=getattr(kernel, "__name__", "kernel"),
        kernel_line=source_of(kernel),
        call_line=learner_call_site(session.learner_file),
        grid=_static_grid(grid) or (),
        inputs=inputs,
        outputs=outputs,
    )
    return record, n_prefetch, semantics


def _concrete_prefetch(operands: Sequence[Any], n_prefetch: int) -> list[Any] | None:
    import jax

    values = jax.tree.leaves(operands)[:n_prefetch]
    try:
        return [np.asarray(v) for v in values]
    except Exception:  # traced under jit: the interpreter will check at run time
        return None


def strict_pallas_call(kernel: Callable[..., Any], *args: Any, **kwargs: Any) -> Callable[..., Any]:
    assert _original_pallas_call is not None
    session = _active.get()
    if session is None:
        return _original_pallas_call(kernel, *args, **kwargs)
    out_shape = args[0] if args else kwargs.get("out_shape")

    @functools.wraps(_original_pallas_call)
    def call(*operands: Any) -> Any:
        record, n_prefetch, semantics = _describe(kernel, kwargs, operands, out_shape, session)
        session.calls.append(record)
        prefetch = _concrete_prefetch(operands, n_prefetch)
        if prefetch is not None:
            check_index_maps(record, prefetch, semantics, session.allow_revisits)
        run_kernel, run_kwargs = kernel, dict(kwargs)
        if session.backend == "interpret":
            aliased = set((kwargs.get("input_output_aliases") or {}).values())
            skip = aliased | {i for i, o in enumerate(record.outputs) if o.memory_space is not None}
            if _static_grid(_grid_of(kwargs)[0]) is not None:
                run_kernel = _with_sentinel_fill(kernel, record, n_prefetch, skip)
            run_kwargs["interpret"] = session.interpret_params()
        return _original_pallas_call(run_kernel, *args, **run_kwargs)(*operands)

    return call


def install() -> None:
    """Replace pl.pallas_call (idempotent). Learner modules imported later see the wrapper."""
    global _original_pallas_call
    from jax.experimental import pallas as pl

    if _original_pallas_call is None:
        _original_pallas_call = pl.pallas_call
        pl.pallas_call = strict_pallas_call


def reset_interpreter() -> None:
    """The TPU interpreter keeps global state after an exception; clear it."""
    from jax.experimental.pallas import tpu as pltpu

    pltpu.reset_tpu_interpret_mode_state()
