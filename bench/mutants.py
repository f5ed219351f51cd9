"""Mutants of every reference solution: does the checker catch learner-like edits?

    python bench/mutants.py [PUZZLE ...] [--jobs N] [--verbose]

Each reference solution is edited in learner-like ways (bench/mutations.py: `pl.cdiv`
rounding down, swapped index_map results, off-by-one `pl.ds` starts, a dropped `.wait()`,
a shared semaphore, a `pl.when` guard removed or negated, "arbitrary" <-> "parallel",
a running maximum starting at 0, a dropped `preferred_element_type`, a removed mask) and
every mutant is checked on the interpret backend by the checker pool, as `verify --all`
does. A mutant is

  caught      the check fails (any finding),
  equivalent  it passes and tests/mutants_equivalent.toml says why it is correct,
  awaiting    it passes and the same file names the class of issue 18 that will catch it
              (a class another change closes; the entry must go once it is caught),
  missed      it passes and nothing explains why.

Prints caught / equivalent / awaiting / missed per puzzle and every mutant not caught;
exits 1 when one is missed, or when a listed mutant is caught or no longer exists.
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
from pallas_puzzles.course.model import Puzzle  # noqa: E402
from pallas_puzzles.course.reader import load_course  # noqa: E402
from pallas_puzzles.worker.pool import WorkerPool, pool_size  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
LISTED = REPO / "tests" / "mutants_equivalent.toml"


@dataclass(frozen=True)
class Verdict:
    puzzle: Puzzle
    mutant: Mutant
    caught: bool
    kind: str  # the finding kind that caught it ("" when it passed)


def listed() -> dict[tuple[str, str], dict[str, str]]:
    """(puzzle name, mutant id) -> its entry: `reason` (equivalent) or `awaiting` (a class of issue 18)."""
    data = tomllib.loads(LISTED.read_text(encoding="utf-8"))
    entries = data.get("equivalent", []) + data.get("awaiting", [])
    return {(e["puzzle"], e["mutant"]): e for e in entries}


def all_mutants(puzzles: Iterable[Puzzle]) -> list[tuple[Puzzle, Mutant]]:
    return [(p, m) for p in puzzles for m in mutants_of(p.solution_path.read_text(encoding="utf-8"))]


def check_all(jobs: list[tuple[Puzzle, Mutant]], workers: int) -> list[Verdict]:
    """Check every mutant with the checker pool (fail fast: the first failing case decides)."""
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for n, (puzzle, mutant) in enumerate(jobs):
            path = Path(tmp) / f"{Path(puzzle.file).stem}_m{n}.py"
            path.write_text(mutant.source, encoding="utf-8")
            files.append((puzzle, path))
        with WorkerPool(INTERPRET.name, pool_size(len(files), workers)) as pool:
            pool.start()
            results = list(pool.check_in_order(files))
    return [Verdict(p, m, not r.passed, r.kind.id if r.kind is not None else "")
            for (p, m), r in zip(jobs, results)]


def status(verdict: Verdict, entries: dict[tuple[str, str], dict[str, str]]) -> str:
    entry = entries.get((verdict.puzzle.name, verdict.mutant.id))
    if verdict.caught:
        return "caught" if entry is None else "caught-but-listed"
    if entry is None:
        return "missed"
    return "awaiting" if "awaiting" in entry else "equivalent"


def stale_entries(puzzles: Iterable[Puzzle], entries: dict[tuple[str, str], dict[str, str]],
                  jobs: list[tuple[Puzzle, Mutant]]) -> list[tuple[str, str]]:
    """Listed mutants of these puzzles that no longer exist (the solution changed)."""
    names = {p.name for p in puzzles}
    existing = {(p.name, m.id) for p, m in jobs}
    return [key for key in entries if key[0] in names and key not in existing]


def report(verdicts: list[Verdict], entries: dict[tuple[str, str], dict[str, str]], verbose: bool) -> dict[str, int]:
    totals = dict.fromkeys(("caught", "equivalent", "awaiting", "missed", "caught-but-listed"), 0)
    print(f"{'puzzle':32} {'mutants':>7} {'caught':>6} {'equiv':>6} {'await':>6} {'missed':>6}")
    by_puzzle: dict[str, list[Verdict]] = {}
    for v in verdicts:
        by_puzzle.setdefault(v.puzzle.label, []).append(v)
    for label, group in by_puzzle.items():
        counts = dict.fromkeys(totals, 0)
        for v in group:
            counts[status(v, entries)] += 1
        for key in totals:
            totals[key] += counts[key]
        print(f"{label:32} {len(group):7} {counts['caught']:6} {counts['equivalent']:6} {counts['awaiting']:6} "
              f"{counts['missed']:6}")
    print(f"{'total':32} {len(verdicts):7} {totals['caught']:6} {totals['equivalent']:6} {totals['awaiting']:6} "
          f"{totals['missed']:6}")
    for v in verdicts:
        state = status(v, entries)
        if state in ("missed", "caught-but-listed") or (verbose and state != "caught"):
            print(f"  {state:17} {v.puzzle.name}: {v.mutant.id} (line {v.mutant.line})")
        elif verbose:
            print(f"  {state:17} {v.puzzle.name}: {v.mutant.id} -> {v.kind}")
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
    verdicts = check_all(jobs, args.jobs or pool_size(len(jobs)))
    totals = report(verdicts, entries, args.verbose)
    stale = stale_entries(puzzles, entries, jobs)
    for puzzle, mutant in stale:
        print(f"  stale entry       {puzzle}: {mutant} (no such mutant any more)")
    print(f"{len(jobs)} mutants in {time.perf_counter() - started:.0f} s")
    return 1 if totals["missed"] or totals["caught-but-listed"] or stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
