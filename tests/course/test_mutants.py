"""Learner-like edits of every reference solution are caught, or listed with a reason (issue 18).

bench/mutants.py makes the mutants with the stdlib `ast` module and checks them with the checker
pool; tests/mutants_equivalent.toml lists the ones that rightly pass (`equivalent`, with a reason)
and the ones another class of issue 18 will catch (`awaiting`).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from helpers import COURSE

REPO = Path(__file__).resolve().parents[2]


def harness() -> ModuleType:
    """bench/mutants.py as a module (it finds bench/mutations.py beside itself)."""
    if "mutants" not in sys.modules:
        spec = importlib.util.spec_from_file_location("mutants", REPO / "bench" / "mutants.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["mutants"] = module
        spec.loader.exec_module(module)
    return sys.modules["mutants"]


@pytest.mark.slow
def test_every_mutant_is_caught_or_listed():
    mutants = harness()
    jobs = mutants.all_mutants(COURSE.puzzles)
    entries = mutants.listed()
    verdicts = mutants.check_all(jobs, workers=0)
    states = {(v.puzzle.name, v.job.mutant.id): mutants.status(v, entries) for v in verdicts}
    why = {(v.puzzle.name, v.job.mutant.id): mutants.why(v) for v in verdicts}
    assert [key for key, state in states.items() if state == "missed"] == []
    caught = [(*key, why[key]) for key, state in states.items() if state == "caught-but-listed"]
    assert caught == [], "caught now (delete from tests/mutants_equivalent.toml, or say why the verdict changed)"
    assert mutants.stale_entries(COURSE.puzzles, entries, jobs) == []
