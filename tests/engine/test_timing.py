"""perf's measured time on an accelerator: the median of compiled calls, only for a passing case there.

No accelerator is needed: a backend whose platform is the CPU stands in for one (the timing code asks
JAX for the backend's platform, as it would for a GPU).
"""

from __future__ import annotations

import dataclasses

import jax
import numpy as np
from helpers import COURSE

from pallas_puzzles.backends import INTERPRET, Backend
from pallas_puzzles.engine.case import Case
from pallas_puzzles.engine.targets.timing import median_call_seconds, timed
from pallas_puzzles.results import CaseResult

CPU_AS_ACCELERATOR = Backend("gpu", "cpu", "CPU standing in for a GPU")
PUZZLE = COURSE.find("constant_add")


def _case(backend: Backend, timed_runs: int) -> Case:
    return Case(PUZZLE, 0, dict(PUZZLE.cases_for(INTERPRET)[0]), PUZZLE.solution_path, backend, timed_runs)


def _plus_ten(x):
    return x + 10.0


def test_a_compiled_call_is_timed_after_one_untimed_call():
    calls = []

    def counted(x):
        calls.append(1)  # runs once per trace: jax.jit traces once, then reuses the compiled call
        return x * 2.0

    seconds = median_call_seconds(counted, [np.ones(8, np.float32)], jax.devices("cpu")[0], 5)
    assert seconds is not None and 0 < seconds < 1.0
    assert len(calls) == 1


def test_a_launcher_jit_cannot_trace_gets_no_time():
    def concrete(x):
        return x + float(np.asarray(x).sum())  # needs concrete values: not traceable

    assert median_call_seconds(concrete, [np.ones(8, np.float32)], jax.devices("cpu")[0], 5) is None


def test_only_a_passing_case_on_an_accelerator_that_asked_for_a_time_gets_one():
    passed = CaseResult(label="N=8", passed=True, seconds=0.5)
    measured = timed(_case(CPU_AS_ACCELERATOR, 3), _plus_ten, passed)
    assert measured.measured_seconds is not None and measured.measured_seconds > 0
    assert dataclasses.replace(measured, measured_seconds=None) == passed  # nothing else changes
    assert timed(_case(CPU_AS_ACCELERATOR, 0), _plus_ten, passed).measured_seconds is None
    assert timed(_case(INTERPRET, 3), _plus_ten, passed).measured_seconds is None
    failed = dataclasses.replace(passed, passed=False)
    assert timed(_case(CPU_AS_ACCELERATOR, 3), _plus_ten, failed).measured_seconds is None


def test_the_interpreter_is_asked_for_times_and_measures_nothing():
    """perf asks every check for times; on the interpreter a time would measure the interpreter, so none is given."""
    from pallas_puzzles.engine.checker import check_puzzle

    result = check_puzzle(PUZZLE, PUZZLE.solution_path, INTERPRET, timed_runs=3)
    assert result.passed and result.cases
    assert all(case.measured_seconds is None for case in result.cases)
