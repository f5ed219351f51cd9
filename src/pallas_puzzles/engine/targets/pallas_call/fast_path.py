"""tpu-interpret's fast path: what a checker keeps warm between checks, and the switch that turns it off.

A cold check of a small puzzle spent most of its time compiling one XLA program per
shape case that nothing ever reused, and clearing JAX's caches between puzzles threw
away the rest. The fast path:
- interprets a call whose grid has at most `eager_grid_limit` points op by op
  (engine/targets/pallas_call/intercept/eager.py), whose small programs every later case reuses, and
  stages each scalar value once; a larger grid is compiled, as one program beats
  thousands of dispatches;
- there, with `numpy_ops`, computes the common lax operations with numpy
  (engine/targets/pallas_call/intercept/host_ops.py; weakly typed literals: weak_values.py): a new block
  shape then costs no XLA program at all, and the interpreter's callbacks are called
  with numpy arrays, as compiled;
- reuses each thread's MLIR context `context_reuse` times, so those cached programs
  do not each keep a context alive;
- keeps the garbage collector off while a checker's own process starts JAX, and then
  freezes what start-up built out of its sight (`start_up_out_of_collectors_sight`),
  and collects its youngest objects every GC_YOUNG_THRESHOLD allocations, not 700;
- keeps JAX's caches from check to check, and so from puzzle to puzzle, until the
  process passes its memory ceiling (engine/targets/memory.py, for every target).
(Every check places a case's inputs with jax.device_put, fast path or not: specs.on_device.)

None of this changes a verdict (tests/engine/test_fast_path.py checks every reference
solution, mistake and correct alternative both ways). PALLAS_PUZZLES_FAST=0 turns it
all off: to compare, or to rule it out. Nothing here imports JAX at module level.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from pallas_puzzles import environment

VARIABLE = environment.FAST.name

# Measured per shape case, op by op (its small programs warm) against compiled (a new program, as
# every edit of the learner's makes). Through XLA alone, op by op won below 24-32 points on jax 0.10.2
# and 32-48 on 0.12.0.1. With numpy computing the common operations (numpy_ops), on an elementwise
# kernel and an accumulating one with (8, 128) blocks (jax 0.10.2; 0.12.0.1 alike): 16 points 0.03
# against 0.11-0.12 s, 64 points 0.10-0.12 against 0.17-0.18 s, 128 points 0.20-0.24 against 0.28-0.29 s,
# 256 points 0.40-0.49 against 0.50-0.52 s. 128 keeps a clear margin, and no program is compiled for
# the course's reference solutions (the largest grid is 40 points).
EAGER_GRID_LIMIT = 128
# MLIR contexts reused per thread: jax 0.12 itself reuses 10 times; 100 keeps the memory of a
# whole course's cached programs lower at no cost in speed.
CONTEXT_REUSE = 100
# Allocations between two collections of the youngest generation in a checker (Python's own: 700).
# Lowering a Mosaic GPU kernel builds objects by the hundred thousand, nearly all freed by their
# counts: with 700, a check of blackwell_warp_specialized made 68 collections, with 10,000 three,
# and took 0.66 s instead of 0.71 (hopper_attention 0.365 against 0.377; jax 0.12.0.1, median of 10).
GC_YOUNG_THRESHOLD = 10_000


@dataclass(frozen=True)
class FastPath:
    eager_grid_limit: int = EAGER_GRID_LIMIT  # 0: every call is compiled
    context_reuse: int = CONTEXT_REUSE  # 0: as the installed JAX does
    numpy_ops: bool = True  # in an eager interpretation; False: every operation through XLA
    freeze_gc: bool = True

    @classmethod
    def from_environment(cls) -> FastPath:
        return OFF if switched_off() else cls()


OFF = FastPath(eager_grid_limit=0, context_reuse=0, numpy_ops=False, freeze_gc=False)


def switched_off() -> bool:
    """Has PALLAS_PUZZLES_FAST=0 turned the fast path (and the stored spec answers) off?"""
    return environment.FAST.turned_off()


@contextmanager
def start_up_out_of_collectors_sight() -> Iterator[None]:
    """Around a checker's own process starting JAX (never in a notebook: the learner's objects are
    not ours to freeze). Importing JAX builds hundreds of thousands of objects that live as long as the
    process: the collector stays off while they are built (its passes over them were 10 % of the import,
    30-40 ms of each checker's start; the 1,100 cycles it would have found are kept, under 1 MiB), then
    they are frozen, so a full collection later costs milliseconds, not 50 ms. The young generation is
    collected less often from then on (GC_YOUNG_THRESHOLD)."""
    fast = FastPath.from_environment().freeze_gc
    was_enabled = gc.isenabled()
    if fast:
        gc.disable()
    try:
        yield
    finally:
        if fast:
            gc.freeze()
            gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])
        if was_enabled:
            gc.enable()
