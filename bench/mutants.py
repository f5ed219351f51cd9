"""Mutants of every reference solution: does the checker catch learner-like edits?

    python bench/mutants.py [PUZZLE ...] [--jobs N] [--verbose]

Each reference solution is edited in learner-like ways (bench/mutations.py: `pl.cdiv`
rounding down, swapped index_map results, off-by-one `pl.ds` starts, a dropped `.wait()`,
a shared semaphore, a `pl.when` guard removed or negated, "arbitrary" <-> "parallel",
a running maximum starting at 0, a dropped `preferred_element_type`, a removed mask) and
every mutant is checked on the interpret backend by the checking service, as `verify --all`
does: each on its puzzle's own target (the multi-chip and Mosaic GPU chapters have theirs). A mutant is

  caught      the check fails on a finding about the file,
  equivalent  it passes and tests/mutants_equivalent.toml says why it is correct,
  awaiting    it passes and the same file names the class of issue 18 that will catch it
              (a class another change closes; the entry must go once it is caught),
  missed      it passes and nothing explains why,
  error       no verdict about the file: the checker failed, crashed, or the check ran past a
              time or memory limit (never counted as caught),
  skipped     its puzzle cannot be checked here (a jax too old for it).

Prints the count of each per puzzle, then every mutant missed, in error (with why) or caught though
listed (--verbose: every mutant); exits 1 when one is missed or an error, or when a listed mutant is
caught or no longer exists.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mutations import OPERATORS, Mutant, mutants_of  # noqa: E402,F401  (OPERATORS: for the tests)

from pallas_puzzles.backends import INTERPRET  # noqa: E402
from pallas_puzzles.checking import service  # noqa: E402
from pallas_puzzles.checking.cache import about_the_file  # noqa: E402
from pallas_puzzles.checking.jobs import Job, Options, Outcome  # noqa: E402
from pallas_puzzles.course.model import Puzzle  # noqa: E402
from pallas_puzzles.course.reader import load_course  # noqa: E402
from pallas_puzzles.report.headline import headline  # noqa: E402
from pallas_puzzles.results import Status  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
LISTED = REPO / "tests" / "mutants_equivalent.toml"


STATES = ("caught", "equivalent", "awaiting", "missed", "error", "skipped", "caught-but-listed")


@dataclass(frozen=True, kw_only=True)
class MutantJob(Job):
    """A check of one mutant of a puzzle's reference solution."""

    mutant: Mutant


def listed() -> dict[tuple[str, str], dict[str, str]]:
    """(puzzle name, mutant id) -> its entry: `reason` (equivalent) or `awaiting` (a class of issue 18)."""
    data = tomllib.loads(LISTED.read_text(encoding="utf-8"))
    entries = data.get("equivalent", []) + data.get("awaiting", [])
    return {(e["puzzle"], e["mutant"]): e for e in entries}


def all_mutants(puzzles: Iterable[Puzzle]) -> list[tuple[Puzzle, Mutant]]:
    return [(p, m) for p in puzzles for m in mutants_of(p.solution_path.read_text(encoding="utf-8"))]


def check_all(jobs: list[tuple[Puzzle, Mutant]], workers: int = 0) -> list[Outcome]:
    """Check every mutant (fail fast: the first failing case decides); `workers` 0: as verify --all."""
    with tempfile.TemporaryDirectory() as tmp:
        checks = []
        for n, (puzzle, mutant) in enumerate(jobs):
            path = Path(tmp) / f"{Path(puzzle.file).stem}_m{n}.py"
            path.write_text(mutant.source, encoding="utf-8")
            checks.append(MutantJob(puzzle, path, INTERPRET.name, mutant=mutant))
        return service.run(checks, Options(workers=workers)).outcomes


def _mutant(outcome: Outcome) -> Mutant:
    assert isinstance(outcome.job, MutantJob)
    return outcome.job.mutant


def status(outcome: Outcome, entries: dict[tuple[str, str], dict[str, str]]) -> str:
    """One of STATES. A check that gave no verdict about the file is an error, never a catch."""
    result = outcome.result
    if result is None:
        return "skipped"
    if outcome.status is Status.ERROR or not about_the_file(result):
        return "error"
    entry = entries.get((outcome.puzzle.name, _mutant(outcome).id))
    if not result.passed:
        return "caught" if entry is None else "caught-but-listed"
    if entry is None:
        return "missed"
    return "awaiting" if "awaiting" in entry else "equivalent"


def why(outcome: Outcome) -> str:
    """What the check said of a mutant it did not pass (its refusal or its headline); empty when it passed."""
    if outcome.refusal is not None:
        return outcome.refusal.sentence
    return headline(outcome.result) if outcome.result is not None and not outcome.result.passed else ""


def stale_entries(puzzles: Iterable[Puzzle], entries: dict[tuple[str, str], dict[str, str]],
                  jobs: list[tuple[Puzzle, Mutant]]) -> list[tuple[str, str]]:
    """Listed mutants of these puzzles that no longer exist (the solution changed)."""
    names = {p.name for p in puzzles}
    existing = {(p.name, m.id) for p, m in jobs}
    return [key for key in entries if key[0] in names and key not in existing]


COLUMNS = {"caught": "caught", "equivalent": "equiv", "awaiting": "await", "missed": "missed", "error": "error",
           "skipped": "skip"}


def _row(label: str, mutants: int, counts: dict[str, int]) -> str:
    return f"{label:32} {mutants:7} " + " ".join(f"{counts[state]:6}" for state in COLUMNS)


def report(outcomes: list[Outcome], entries: dict[tuple[str, str], dict[str, str]], verbose: bool) -> dict[str, int]:
    totals = dict.fromkeys(STATES, 0)
    print(f"{'puzzle':32} {'mutants':>7} " + " ".join(f"{name:>6}" for name in COLUMNS.values()))
    by_puzzle: dict[str, list[Outcome]] = {}
    for outcome in outcomes:
        by_puzzle.setdefault(outcome.puzzle.label, []).append(outcome)
    for label, group in by_puzzle.items():
        counts = dict.fromkeys(STATES, 0)
        for outcome in group:
            counts[status(outcome, entries)] += 1
        for key in totals:
            totals[key] += counts[key]
        print(_row(label, len(group), counts))
    print(_row("total", len(outcomes), totals))
    for outcome in outcomes:
        state, mutant = status(outcome, entries), _mutant(outcome)
        if state in ("missed", "error", "caught-but-listed") or verbose:
            said = why(outcome)
            reason = f" -> {said}" if said and (state == "error" or verbose) else ""
            print(f"  {state:17} {outcome.puzzle.name}: {mutant.id} (line {mutant.line}){reason}")
    return totals


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("puzzles", nargs="*", help="puzzle numbers or names (default: every puzzle)")
    parser.add_argument("--jobs", type=int, default=0, help="checker processes (default: as verify --all)")
    parser.add_argument("--verbose", action="store_true", help="list every mutant with its verdict")
    args = parser.parse_args(argv)
    course = load_course()
    puzzles = [course.find(p) for p in args.puzzles] if args.puzzles else list(course.puzzles)
    jobs = all_mutants(puzzles)
    entries = listed()
    started = time.perf_counter()
    outcomes = check_all(jobs, args.jobs)
    totals = report(outcomes, entries, args.verbose)
    stale = stale_entries(puzzles, entries, jobs)
    for puzzle, mutant in stale:
        print(f"  stale entry       {puzzle}: {mutant} (no such mutant any more)")
    print(f"{len(jobs)} mutants in {time.perf_counter() - started:.0f} s")
    return 1 if totals["missed"] or totals["error"] or totals["caught-but-listed"] or stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
