"""Grading a GPU puzzle's kernel on the GPU card: a finding when it is over its budget.

Two budgets (course.model.Budget): `traffic`, the TMA traffic as a multiple of the spec's
inputs and output once each (tiles too small re-read the operands from GMEM), and `overlap`,
the share of copy waits that must find the next load already in flight (a K loop that waits
for each copy before issuing the next leaves the SM idle while each copy is in flight).
"""

from __future__ import annotations

from pallas_puzzles.course.model import Budget
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.perf.gpu_card import GpuCard
from pallas_puzzles.perf.waste import kib
from pallas_puzzles.results import Finding
from pallas_puzzles.source_line import SourceLine


def check_gpu_budget(card: GpuCard, budget: Budget, busiest_load: SourceLine | None,
                     serial_wait: SourceLine | None) -> Finding | None:
    """The first way the kernel is over its puzzle's budget, or None."""
    counts = card.counts
    if budget.traffic and counts.traffic_ratio > budget.traffic + 1e-9:
        return Finding(
            FindingKind.GMEM_REREAD,
            f"The TMA copies move {counts.traffic_ratio:.2f}× the minimum GMEM traffic ({kib(counts.gmem_bytes)} "
            f"for {kib(counts.min_bytes)}); the budget allows {budget.traffic:.2f}×: the copies read the same GMEM "
            "bytes more than once (the line shown moved the most). Copy into each block only what it computes "
            "with, and make output tiles large enough that few blocks read the same rows and columns.",
            where=(busiest_load,) if busiest_load is not None else ())
    pipelined = counts.pipelined
    if budget.overlap and pipelined is not None and pipelined < budget.overlap - 1e-9:
        return Finding(
            FindingKind.COPY_NOT_OVERLAPPED,
            f"Only {pipelined:.0%} of the waits for a TMA copy found the next copy already in flight; the budget "
            f"asks for {budget.overlap:.0%}: the loop waits for each copy before it starts the next, so the "
            f"SM idles while each copy is in flight (estimated {card.est_seconds * 1e6:.2f} µs on the {card.title}). "
            "Keep two or more steps in flight (max_concurrent_steps=2, or two slots and two barriers).",
            where=(serial_wait,) if serial_wait is not None else ())
    return None
