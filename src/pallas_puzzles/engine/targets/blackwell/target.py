"""The Blackwell target: tcgen05 MMAs, tensor memory (TMEM) and clusters, checked on a CPU (jax >= 0.12).

It is the Mosaic GPU target (mosaic_gpu/target.py: the CUDA lowering pass, then JAX's GPU interpreter
with race detection and the deadlock watchdog) with three additions:
1. its own rules for the source lints (lints.py): a Hopper wgmma, and the Blackwell features the CPU
   cannot run (2-CTA MMA, distributed SMEM, partitioned TMA), each refused in one sentence;
2. hooks on the tcgen05 callbacks (hooks.py): which call each access is, accumulators never initialised;
3. findings reworded for tensor memory (faults.py): TMEM read before the MMA completed, overwritten
   while its readback is in flight, SMEM not committed before the MMA, TMEM capacity, hangs named
   by their barrier.
The CUDA lowering on a CPU is always for sm_90 (no Blackwell check happens there); a real Blackwell
GPU is not supported yet: the chapter has no `gpu` partner, and `--backend gpu` says it needs sm_100.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from pallas_puzzles.engine.targets.mosaic_gpu.target import MosaicGpuTarget
from pallas_puzzles.findings import FindingKind

if TYPE_CHECKING:
    from pallas_puzzles.engine.case import Case
    from pallas_puzzles.engine.targets.mosaic_gpu.lints import Rules
    from pallas_puzzles.results import CaseResult, Finding

# The Mosaic GPU findings a tcgen05 cause may reword.
REWORDED = (FindingKind.RACE, FindingKind.SMEM_UNCOMMITTED, FindingKind.SMEM_READ_BEFORE_WAIT,
            FindingKind.SMEM_SLOT_IN_USE)


class BlackwellTarget(MosaicGpuTarget):
    name: ClassVar[str] = "blackwell"
    summary: ClassVar[str] = ("Blackwell kernels (tcgen05, TMEM, clusters) in JAX's GPU interpreter with race "
                              "detection, lowered for CUDA on the CPU, with lints for what neither sees")
    min_jax: ClassVar[str] = "0.12"  # tcgen05 and TMEM run in the GPU interpreter from jax 0.12 (0.10.2: not at all)
    partners: ClassVar[Mapping[str, str]] = {}
    card_gpu: ClassVar[str] = "b200"  # the GPU card's default for this chapter
    not_lowered_because: ClassVar[str] = ("its kernels are Mosaic GPU kernels for Blackwell, not TPU kernels "
                                          "(verify lowers them for CUDA as part of every check)")
    not_run_because: ClassVar[Mapping[str, str]] = {
        "gpu": "its kernels need a Blackwell GPU (sm_100), and this version checks them only in JAX's GPU interpreter"}

    def start(self) -> None:
        from pallas_puzzles.engine.targets.blackwell import hooks

        super().start()
        hooks.install()

    def source_rules(self) -> Rules:
        from pallas_puzzles.engine.targets.blackwell import lints

        return lints.RULES

    def run_case(self, case: Case, entry: Callable[..., Any]) -> CaseResult:
        from pallas_puzzles.engine.case import ONLY_LOWERED
        from pallas_puzzles.engine.targets.blackwell import faults, hooks, multicast_windows

        hooks.forget()
        result = super().run_case(case, entry)
        if result.passed and case.lowering == ONLY_LOWERED:  # lowered, and not run: nothing more to say
            return result
        differing = multicast_windows.watch.differing
        if differing is not None and result.ran_to_the_end:
            return dataclasses.replace(result, passed=False, findings=(faults.multicast_window_finding(differing),),
                                       mismatch=None, performance=None, gpu_card=None)
        if result.passed:
            return result
        finding = _reworded(result, hooks.seen)
        return dataclasses.replace(result, findings=(finding, *result.findings[1:]), mismatch=None) \
            if finding is not None else result


def _reworded(result: CaseResult, seen: Any) -> Finding | None:
    """The Blackwell finding that explains a failed case better than the Mosaic GPU one; None if none does."""
    from pallas_puzzles.engine.targets.blackwell import faults

    if seen.uninitialised is not None:
        return faults.uninitialised_finding(seen.uninitialised)
    if seen.read_unwritten is not None:
        return faults.read_unwritten_finding(seen.read_unwritten)
    first = result.finding
    if first is None:
        return None
    if first.kind in REWORDED:
        return faults.race_finding(seen.failure)
    if first.kind is FindingKind.BARRIER_STALL:
        return faults.stall_finding(seen.failure, first)
    return faults.capacity_finding(first) or faults.unordered_barrier_finding(first)
