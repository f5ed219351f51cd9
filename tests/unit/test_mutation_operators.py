"""Learner-like edits of every reference solution are caught, or listed with a reason (issue 18).

bench/mutants.py makes the mutants with the stdlib `ast` module and checks them with the checker
pool; tests/mutants_equivalent.toml lists the ones that rightly pass (`equivalent`, with a reason)
and the ones another class of issue 18 will catch (`awaiting`).
"""

from __future__ import annotations

import ast
import importlib.util
import sys
import tomllib
from pathlib import Path
from types import ModuleType

from helpers import COURSE

from pallas_puzzles.checking.jobs import Outcome
from pallas_puzzles.results import CheckResult

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


SOURCE = '''
import jax.numpy as jnp
from jax.experimental import pallas as pl

def spec(x):
    return jnp.where(x > 0, x, 0.0)

def kernel(x_ref, z_ref, acc_ref, sems):
    @pl.when(pl.program_id(0) == 0)
    def _init():
        acc_ref[...] = jnp.full(acc_ref.shape, -jnp.inf)
    copy = make_copy(x_ref.at[pl.ds(4 * pl.program_id(0), 4)], sems.at[1])
    copy.wait()
    z_ref[...] = jnp.where(x_ref[...] > 0, jnp.dot(x_ref[...], x_ref[...], preferred_element_type=jnp.float32), 0.0)

def launch(x, n):
    return pl.pallas_call(kernel, grid=(pl.cdiv(n, 8), 2), in_specs=[pl.BlockSpec((8, 8), lambda i, j: (i, j))],
                          compiler_params=dict(dimension_semantics=("parallel", "arbitrary")))(x)
'''


def by_operator(source: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for mutant in harness().mutants_of(source):
        out.setdefault(mutant.operator, []).append(mutant.source)
    return out


def test_each_operator_makes_its_edit_on_the_syntax_tree():
    made = by_operator(SOURCE)
    assert "grid=(n // 8, 2)" in made["cdiv-floor"][0]
    assert "grid=(n // 8 + 1, 2)" in made["cdiv-floor-plus-one"][0]
    assert "lambda i, j: (j, i)" in made["index-map-swap"][0]
    assert "pl.ds(4 * pl.program_id(0) + 1, 4)" in made["ds-start-plus-one"][0]
    assert "pl.ds(4 * pl.program_id(0) - 1, 4)" in made["ds-start-minus-one"][0]
    assert "copy.wait()" not in made["wait-dropped"][0]
    assert "sems.at[0]" in made["semaphore-shared"][0]
    removed = made["when-removed"][0]
    assert "@pl.when" not in removed and "\n    _init()\n" in removed  # the guarded code runs at every step
    assert "pl.when(jnp.logical_not(pl.program_id(0) == 0))" in made["when-negated"][0]
    assert [("'arbitrary', 'arbitrary'" in m, "'parallel', 'parallel'" in m) for m in made["semantics-swapped"]] == [
        (True, False), (False, True)]
    assert "jnp.full(acc_ref.shape, 0.0)" in made["max-init-zero"][0]
    assert "preferred_element_type" not in made["preferred-type-dropped"][0]
    assert "z_ref[...] = jnp.dot(" in made["mask-removed"][0]
    assert len(made["mask-removed"]) == 1, "the file's own spec is for reading: the checker never runs it"


def test_every_mutant_parses_and_differs_from_its_solution():
    for puzzle in COURSE.puzzles:
        source = puzzle.solution_path.read_text()
        original = ast.unparse(ast.parse(source))
        mutants = harness().mutants_of(source)
        assert len({m.id for m in mutants}) == len(mutants), puzzle.name
        for mutant in mutants:
            assert ast.unparse(ast.parse(mutant.source)) != original, (puzzle.name, mutant.id)


def test_every_operator_has_sites_in_the_course():
    operators = {m.operator for p in COURSE.puzzles
                 for m in harness().mutants_of(p.solution_path.read_text())}
    assert operators == {name for name, *_ in harness().OPERATORS}


def test_a_passing_mutant_is_missed_unless_listed_and_a_listed_one_must_keep_passing():
    mutants = harness()
    puzzle = COURSE.find("long_sum")
    mutant = mutants.mutants_of(puzzle.solution_path.read_text())[0]
    passed, caught = (Outcome(mutants.MutantJob(puzzle, puzzle.solution_path, "interpret", mutant=mutant),
                              CheckResult(puzzle.number, puzzle.name, "m.py", "interpret", passed=not c))
                      for c in (False, True))
    key = (puzzle.name, mutant.id)
    assert mutants.status(passed, {}) == "missed"
    assert mutants.status(passed, {key: {"reason": "r"}}) == "equivalent"
    assert mutants.status(passed, {key: {"awaiting": "class 1"}}) == "awaiting"
    assert mutants.status(caught, {}) == "caught"
    assert mutants.status(caught, {key: {"reason": "r"}}) == "caught-but-listed"
    assert (mutants.stale_entries([puzzle], {(puzzle.name, "gone: x"): {}}, [(puzzle, mutant)])
            == [(puzzle.name, "gone: x")])


def test_the_listed_mutants_say_why_in_one_line():
    data = tomllib.loads((REPO / "tests" / "mutants_equivalent.toml").read_text())
    names = {p.name for p in COURSE.puzzles}
    for kind, key in (("equivalent", "reason"), ("awaiting", "awaiting")):
        for entry in data.get(kind, []):
            assert set(entry) == {"puzzle", "mutant", key}, entry
            assert entry["puzzle"] in names
            assert entry[key].strip() and "\n" not in entry[key]
    assert set(data) <= {"equivalent", "awaiting"}
