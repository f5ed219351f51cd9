"""Sizes that are exact multiples of the blocks: where `n // B + 1` and `pl.cdiv(n, B)` differ.

Shape cases are ragged on purpose (the lesson of the overhanging last block), and on a ragged
size a grid of `n // B + 1` steps is exactly `pl.cdiv(n, B)`; only when n is a multiple of B
does it ask for a block wholly outside the array. So once every shape case has passed, the
launcher runs once more on the puzzle's first TPU shape case (multiples of 8 and 128 by
construction, so of every power-of-two block up to 128) with the kernels left out: each
pallas_call's index maps are evaluated over its whole grid (intercept/index_maps.py), which
takes milliseconds, and a block index outside the array fails the check.
"""

from __future__ import annotations

import contextlib
import io
import time
from pathlib import Path
from typing import Any

from pallas_puzzles.backends import INTERPRET, TPU, Backend
from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.engine import specs
from pallas_puzzles.engine.targets.pallas_call.intercept import call_reader
from pallas_puzzles.engine.targets.pallas_call.intercept.session import StrictSession, StrictViolation, session_scope
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import CaseResult


def multiple_sizes(puzzle: Puzzle) -> dict[str, int] | None:
    """The sizes to check; None when the puzzle has no TPU cases, or the first is a case already run."""
    tpu = puzzle.cases.get(TPU.cases)
    return dict(tpu[0]) if tpu and tpu[0] not in puzzle.cases_for(INTERPRET) else None


def check(puzzle: Puzzle, entry: Any, learner_file: Path, backend: Backend) -> CaseResult | None:
    """A failed case when an index map leaves the arrays at the multiple sizes; None otherwise
    (also when the launcher cannot run at those sizes: that says nothing about its grid)."""
    import jax

    sizes = multiple_sizes(puzzle)
    if sizes is None or not backend.interprets:  # a device runs the TPU cases themselves
        return None
    started = time.perf_counter()
    session = StrictSession(backend=backend, learner_file=str(learner_file), allow_revisits=puzzle.revisits_allowed,
                            cores=puzzle.cores, run_kernels=False)
    inputs = specs.make_inputs(puzzle, sizes, 0)
    try:
        with session_scope(session), jax.default_device(jax.devices("cpu")[0]), \
                contextlib.redirect_stdout(io.StringIO()):
            entry(*specs.on_device(inputs))
    except StrictViolation as exc:
        if exc.finding.kind is not FindingKind.OOB_BLOCK:
            return None
        label = f"{specs.case_label(sizes)} (exact multiples of the blocks: index maps checked, kernel not run)"
        return CaseResult(label=label, passed=False, findings=(exc.finding,), seconds=time.perf_counter() - started,
                          sizes=sizes, calls=tuple(call_reader.layout(r) for r in session.calls))
    except Exception:  # the launcher does not run at these sizes: no verdict on its grid
        return None
    return None
