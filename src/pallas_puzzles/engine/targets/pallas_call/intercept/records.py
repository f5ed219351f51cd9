"""What the intercepts record about one pallas_call, as data: its operands' BlockSpecs, its
scratch, and the ledger of the manual copies it started.

call_reader fills a CallRecord when the learner's pallas_call runs, dma_ledger fills its
Ledger while the kernel runs, and the session keeps the records of one shape case.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pallas_puzzles.engine.learner_lines import info_lines
from pallas_puzzles.source_line import SourceLine


@dataclass
class Copy:
    """One DMA the kernel started."""

    id: int  # the interpreter's DMA id: the race detector names a copy by it
    order: int  # start order within the call
    semaphore: int
    core: int  # the global core whose semaphore it signals
    source_info: Any  # where jax traced the start (learner lines, resolved when a finding needs them)
    reads_hbm: int | None  # the HBM buffer it reads, None when its source is not in HBM
    writes_hbm: int | None
    bytes: int = 0  # known once it has landed
    landed: bool = False
    overtaken_by: Copy | None = None  # a newer copy on the same semaphore that ended a wait first
    overtaking_wait: Any = None  # that wait's source_info

    def lines(self, learner_file: str) -> tuple[SourceLine, ...]:
        return info_lines(self.source_info, learner_file)


@dataclass
class Ledger:
    """The copies of one pallas_call, in start order, and the HBM buffers it allocated."""

    copies: dict[int, Copy] = field(default_factory=dict)
    hbm_buffers: list[int] = field(default_factory=list)  # allocation order: inputs, then outputs
    waits: list[tuple[int, int, int, Any]] = field(default_factory=list)  # (semaphore, core, bytes, where), in order

    def started(self) -> list[Copy]:
        """The copies started so far, in start order. Read it through here, never the dict itself: on
        several cores another core's thread starts copies while this one reads, and a dict that grows
        under a Python loop over it fails that loop (list() copies it in one step of the interpreter)."""
        return list(self.copies.values())

    def pending_on(self, semaphore: int, core: int) -> list[Copy]:
        return [c for c in self.started() if c.semaphore == semaphore and c.core == core and not c.landed]


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
    block_dims: list[int] | None = None  # block size per dimension (1 where squeezed)
    covered: np.ndarray | None = None  # outputs: elements some grid point's block covers
    dtype: str = ""
    block_indices: list[tuple[int, ...]] | None = None  # per grid step, in grid order, once evaluated
    pipeline_mode: Any = None  # the BlockSpec's pipeline_mode (pl.Buffered(n)), if it asks for one


@dataclass
class ScratchInfo:
    """A scratch buffer or semaphore the kernel asked for (scratch_shapes)."""

    shape: tuple[int, ...]
    dtype: str
    memory_space: str
    name: str = ""  # the kernel's parameter for it


@dataclass
class CallRecord:
    kernel_name: str
    kernel_line: SourceLine | None
    call_line: SourceLine | None
    grid: tuple[int, ...]
    inputs: list[BlockInfo]
    outputs: list[BlockInfo]
    n_prefetch: int = 0
    semantics: tuple[Any, ...] = ()
    prefetch: list[BlockInfo] = field(default_factory=list)
    scratch: list[ScratchInfo] = field(default_factory=list)
    ledger: Ledger = field(default_factory=Ledger)  # the manual copies the kernel started (dma_ledger)
    results: tuple[Any, ...] = ()  # the call's outputs as it returned them (arrays; empty under a trace)
    # Where the kernel runs inner pipelines (pltpu.emit_pipeline): the copies Pallas starts for them are
    # traced too deep in Pallas for JAX to record the learner's line, so findings name these.
    pipelines: list[SourceLine] = field(default_factory=list)
    aliases: dict[int, int] = field(default_factory=dict)  # input_output_aliases: operand index -> output index
    # The arrays it was given (None for a tracer, under jit or vmap), compared with the launcher's trace:
    # a launcher must compute the same when traced as when it runs (launcher_trace.unlike_the_run).
    operands: tuple[Any, ...] = ()

    def where(self, info: BlockInfo | None) -> tuple[SourceLine, ...]:
        """The lines to quote for a fault in one operand: its index_map, then the call."""
        lines = (info.index_map_line if info is not None else None, self.call_line)
        return tuple(line for line in lines if line is not None)
