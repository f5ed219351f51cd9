"""The finding kinds: every kind of verdict the checker can give, named for the code.

Each kind's value is its stable id (used in `--json` and `mistakes.toml`). Its short label
and its plain-language explanation live in `findings.toml` beside this module, written there
and nowhere else. Producers say *what* happened in a finding's message; the catalogue says
what it usually means and what to do.
"""

from __future__ import annotations

import tomllib
from enum import Enum, unique
from functools import cache
from pathlib import Path

CATALOGUE = Path(__file__).with_name("findings.toml")


@cache
def _catalogue() -> dict[str, dict[str, str]]:
    return tomllib.loads(CATALOGUE.read_text(encoding="utf-8"))


@unique  # two kinds with one id would be one kind under two names: refused at import
class FindingKind(Enum):
    NOT_STARTED = "not-started"
    SYNTAX = "syntax"
    IMPORT = "import"
    MISSING_ENTRY = "missing-entry"
    ERROR = "error"
    SHAPE = "shape"
    OOB_BLOCK = "oob-block"
    OOB_READ = "oob-read"
    OOB_WRITE = "oob-write"
    REVISIT = "revisit"
    RACE = "race"
    TPU_LOWERING = "tpu-lowering"
    TIMEOUT = "timeout"
    MEMORY = "memory"
    CRASH = "crash"
    INTERNAL = "internal"
    MISMATCH_UNWRITTEN = "mismatch-unwritten"
    MISMATCH_NAN = "mismatch-nan"
    MISMATCH_GARBAGE = "mismatch-garbage"
    MISMATCH_WRONG = "mismatch-wrong"
    SEMAPHORE_STALL = "semaphore-stall"
    DMA_READ_BEFORE_WAIT = "dma-read-before-wait"
    DMA_SLOT_IN_USE = "dma-slot-in-use"
    DMA_SHAPE = "dma-shape"
    DMA_OVERRUN = "dma-overrun"
    DMA_DTYPE = "dma-dtype"
    DMA_NOT_WAITED = "dma-not-waited"
    DMA_WRONG_COPY = "dma-wrong-copy"
    SEMAPHORE_INDEX = "semaphore-index"
    JAX_TOO_OLD = "jax-too-old"
    UNSUPPORTED = "unsupported"
    OVER_BUDGET = "over-budget"
    # Causes of a mismatch, found by running a failed case once more with other garbage
    # in unwritten memory, another sentinel, or the parallel axes in order (issue 9).
    READ_BEFORE_WRITTEN = "read-before-written"
    PADDING_DEPENDENT = "padding-dependent"
    NAN_ARITHMETIC = "nan-arithmetic"
    NEVER_TRUE_WHEN = "never-true-when"
    ORDER = "order"
    # Kernels over several devices (the tpu-multichip target): remote copies, semaphores, handshakes.
    DEADLOCK = "deadlock"
    NO_HANDSHAKE = "no-handshake"
    SEMAPHORE_LEFT = "semaphore-left"
    COPY_NOT_WAITED = "copy-not-waited"
    DEVICE_ID = "device-id"
    COLLECTIVE_ID = "collective-id"
    NO_OVERLAP = "no-overlap"
    BOTH_WAYS = "both-ways"
    # The Mosaic GPU chapter (issue 20): barriers, TMA copies and shared memory, rules of the hardware.
    BARRIER_STALL = "barrier-stall"
    BARRIER_PHASE = "barrier-phase"
    SMEM_READ_BEFORE_WAIT = "smem-read-before-wait"
    SMEM_UNCOMMITTED = "smem-uncommitted"
    SMEM_SLOT_IN_USE = "smem-slot-in-use"
    TMA_STORE_UNWAITED = "tma-store-unwaited"
    TMA_LOAD_UNWAITED = "tma-load-unwaited"
    TMA_WINDOW = "tma-window"
    SMEM_UNFILLED = "smem-unfilled"
    GPU_LOWERING = "gpu-lowering"
    GPU_PROGRAM_ID = "gpu-program-id"
    WGMMA_IN_FLIGHT = "wgmma-in-flight"
    GMEM_REREAD = "gmem-reread"
    COPY_NOT_OVERLAPPED = "copy-not-overlapped"
    # The answer comes from the learner's kernel (issue 31): a launcher that computes, or a file that
    # reaches into the checker.
    OUTSIDE_KERNEL = "outside-kernel"
    REACHES_CHECKER = "reaches-checker"
    # The TPU of today (issue 34): kernels over a TensorCore mesh, aliases, run-time grids, random numbers.
    HBM_COMPUTE = "hbm-compute"
    CORE_COUNT = "core-count"
    CORE_BARRIER = "core-barrier"
    NOT_IN_PLACE = "not-in-place"
    INPUT_WRITTEN = "input-written"
    STATIC_GRID = "static-grid"
    SAME_RANDOM_BLOCKS = "same-random-blocks"
    KEY_IGNORED = "key-ignored"
    KEEP_RATE = "keep-rate"
    HARDWARE_PRNG = "hardware-prng"
    # Blackwell (tcgen05, tensor memory; engine/targets/blackwell).
    TMEM_READ_EARLY = "tmem-read-early"
    TMEM_OVERWRITTEN = "tmem-overwritten"
    TMEM_UNINITIALISED = "tmem-uninitialised"
    TMEM_CAPACITY = "tmem-capacity"
    BARRIER_NOT_FOR_MMA = "barrier-not-for-mma"
    HOPPER_ON_BLACKWELL = "hopper-on-blackwell"
    NOT_ON_CPU = "not-on-cpu"
    BLACKWELL_ON_HOPPER = "blackwell-on-hopper"
    MULTICAST_MASK = "multicast-mask"
    MULTICAST_WINDOW = "multicast-window"
    SMEM_INDEX_NEGATIVE = "smem-index-negative"
    # Seen on a real GPU (issue 35): a kernel the hardware stopped, which leaves the process's GPU unusable.
    DEVICE_FAULT = "device-fault"

    @property
    def id(self) -> str:
        return self.value

    @property
    def label(self) -> str:
        return _catalogue()[self.value]["label"]

    @property
    def explanation(self) -> str:
        return _catalogue()[self.value]["explanation"]

    @classmethod
    def by_id(cls, name: str) -> FindingKind:
        try:
            return cls(name)
        except ValueError:
            raise KeyError(name) from None

    @property
    def is_budget(self) -> bool:
        """Right numbers, over a cost budget (the TPU model's or the GPU card's)."""
        return self in (FindingKind.OVER_BUDGET, FindingKind.GMEM_REREAD, FindingKind.COPY_NOT_OVERLAPPED)

    @property
    def is_mismatch(self) -> bool:
        return self.value.startswith("mismatch-")

    @property
    def is_our_fault(self) -> bool:
        """Findings about pallas-puzzles itself: the check could not give a verdict."""
        return self is FindingKind.INTERNAL
