"""A static cost model of the Pallas TPU pipeline for the pallas_calls one shape case made.

The grid runs in row-major order (last axis fastest). Before each step the
pipeline copies an operand's block from HBM only when its block index differs
from the previous step's; an output block goes back to HBM when its index
changes and after the last step. Each copy moves the in-bounds part of the
block. Operands left in HBM (memory_space=pl.ANY) are moved by the copies the
kernel starts itself: the interpreter's copy ledger gives their bytes (on a
compiled run, where there is none, they are reported as not counted).
Scalar-prefetch operands go to SMEM before the grid (not counted). What the
launcher does outside the pallas_calls (XLA operations) is counted by
engine/launcher_traffic.py and added here. On a GPU every program loads its
blocks afresh, so there the figures are a lower bound.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from pallas_puzzles.perf import chips
from pallas_puzzles.perf.chips import Chip
from pallas_puzzles.perf.figures import CallCost, OperandCost, Performance
from pallas_puzzles.perf.launcher import LauncherTraffic
from pallas_puzzles.perf.waste import biggest_waste, refetch_note
from pallas_puzzles.results import CallLayout, CaseResult, OperandLayout

UNCOUNTED = {"any": "left in HBM: the kernel copies what it needs itself (not counted)",
             "hbm": "left in HBM: the kernel copies what it needs itself (not counted)",
             "semaphore": "a semaphore: no data"}


def itemsize(dtype: str) -> int:
    """Bytes per element from a dtype name (bfloat16 -> 2, int8 -> 1, bool -> 1)."""
    bits = re.findall(r"\d+", dtype)
    return max(1, int(bits[-1]) // 8) if bits else 1


def _in_bounds(index: tuple[int, ...], block: tuple[int, ...], shape: tuple[int, ...]) -> int:
    """Elements of block `index` that lie inside the array (an edge block may overhang)."""
    count = 1
    for b, size, extent in zip(index, block, shape):
        count *= max(0, min(extent, (b + 1) * size) - b * size)
    return count


def operand_cost(operand: OperandLayout, grid: tuple[int, ...]) -> OperandCost:
    size = itemsize(operand.dtype)
    whole = math.prod(operand.shape) * size
    base = dict(name=operand.name, role=operand.role, shape=operand.shape, dtype=operand.dtype)
    if operand.role == "scratch":
        vmem = whole if operand.memory_space in ("vmem", "") else 0
        return OperandCost(**base, hbm_bytes=None, min_bytes=0, vmem_bytes=vmem, note="scratch: lives in VMEM")
    if operand.role == "prefetch":
        return OperandCost(**base, hbm_bytes=None, min_bytes=whole,
                           note="scalar prefetch: copied to SMEM once before the grid (not counted)")
    if operand.memory_space in ("any", "hbm") and operand.copied_bytes is not None:
        return _copied_cost(operand, base, whole)
    if operand.memory_space in UNCOUNTED or operand.block is None or operand.block_indices is None:
        note = UNCOUNTED.get(operand.memory_space, "")
        if operand.memory_space in ("vmem", "smem"):  # the whole array, copied in (or out) once
            vmem = whole if operand.memory_space == "vmem" else 0
            return OperandCost(**base, hbm_bytes=whole, min_bytes=whole, copies=1, distinct_blocks=1, vmem_bytes=vmem,
                               note=f"whole array in {operand.memory_space.upper()}, copied once")
        return OperandCost(**base, hbm_bytes=None, min_bytes=whole,
                           note=note or "block indices unknown before the kernel ran (not counted)")
    moving = [index for index, moves in zip(operand.block_indices, operand.moves()) if moves]
    moved, copies = sum(_in_bounds(index, operand.block, operand.shape) for index in moving), len(moving)
    distinct = len(set(operand.block_indices))
    note, why = refetch_note(operand, grid, copies, distinct)
    return OperandCost(**base, hbm_bytes=moved * size, min_bytes=whole, copies=copies, distinct_blocks=distinct,
                       vmem_bytes=2 * math.prod(operand.block) * size,  # two buffers: one in use, one in flight
                       note=note, why=why)


def _copied_cost(operand: OperandLayout, base: dict[str, Any], whole: int) -> OperandCost:
    """An operand left in HBM, counted by the bytes of the copies the kernel started on it."""
    moved, count = operand.copied_bytes or 0, operand.copy_count
    at = f" (started at line {operand.copy_line.line})" if operand.copy_line is not None else ""
    why = (f"the kernel's own copies{at} bring parts of it from HBM more than once; copy each part "
           "into VMEM once and reuse it there") if moved > whole else ""
    return OperandCost(**base, hbm_bytes=moved, min_bytes=whole, copies=count, distinct_blocks=0,
                       note=f"left in HBM: {count} cop{'y' if count == 1 else 'ies'} by the kernel's own DMAs", why=why)


def with_batch(call: CallLayout, batch: tuple[int, ...]) -> CallLayout:
    """The call as jax.vmap runs it: the batch dimensions become the outermost grid axes.

    The checker records a vmapped pallas_call with its per-example shapes; Pallas's batching rule
    prepends the batch to the grid and gives every blocked operand a squeezed leading block dimension.
    """
    if not batch:
        return call
    per_example = len(call.grid_points())
    steps = list(itertools.product(*(range(b) for b in batch)))
    operands = []
    for op in call.operands:
        if op.role in ("input", "output"):
            indices = (tuple(b + i for b in steps for i in op.block_indices)
                       if op.block_indices is not None and len(op.block_indices) == per_example else None)
            op = replace(op, shape=batch + op.shape, block=(1,) * len(batch) + op.block if op.block else None,
                         block_indices=indices)
        operands.append(op)
    return replace(call, grid=batch + call.grid, semantics=("parallel",) * len(batch) + call.semantics if
                   call.semantics else (), operands=tuple(operands))


def call_cost(call: CallLayout) -> CallCost:
    return CallCost(kernel=call.kernel, grid=call.grid,
                    operands=tuple(operand_cost(op, call.grid) for op in call.operands))


def estimate(calls: tuple[CallLayout, ...], flops: float, min_bytes: int, chip: Chip, case: str = "",
             launcher: LauncherTraffic | None = None) -> Performance:
    """The performance of one shape case: `min_bytes` is the spec's inputs and output, once each;
    `launcher` what the launcher's XLA operations move around the calls."""
    costs = tuple(call_cost(c) for c in calls)
    operands = tuple(op for c in costs for op in c.operands)
    moved = sum(c.hbm_bytes_read + c.hbm_bytes_written for c in costs) + (launcher.hbm_bytes if launcher else 0)
    minimum = min_bytes or sum(c.hbm_bytes_min for c in costs)
    steps = sum(c.grid_steps for c in costs)
    ideal = max(minimum / chip.hbm_bytes_per_second, flops / chip.flops_per_second, chip.step_seconds)
    waste = biggest_waste(costs, operands, moved, minimum, launcher)
    return Performance(
        chip=chip.name, generation=chip.models, case=case, calls=costs, flops=float(flops), hbm_bytes_min=minimum,
        vmem_limit_bytes=chip.vmem_limit_bytes,
        memory_seconds=moved / chip.hbm_bytes_per_second,
        compute_seconds=flops / chip.flops_per_second,
        overhead_seconds=steps * chip.step_seconds,
        ideal_seconds=ideal,
        waste=waste.sentence,
        waste_array=waste.array,
        operands=operands,
        launcher=launcher,
    )


def for_chip(cases: list[CaseResult], chip_name: str) -> list[CaseResult]:
    """The cases with their figures re-estimated for another TPU generation (the checker used the default)."""
    chip = chips.chip(chip_name)
    return [replace(c, performance=estimate(c.calls, c.performance.flops, c.performance.hbm_bytes_min, chip, c.label,
                                            c.performance.launcher))
            if c.performance is not None else c for c in cases]


def case_performance(calls: tuple[CallLayout, ...], label: str, inputs: Sequence[Any], expected: Any,
                     flops: float, launcher: LauncherTraffic | None = None) -> Performance:
    """The figures for the calls one shape case made (numpy inputs and spec output), on the default chip."""
    outputs = [op for op in calls[-1].operands if op.role == "output"] if calls else []
    lead = expected.ndim - len(outputs[0].shape) if len(outputs) == 1 else 0
    if lead > 0 and tuple(expected.shape[lead:]) == outputs[0].shape:  # under jax.vmap: per-example shapes
        calls = tuple(with_batch(c, tuple(expected.shape[:lead])) for c in calls)
    minimum = sum(int(a.nbytes) for a in inputs) + int(expected.nbytes)
    return estimate(calls, flops, minimum, chips.chip(), label, launcher)
