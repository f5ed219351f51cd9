"""Grading an efficiency puzzle's kernel on the cost model: a finding when it is over budget."""

from __future__ import annotations

from pallas_puzzles.course.model import Budget
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.perf.figures import OperandCost, Performance
from pallas_puzzles.perf.waste import kib, launcher_waste
from pallas_puzzles.results import CallLayout, Finding
from pallas_puzzles.source_line import SourceLine


def _lines(calls: tuple[CallLayout, ...], name: str | None = None) -> tuple[SourceLine, ...]:
    """The index_map lines of the named operand (else of every blocked one) and the calls' lines."""
    lines: list[SourceLine] = []
    for call in calls:
        for op in call.operands:
            if op.name == name or (name is None and op.block is not None):
                lines += [line for line in (op.copy_line, op.index_map_line) if line is not None]
    lines += [c.call_line for c in calls if c.call_line is not None]
    unique = list(dict.fromkeys(lines))
    return tuple(unique[:3])


def _launcher_lines(perf: Performance) -> tuple[SourceLine, ...]:
    """The launcher lines whose XLA operations move data, the busiest first."""
    steps = sorted(perf.launcher.steps, key=lambda s: -s.hbm_bytes) if perf.launcher is not None else []
    return tuple(s.line for s in steps if s.line is not None)


def _worst(perf: Performance) -> OperandCost | None:
    counted = [op for op in perf.operands if op.ratio is not None]
    return max(counted, key=lambda op: (op.ratio or 0.0, op.hbm_bytes or 0), default=None)


def _traffic_finding(perf: Performance, budget: Budget, calls: tuple[CallLayout, ...]) -> Finding | None:
    worst = _worst(perf)
    if worst is not None and worst.ratio is not None and worst.ratio > budget.traffic + 1e-9:
        why = worst.why or perf.waste or "it is copied more often than its blocks change"
        return Finding(
            FindingKind.OVER_BUDGET,
            f"{worst.name} is {worst.verb} {worst.ratio:.1f}× its size ({kib(worst.hbm_bytes or 0)} for "
            f"{kib(worst.min_bytes)}); the budget allows {budget.traffic:.1f}×: {why}.",
            where=_lines(calls, worst.name), array=worst.name)
    outside = perf.launcher.hbm_bytes if perf.launcher is not None else 0
    if perf.traffic_ratio > budget.traffic + 1e-9 and outside and perf.launcher is not None:
        return Finding(
            FindingKind.OVER_BUDGET,
            f"The launcher moves {perf.traffic_ratio:.1f}× the minimum HBM traffic ({kib(perf.hbm_bytes)} for "
            f"{kib(perf.hbm_bytes_min)}), {kib(outside)} of it in XLA operations outside the pallas_calls; the "
            f"budget allows {budget.traffic:.1f}×: {launcher_waste(perf.launcher)}.",
            where=(_launcher_lines(perf) + _lines(calls))[:3])
    if perf.traffic_ratio > budget.traffic + 1e-9:
        why = perf.waste or "the calls move more than the spec's inputs and output"
        return Finding(
            FindingKind.OVER_BUDGET,
            f"The kernel moves {perf.traffic_ratio:.1f}× the minimum HBM traffic ({kib(perf.hbm_bytes)} for "
            f"{kib(perf.hbm_bytes_min)}); the budget allows {budget.traffic:.1f}×: {why}.",
            where=_lines(calls, perf.waste_array), array=perf.waste_array)
    return None


def check_budget(perf: Performance, budget: Budget, calls: tuple[CallLayout, ...]) -> Finding | None:
    """The first way the kernel is over its puzzle's budget, or None."""
    if budget.vmem and perf.vmem_bytes > perf.vmem_limit_bytes:
        return Finding(
            FindingKind.OVER_BUDGET,
            f"The blocks need {kib(perf.vmem_bytes)} of VMEM (two buffers per blocked operand, plus scratch); "
            f"a {perf.chip} kernel gets {kib(perf.vmem_limit_bytes)} by default. Use smaller blocks.",
            where=_lines(calls))
    if budget.traffic:
        finding = _traffic_finding(perf, budget, calls)
        if finding is not None:
            return finding
    if budget.time and perf.est_seconds > budget.time * perf.ideal_seconds * (1 + 1e-9):
        ratio = perf.est_seconds / perf.ideal_seconds
        why = (f"{perf.grid_steps} grid steps at ~{perf.overhead_seconds / perf.grid_steps * 1e6:.2f} µs each "
               f"cost more than moving the data; larger blocks mean fewer steps"
               if perf.bound == "overhead" else perf.waste or f"the kernel is {perf.bound}-bound")
        return Finding(
            FindingKind.OVER_BUDGET,
            f"The estimated time on a {perf.chip} is {perf.est_seconds * 1e6:.2f} µs, {ratio:.1f}× the ideal "
            f"{perf.ideal_seconds * 1e6:.2f} µs; the budget allows {budget.time:.1f}×: {why}.",
            where=(_launcher_lines(perf) + _lines(calls))[:3])
    return None
