"""The GPU card's panel: what a passing Mosaic GPU kernel would cost on a named NVIDIA GPU (perf/gpu_card.py)."""

from __future__ import annotations

from rich.console import Group
from rich.panel import Panel
from rich.text import Text

from pallas_puzzles.perf.gpu_card import GpuCard
from pallas_puzzles.perf.waste import kib
from pallas_puzzles.results import CheckResult


def gpu_case(result: CheckResult) -> GpuCard | None:
    """The case the card shows: the one that moves the most data."""
    cards = [c.gpu_card for c in result.cases if c.gpu_card is not None]
    return max(cards, key=lambda card: card.counts.min_bytes, default=None)


def _seconds(value: float) -> str:
    return f"{value * 1e6:.2f} µs" if value < 1e-3 else f"{value * 1e3:.2f} ms"


def card_lines(card: GpuCard) -> list[str]:
    counts = card.counts
    pipelined = counts.pipelined
    overlap = ("one copy wait per block: nothing to overlap within a block" if pipelined is None else
               f"{counts.overlapped_waits} of {counts.copy_waits} copy waits found the next copy in flight")
    return [
        f"GMEM traffic: read {kib(counts.gmem_bytes_read)}, written {kib(counts.gmem_bytes_written)}, "
        f"{counts.traffic_ratio:.2f}× the minimum {kib(counts.min_bytes)}; from DRAM (re-reads hit L2 as far "
        f"as it holds the arrays): {kib(card.dram_bytes)}",
        f"Tensor cores: {counts.flops:,} FLOPs" + (f" on {counts.mma_dtype} operands" if counts.mma_dtype else ""),
        f"SMEM: {kib(counts.smem_bytes)} per block, {card.blocks_per_sm} block(s) fit an SM; "
        f"{counts.blocks} block(s) use {card.sm_share:.0%} of the SMs",
        f"Overlap: {overlap} (the estimate overlaps {card.overlap:.0%} of the shorter of copies and MMAs)",
        f"Estimated time: {_seconds(card.est_seconds)}, {card.bound}-bound (memory {_seconds(card.memory_seconds)}, "
        f"compute {_seconds(card.compute_seconds)}, launch {_seconds(card.launch_seconds)})",
    ]


def card(gpu: GpuCard) -> Panel:
    body = Group(*(Text(line) for line in card_lines(gpu)))
    return Panel(body, title=f"Performance on an {gpu.title} (model), case {gpu.case}",
                 subtitle="a roofline from the interpreter's counts, not a measurement", border_style="blue")
