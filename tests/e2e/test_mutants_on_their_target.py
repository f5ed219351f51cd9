"""The mutation harness (bench/mutants.py) checks each mutant on its puzzle's own target.

It once checked every mutant on the TPU interpreter's target, where a multi-chip kernel cannot run:
each one failed with a checker error and was counted as caught. A mutant that is in fact correct
shows the difference: on the multi-chip target it passes (and is reported missed, since no list
explains it); it is never "caught" by an error.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from pallas_puzzles.checking.jobs import Outcome
from pallas_puzzles.checking.support import Refusal
from pallas_puzzles.course.reader import load_course
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import CheckResult, Finding, Status

BENCH = Path(__file__).resolve().parents[2] / "bench"
REMOTE_COPY = load_course().find("remote_copy")  # the first puzzle of the multi-chip chapter


@pytest.fixture()
def mutants(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    return importlib.import_module("mutants")


def test_a_correct_mutant_of_a_multichip_puzzle_passes_on_the_multichip_target(mutants):
    assert REMOTE_COPY.target == "tpu-multichip"
    solution = REMOTE_COPY.solution_path.read_text(encoding="utf-8")
    correct = mutants.Mutant(id="renamed: x", operator="renamed", line=1, before="",
                             source=solution + "\n\nUNUSED = 0  # an edit that changes nothing\n")
    [outcome] = mutants.check_all([(REMOTE_COPY, correct)])
    result = outcome.result
    assert result is not None and outcome.status is Status.PASS, (result.findings if result else outcome.refusal)
    assert all(case.devices > 1 for case in result.cases), "run over several simulated devices"
    assert mutants.status(outcome, {}) == "missed"
    assert mutants.status(outcome, {(REMOTE_COPY.name, correct.id): {"reason": "it changes nothing"}}) == "equivalent"


@pytest.mark.parametrize("kind", [FindingKind.INTERNAL, FindingKind.CRASH, FindingKind.TIMEOUT, FindingKind.MEMORY])
def test_a_checker_error_or_a_limit_is_an_error_never_a_catch(mutants, kind):
    mutant = mutants.mutants_of(REMOTE_COPY.solution_path.read_text(encoding="utf-8"))[0]
    job = mutants.MutantJob(REMOTE_COPY, Path("m.py"), "interpret", mutant=mutant)
    stopped = CheckResult(REMOTE_COPY.number, REMOTE_COPY.name, "m.py", "interpret", passed=False,
                          findings=[Finding(kind, "it happened this time")])
    assert mutants.status(Outcome(job, stopped), {}) == "error"
    assert mutants.status(Outcome(job, refusal=Refusal(FindingKind.JAX_TOO_OLD, "too old")), {}) == "skipped"
