"""Why a kernel's output is wrong: the cause behind a mismatch, and where it came from.

A mismatch alone says which elements are wrong. This names the grid points
whose blocks hold them and the lines that stored them, and, for a failed case,
runs the kernel once more with one thing changed to tell causes apart:
padding and unwritten memory read as zeros instead of NaN or garbage, output
blocks pre-filled with a small value instead of the huge sentinel, and (when
nothing else explains it) the "parallel" axes run in order. Only failed cases
pay for the extra run.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from pallas_puzzles.engine.compare import bad_mask
from pallas_puzzles.engine.targets.pallas_call.explain import copies, leftovers, writes
from pallas_puzzles.engine.targets.pallas_call.explain.launcher_lines import argument_line, guarding_whens, store_lines
from pallas_puzzles.engine.targets.pallas_call.intercept.call_reader import layout, memory_space_name
from pallas_puzzles.engine.targets.pallas_call.intercept.records import BlockInfo, CallRecord
from pallas_puzzles.engine.targets.pallas_call.intercept.session import StrictSession
from pallas_puzzles.engine.targets.pallas_call.probe import PROBE_FILL, probe_poison
from pallas_puzzles.engine.unwritten import fill_for
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import Finding, Mismatch
from pallas_puzzles.source_line import SourceLine

if TYPE_CHECKING:
    from pallas_puzzles.engine.targets.pallas_call.probe import Rerun

MAX_POINTS = 6

Probe = Callable[..., "Rerun | None"]  # reruns the case with StrictSession fields changed


@dataclasses.dataclass
class _Output:
    record: CallRecord
    info: BlockInfo
    lead: int  # leading (vmapped) dimensions the recorded call does not see


def _output_of(session: StrictSession, shape: tuple[int, ...]) -> _Output | None:
    found = session.output_for(shape)
    return _Output(*found) if found is not None else None


def _bad_grid_points(out: _Output, bad: np.ndarray) -> list[tuple[int, ...]]:
    """The grid points (in grid order) whose output block holds a wrong element."""
    info = out.info
    if info.block_indices is None or info.block_dims is None or not out.record.grid:
        return []
    per_example = bad.reshape((-1,) + bad.shape[out.lead:]).any(axis=0) if out.lead else bad
    dims = np.asarray(info.block_dims)
    bad_blocks = {tuple(int(v) for v in row) for row in np.argwhere(per_example) // dims}
    points = list(itertools.product(*(range(g) for g in out.record.grid)))
    blocks = [tuple(b) for b in info.block_indices]
    # A block visited by consecutive steps is copied out after the last of them: that step wrote it.
    return [p for n, (p, block) in enumerate(zip(points, blocks))
            if block in bad_blocks and (n + 1 == len(blocks) or blocks[n + 1] != block)]


def _located(m: Mismatch, out: _Output | None, bad: np.ndarray) -> Mismatch:
    if out is None:
        return m
    points = _bad_grid_points(out, bad)
    return dataclasses.replace(m, grid_points=tuple(points[:MAX_POINTS]),
                               more_grid_points=max(0, len(points) - MAX_POINTS),
                               stored_at=store_lines(out.record.kernel_line, out.info.name))


def _lines(*groups: Any) -> tuple[SourceLine, ...]:
    out: list[SourceLine] = []
    for group in groups:
        for line in (group if isinstance(group, tuple) else (group,)):
            if line is not None and line not in out:
                out.append(line)
    return tuple(out)


def _order_finding(out: _Output, m: Mismatch) -> Finding | None:
    semantics = layout(out.record).semantics
    grid = out.record.grid
    axes = [a for a, s in enumerate(semantics) if "parallel" in str(s).lower() and a < len(grid) and grid[a] > 1]
    if not axes:
        return None
    axis = axes[0]
    later = (next((p for p in m.grid_points if p[axis] > 0), None)
             or tuple(1 if a == axis else 0 for a in range(len(grid))))
    earlier = tuple(v - 1 if a == axis else v for a, v in enumerate(later))
    return Finding(
        FindingKind.ORDER,
        f"Axis {axis} is marked parallel, but step {later} reads what step {earlier} wrote: the kernel is right "
        f"when the grid runs in order and wrong when the steps of axis {axis} run in another order.",
        where=_lines(argument_line(out.record.call_line, "dimension_semantics"), m.stored_at), grid_point=later)


def _uncovered_finding(out: _Output, uncovered: np.ndarray, m: Mismatch) -> Finding:
    info = out.info
    return Finding(
        FindingKind.MISMATCH_UNWRITTEN,
        f"{int(uncovered.sum())} element(s) of {info.name} lie in no block that any grid point writes: with "
        f"blocks of {tuple(info.block_dims or ())}, a grid of {out.record.grid} does not cover the output "
        f"of shape {info.array_shape}.",
        where=_lines(argument_line(out.record.call_line, "grid"), info.index_map_line), array=info.name)


TRANSPOSED = ("Rows and columns are swapped: the kernel computes the right numbers in the wrong places. Check "
              "which input runs along which axis (x[None, :] spreads x along a row, x[:, None] down a column) "
              "and the order of the output's dimensions (rows first).")
SAME_BLOCK = ("An index_map that ignores the program ids hands every program the same block. Return the block "
              "this program works on, e.g. lambda i: (i,) for a 1-D grid.")


def _transposed(expected: np.ndarray, got: np.ndarray, m: Mismatch) -> Finding | None:
    """The result is the expected one transposed (a square case, where the shapes cannot tell)."""
    if expected.ndim < 2 or expected.shape[-1] != expected.shape[-2] or got.shape != expected.shape:
        return None
    if not np.allclose(np.swapaxes(got, -1, -2), expected, rtol=m.rtol, atol=m.atol, equal_nan=True):
        return None
    return Finding(FindingKind.MISMATCH_WRONG,
                   "Your result is the transpose of the expected one: element (i, j) holds what the spec puts "
                   "at (j, i).", explanation=TRANSPOSED, where=m.stored_at)


def _same_block(out: _Output, m: Mismatch) -> Finding | None:
    """An input of the output's shape read at one block by every program, while each writes its own."""
    call = layout(out.record)
    outputs = [op for op in call.role("output") if op.block_indices and len(set(op.block_indices)) > 1]
    for op in call.role("input"):
        indices = op.block_indices or ()
        pinned = len(indices) > 1 and len(set(indices)) == 1
        if pinned and op.block is not None and any(op.shape == o.shape for o in outputs) \
                and any(-(-s // max(1, b)) > 1 for s, b in zip(op.shape, op.block)):
            return Finding(FindingKind.MISMATCH_WRONG,
                           f"Every program read the same block of {op.name} (block {indices[0]}), while each "
                           f"writes its own block of the output: the index_map of {op.name} ignores the "
                           f"program ids.", explanation=SAME_BLOCK,
                           where=_lines(op.index_map_line, m.stored_at), array=op.name)
    return None


def explain(expected: np.ndarray, got: np.ndarray, m: Mismatch, session: StrictSession,
            covered: np.ndarray | None, probe: Probe) -> tuple[tuple[Finding, ...], Mismatch]:
    """The findings that name the mismatch's cause (possibly none) and the mismatch with its origin."""
    bad = bad_mask(expected, got, m.rtol, m.atol)
    out = _output_of(session, tuple(expected.shape))
    m = _located(m, out, bad)
    transposed = _transposed(expected, got, m)
    if transposed is not None:
        return (transposed,), m
    if out is None:  # the launcher returns something made from the calls' outputs: look at those
        found = leftovers.behind_the_launcher(session, probe)
        return ((found,) if found is not None else ()), m
    same = _same_block(out, m) if not m.n_unwritten and not m.n_nan else None
    if same is not None:
        return (same,), m
    name = out.info.name
    if covered is not None and covered.shape == bad.shape and (bad & ~covered).any():
        return (_uncovered_finding(out, bad & ~covered, m),), m
    sentinel = fill_for(got.dtype, session.sentinel)
    looks_unwritten = bad & (got == sentinel) if sentinel is not None else np.zeros_like(bad)
    floating = np.issubdtype(got.dtype, np.floating)
    nan = (bad & ~np.isfinite(got.astype(np.float64)) & np.isfinite(expected.astype(np.float64)) if floating
           else bad & False)
    rebinding = writes.rebound(out.record, name, int(looks_unwritten.sum())) if looks_unwritten.any() else None
    if rebinding is not None:  # `z_ref = value`: nothing was stored, and no rerun says more than the line
        return (rebinding,), m
    # State carried from step to step lives in scratch; without any, order cannot matter.
    order = _order_finding(out, m) if out.record.scratch else None
    if order is not None:  # first: a shuffled carry also reads memory never written
        rerun = probe(sequential=True)
        in_order = rerun.output if rerun is not None else None
        if (in_order is not None and in_order.shape == got.shape
                and not bad_mask(expected, in_order, m.rtol, m.atol).any()):
            return (order,), m
    if math.isnan(session.poison) and not (looks_unwritten.any() or nan.any()):
        return (), m  # finite wrong numbers while unwritten memory read as NaN: they never touched it
    if _in_hbm(out.info) and not any(c.writes_hbm is not None for c in out.record.ledger.started()):
        # An output left in HBM gets no sentinel (only a copy writes there), and no copy wrote HBM at all.
        m = _never_written(expected, got, m, covered, bad)
        return (_hbm_never_written(name, m.n_bad, copies.idle_copy(session),
                                   m.stored_at or _lines(out.record.kernel_line)),), m
    rerun = probe(poison=probe_poison(session.poison), sentinel=PROBE_FILL)
    if rerun is None or rerun.output.shape != got.shape:
        return (), m
    again = rerun.output
    started_nan = session.sentinel is not None and math.isnan(session.sentinel)  # output blocks started as NaN
    if started_nan:  # what the probe (its blocks start at PROBE_FILL) left at PROBE_FILL was never written
        never = nan & (again == np.asarray(PROBE_FILL, again.dtype))
        if never.any():
            looks_unwritten, nan = never, nan & ~never
            m = _never_written(expected, got, m, covered, never)
    if looks_unwritten.any():
        read_first = looks_unwritten & (again != np.asarray(PROBE_FILL, again.dtype))
        if read_first.any():
            return (Finding(
                FindingKind.READ_BEFORE_WRITTEN,
                f"{name} is read before it is written: {int(read_first.sum())} element(s) were stored, but their "
                f"first store built on what the block held before (here a huge leftover value), not on zero.",
                where=m.stored_at, array=name),), m
        whens = guarding_whens(out.record.kernel_line, name)
        if whens:
            return (Finding(
                FindingKind.NEVER_TRUE_WHEN,
                f"{int(looks_unwritten.sum())} element(s) of {name} were never written: every store into {name} "
                f"is guarded by the pl.when at line {whens[0].line}, and its condition was never true at any "
                f"grid point that visits those blocks.",
                where=_lines(whens, m.stored_at), array=name),), m
        if not (started_nan and nan.any()):  # else: some elements were never written, and others read first
            return (), m
    if nan.any():
        if not np.isfinite(again[nan].astype(np.float64)).all():
            return (Finding(
                FindingKind.NAN_ARITHMETIC,
                f"{int(nan.sum())} element(s) of {name} are NaN or inf, and stay so when padding and unwritten "
                f"memory hold other values: the kernel's own arithmetic makes them.",
                where=m.stored_at, array=name),), m
        if started_nan:
            return (_read_through_nan(nan, m, name),), m
        if math.isnan(session.poison):  # NaN read from padding (the mismatch-nan text), or from scratch
            scratch = leftovers.scratch_read_first(session, probe, got, bad, name)
            return ((scratch,) if scratch is not None else ()), m
    if not np.array_equal(again[bad], got[bad], equal_nan=True):
        scratch = leftovers.scratch_read_first(session, probe, got, bad, name)
        if scratch is not None:
            return (scratch,), m
        return (Finding(
            FindingKind.PADDING_DEPENDENT,
            f"{int(bad.sum())} element(s) of {name} are wrong, and change when the padding or memory "
            f"the kernel never wrote holds other values.",
            where=m.stored_at, array=name),), m
    return (), m


def _read_through_nan(nan: np.ndarray, m: Mismatch, name: str) -> Finding:
    """NaN where output blocks started as NaN (poison.py) and the probe got numbers: the kernel read the
    blocks first, in a way that hides a finite leftover (0 * z) but not NaN, which a TPU's memory can hold."""
    return Finding(
        FindingKind.READ_BEFORE_WRITTEN,
        f"{name} is read before it is written: {int(nan.sum())} element(s) were stored, but their first "
        "store built on what the block held before: here NaN, as a TPU's memory may hold, which even a "
        "multiplication by zero keeps.",
        where=m.stored_at, array=name)


def _never_written(expected: np.ndarray, got: np.ndarray, m: Mismatch, covered: np.ndarray | None,
                   never: np.ndarray) -> Mismatch:
    """The mismatch again, with `never` counted as never written (not NaN) and the same origin."""
    from pallas_puzzles.engine.compare import compare

    reached = (covered if covered is not None and covered.shape == never.shape else np.ones_like(never)) & ~never
    marked = compare(expected, got, m.rtol, m.atol, m.block_shape, reached)
    assert marked is not None  # the same elements are wrong: only why changed
    return dataclasses.replace(marked, grid_points=m.grid_points, more_grid_points=m.more_grid_points,
                               stored_at=m.stored_at)


def _in_hbm(info: BlockInfo) -> bool:
    return memory_space_name(info.memory_space) in ("any", "hbm")


def _hbm_never_written(name: str, count: int, idle: SourceLine | None, where: tuple[SourceLine, ...]) -> Finding:
    """An output left in HBM that no copy wrote; `idle`: where a copy was described but never started."""
    why = (f"; the copy made at line {idle.line} {copies.NEVER_STARTED}" if idle
           else ", and the kernel copied nothing into HBM")
    return Finding(
        FindingKind.MISMATCH_UNWRITTEN,
        f"{count} element(s) of {name} were never written: {name} stays in HBM, where only a copy can write{why}.",
        explanation=f"A kernel whose output is left in HBM (memory_space=pl.ANY) must copy its result there "
                    f"itself: pltpu.sync_copy(buf, {name}), or make_async_copy(buf, {name}, sem) with .start() "
                    f"and .wait(), over every element.",
        where=(idle,) if idle is not None else where, array=name)
