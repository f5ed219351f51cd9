"""The chapter's rules on one shape case, around tpu-interpret's own check of it.

A rule's finding replaces what the check found when the case ran to the end (passed, or failed
on its numbers): it says *why* in the chapter's terms (the output is not the input's buffer; the
grid is not sized by the count; every block drew the same numbers). A case that stopped on an
error keeps its own finding. Each rule is asked for by the puzzle's target_options (options.py).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pallas_puzzles.engine.targets.pallas_call.explain.launcher_lines import argument_line
from pallas_puzzles.engine.targets.pallas_call.intercept.session import StrictSession, active
from pallas_puzzles.engine.targets.tpu_kernel import options as kernel_options
from pallas_puzzles.engine.targets.tpu_kernel import randomness
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import Finding

if TYPE_CHECKING:
    from pallas_puzzles.engine.case import Case
    from pallas_puzzles.engine.targets.pallas_call.intercept.records import CallRecord
    from pallas_puzzles.results import CaseResult


class _Watched:
    """The learner's launcher, noting the strict session each call of it runs in."""

    def __init__(self, entry: Callable[..., Any]) -> None:
        self.entry, self.sessions = entry, []
        self.__wrapped__ = entry  # for whatever reads the learner's function (its name, its code)

    def __call__(self, *args: Any) -> Any:
        session = active.session
        if session is not None and all(session is not s for s in self.sessions):
            self.sessions.append(session)
        return self.entry(*args)

    def ran(self) -> StrictSession | None:
        """The session the case's kernels ran in (later ones only traced the launcher)."""
        return next((s for s in self.sessions if s.run_kernels), None)


Check = Callable[["Case", Callable[..., Any]], "CaseResult"]


def judged(case: Case, entry: Callable[..., Any], check: Check) -> CaseResult:
    """The case as `check` judges it, with the puzzle's own rules applied where it ran to the end."""
    opts = kernel_options.parse(case.puzzle.target_options)
    watched = _Watched(entry)
    result = check(case, watched)
    session = watched.ran()
    if session is None or not result.ran_to_the_end:
        return result
    inputs, expected, _ = case.data()
    names = [item.name for item in case.puzzle.inputs]
    finding = None
    wrote_some = result.mismatch is None or result.mismatch.n_bad < result.mismatch.total
    if opts.in_place and wrote_some:  # a kernel that wrote nothing right is told about its numbers first
        finding = _in_place(session, inputs[names.index(opts.in_place)], opts.in_place)
    if finding is None and opts.run_time_grid:
        finding = _run_time_grid(session, int(inputs[names.index(opts.run_time_grid)].ravel()[0]))
    numbers = result.passed or (result.mismatch is not None and result.mismatch.kind is FindingKind.MISMATCH_WRONG)
    if finding is None and opts.random is not None and numbers:  # every element written, and finite
        finding = randomness.judge(opts.random, case, entry, session, result.passed)
    if finding is None:
        return result
    return dataclasses.replace(result, passed=False, findings=(finding,), mismatch=None, performance=None)


def _in_place(session: StrictSession, array: Any, name: str) -> Finding | None:
    """Some kernel aliases an input with the array's shape and dtype to one of its outputs."""
    for record in session.calls:
        operands = record.prefetch + record.inputs
        for index in record.aliases:
            operand = operands[index] if index < len(operands) else None
            if operand is not None and operand.array_shape == tuple(array.shape) and operand.dtype == str(array.dtype):
                return None
    record = session.calls[-1] if session.calls else None
    where = tuple(line for line in (argument_line(record.call_line, "input_output_aliases") if record else None,
                                    record.call_line if record else None) if line is not None)
    return Finding(FindingKind.NOT_IN_PLACE,
                   f"The kernel does not update {name} in place: no input_output_aliases entry makes its buffer "
                   "an output, so the output is a fresh buffer and every row the kernel does not write is garbage "
                   "on a TPU.", where=where[:1], array=name)


def _blocked(record: CallRecord) -> tuple[int, int] | None:
    """(rows per block, steps) of the call's first blocked input, when the grid is known."""
    info = next((i for i in record.inputs if i.block_dims), None)
    if info is None or not record.grid or info.block_dims is None:
        return None
    return info.block_dims[0], math.prod(record.grid)


def _run_time_grid(session: StrictSession, count: int) -> Finding | None:
    """The grid runs one step per block of real rows, no more. (A launcher that needs the count as a Python
    number fails under jax.jit: the integrity check of every case says so, at its line.)"""
    for record in session.calls:
        blocked = _blocked(record)
        if blocked is None:
            continue
        rows, steps = blocked
        needed = -(-count // rows)
        if steps > needed:
            grid = argument_line(record.call_line, "grid")
            extra = "the last step reads" if steps - needed == 1 else f"the last {steps - needed} steps read"
            return Finding(FindingKind.STATIC_GRID,
                           f"The grid ran {steps} steps of {rows} rows for {count} real rows, which need {needed}: "
                           f"{extra} rows that hold no data. Size the grid from the count, when the program runs.",
                           where=tuple(line for line in (grid, record.call_line) if line is not None)[:1])
    return None
