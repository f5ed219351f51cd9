"""The GPU card: what a passing Mosaic GPU kernel would cost on a named NVIDIA GPU (no jax).

A target that checks GPU kernels feeds the card through one plain record, `KernelCounts`,
counted while the kernel ran. The Mosaic GPU target counts it in its interpreter hooks
(engine/targets/mosaic_gpu/costs.py, which count tcgen05 MMAs as well as wgmma); another GPU
target sets `gpu_card = True`, builds a KernelCounts per passing case, and hands
`estimate(counts, gpu_chip())` to `case.done(..., gpu_card=...)`: `perf --chip`, the JSON,
the terminal and the notebook take it from there. The model, per shape case:
- memory: the bytes the TMA copies moved between GMEM and SMEM, at HBM bandwidth, less the re-reads
  L2 serves: a tile read again (by another block, or another K pass) hits L2 as far as the kernel's
  footprint (its inputs and output) fits there, so a share 1 - L2 / footprint of the re-reads
  (none when the footprint fits) goes to DRAM;
- compute: the tensor-core FLOPs at the dense rate of the MMA operands' dtype;
- both scaled by the share of SMs the grid can occupy (a 4-block grid uses 4 of 132 SMs);
- overlap: copies and MMAs overlap as far as the kernel lets them. A copy wait is overlapped
  when another load of the block was already in flight (double buffering, emit_pipeline);
  blocks resident on one SM together also overlap one another's copies and MMAs. The time
  is max(memory, compute) + (1 - overlap) * min(memory, compute), plus one kernel launch.
It is a roofline, not a simulator: no L2 bandwidth limit, bank conflicts, epilogues, or latency of a
lone copy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pallas_puzzles.perf.gpu_chips import LAUNCH_SECONDS, GpuChip, gpu_chip

MAX_BLOCKS_PER_SM = 32  # resident thread blocks per SM on compute capability 9.0 and 10.0


@dataclass(frozen=True)
class KernelCounts:
    """What one shape case of a GPU kernel did: the card's only input, filled by a GPU target."""

    gmem_bytes_read: int  # GMEM -> SMEM by TMA copies, and the kernel's own loads from GMEM
    gmem_bytes_written: int  # SMEM -> GMEM by TMA copies, and the kernel's own stores into GMEM
    flops: int  # tensor-core MMAs, 2*M*N*K each
    mma_dtype: str  # the MMA operands' dtype ("" when the kernel ran none)
    smem_bytes: int  # SMEM one block allocates: scratch and scoped buffers (pipeline slots)
    blocks: int  # blocks the grid ran
    copy_waits: int  # waits on a barrier that TMA loads arrive on
    overlapped_waits: int  # of those, waits while another load of the block was already in flight
    min_bytes: int  # the spec's inputs read once and its output written once

    @property
    def gmem_bytes(self) -> int:
        return self.gmem_bytes_read + self.gmem_bytes_written

    @property
    def traffic_ratio(self) -> float:
        return self.gmem_bytes / self.min_bytes if self.min_bytes else 1.0

    @property
    def pipelined(self) -> float | None:
        """The share of copy waits with another load in flight; None when no block waited on a copy twice."""
        if self.copy_waits <= self.blocks:  # one wait per block: nothing to overlap within it
            return None
        return self.overlapped_waits / self.copy_waits


@dataclass(frozen=True)
class GpuCard:
    chip: str
    title: str
    case: str
    counts: KernelCounts
    blocks_per_sm: int  # how many blocks fit an SM's shared memory
    resident: int  # blocks that actually share an SM in this grid
    sm_share: float  # the share of the GPU's SMs the grid occupies
    overlap: float  # 0: copies and MMAs one after the other; 1: fully overlapped
    dram_bytes: int  # the TMA traffic less the re-reads L2 serves
    memory_seconds: float
    compute_seconds: float
    launch_seconds: float

    @property
    def est_seconds(self) -> float:
        slow, fast = max(self.memory_seconds, self.compute_seconds), min(self.memory_seconds, self.compute_seconds)
        return slow + (1 - self.overlap) * fast + self.launch_seconds

    @property
    def bound(self) -> str:
        times = {"memory": self.memory_seconds, "compute": self.compute_seconds, "launch": self.launch_seconds}
        return max(times, key=lambda k: times[k])

    @property
    def achieved_flops(self) -> float:
        return self.counts.flops / self.est_seconds if self.est_seconds else 0.0


def dram_bytes(counts: KernelCounts, chip: GpuChip) -> int:
    """The TMA bytes that come from DRAM: the first read of each byte, and the re-reads L2 cannot hold."""
    rereads = max(0, counts.gmem_bytes - counts.min_bytes)
    misses = max(0.0, 1 - chip.l2_bytes / counts.min_bytes) if counts.min_bytes else 1.0
    return round(counts.gmem_bytes - rereads * (1 - misses))


def estimate(counts: KernelCounts, chip: GpuChip, case: str = "") -> GpuCard:
    per_sm = min(MAX_BLOCKS_PER_SM, chip.smem_per_sm_bytes // counts.smem_bytes) if counts.smem_bytes else \
        MAX_BLOCKS_PER_SM
    per_sm = max(per_sm, 1)
    blocks = max(counts.blocks, 1)
    share = min(1.0, blocks / chip.sm_count)
    resident = min(per_sm, math.ceil(blocks / chip.sm_count))
    within = counts.pipelined or 0.0
    overlap = max(within, 1 - 1 / resident)
    rate = chip.mma_flops_per_second(counts.mma_dtype)
    dram = dram_bytes(counts, chip)
    return GpuCard(chip=chip.name, title=chip.title, case=case, counts=counts, blocks_per_sm=per_sm,
                   resident=resident, sm_share=share, overlap=overlap, dram_bytes=dram,
                   memory_seconds=dram / (chip.hbm_bytes_per_second * share),
                   compute_seconds=counts.flops / (rate * share),
                   launch_seconds=LAUNCH_SECONDS)


def for_gpu(card: GpuCard, name: str | None) -> GpuCard:
    """The same counts estimated for another GPU."""
    return estimate(card.counts, gpu_chip(name), card.case) if name else card

