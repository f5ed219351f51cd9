"""tpu-interpret's fast path changes how fast a verdict comes, never what it says.

The guardians (test_course, test_mistakes, test_correct) read the verdicts of `dev check` on the
built-in course, made once per session by checker processes with the fast path on (the
`course_check` fixture); here every job of that check that tpu-interpret ran (stubs, reference
solutions, mistakes, correct alternatives) is checked again by checker processes started with
PALLAS_PUZZLES_FAST=0, and every verdict is compared: pass or fail, the kind, the lines named, the
grid points, the counts of wrong elements. Printed float values may differ in the last place (one
fused program against op by op), so the values themselves are not compared, only which elements are
wrong and how. The other tests pin each lever's behaviour: what is compiled, what is kept.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from helpers import COURSE

from pallas_puzzles.backends import INTERPRET, Mode
from pallas_puzzles.engine import targets
from pallas_puzzles.engine.targets.pallas_call import fast_path
from pallas_puzzles.engine.targets.pallas_call.fast_path import OFF, FastPath
from pallas_puzzles.engine.targets.tpu_interpret import TpuInterpreter
from pallas_puzzles.results import CaseResult, CheckResult, Finding, Mismatch
from pallas_puzzles.source_line import SourceLine

# -- what a verdict is, for comparing -----------------------------------------------------------

_FLOAT = re.compile(r"-?\d+\.\d+(e[-+]?\d+)?|-?\d+e[-+]?\d+")


def _words(text: str) -> str:
    """A message with its decimal numbers rounded to 4 significant digits (ulps apart stay equal)."""
    return _FLOAT.sub(lambda m: f"{float(m.group()):.4g}", text)


def _lines(lines: tuple[SourceLine, ...]) -> tuple[tuple[str, int, str], ...]:
    return tuple((Path(line.file).name, line.line, line.text) for line in lines)


def _finding(finding: Finding) -> tuple[Any, ...]:
    return (finding.kind, _words(finding.message), _lines(finding.where), finding.grid_point, finding.array)


def _mismatch(mismatch: Mismatch | None) -> tuple[Any, ...] | None:
    if mismatch is None:
        return None
    return (mismatch.shape, mismatch.total, mismatch.n_bad, mismatch.n_nan, mismatch.n_unwritten, mismatch.kind,
            mismatch.block_map, mismatch.grid_points, mismatch.more_grid_points, _lines(mismatch.stored_at),
            tuple((e.index, e.fault) for e in mismatch.examples))


def _case(case: CaseResult, cores: int) -> tuple[Any, ...]:
    points = case.grid_points_run
    # Two simulated cores record their grid points from two threads, in either order.
    points = tuple(sorted(points)) if points is not None and cores > 1 else points
    return (case.label, case.passed, tuple(_finding(f) for f in case.findings), _mismatch(case.mismatch),
            points, len(case.calls))


def verdict(result: CheckResult) -> dict[str, Any]:
    """Everything a learner is told, less the float values themselves."""
    cores = COURSE.find(result.name).cores
    return {"passed": result.passed, "kind": result.kind, "skipped cases": result.skipped_cases,
            "findings": [_finding(f) for f in result.findings],
            "cases": [_case(c, cores) for c in result.cases]}


# -- each lever, by what it does ----------------------------------------------------------------

def started(fast: FastPath) -> TpuInterpreter:
    target = TpuInterpreter(fast)
    target.start()
    return target


def test_private_memory_is_read():
    used = fast_path.private_memory_mib()
    assert used is not None and 1 < used < 1e6


def test_where_memory_cannot_be_read_the_caches_go_every_few_puzzles(monkeypatch):
    monkeypatch.setattr(fast_path, "private_memory_mib", lambda: None)
    every = fast_path.PUZZLES_PER_CLEAR
    assert [FastPath().keeps_caches(kept) for kept in range(1, every + 1)] == [True] * (every - 1) + [False]


def test_one_variable_turns_the_whole_fast_path_off(monkeypatch):
    monkeypatch.setenv(fast_path.VARIABLE, "0")
    assert targets.for_check("tpu-interpret", INTERPRET, Mode.RUN).fast == OFF
    monkeypatch.setenv(fast_path.VARIABLE, "1")
    assert targets.for_check("tpu-interpret", INTERPRET, Mode.RUN).fast == FastPath()
    assert FastPath().eager_grid_limit > 0 and FastPath().memory_ceiling_mib > 0 and FastPath().freeze_gc
    assert FastPath().numpy_ops and not OFF.numpy_ops


