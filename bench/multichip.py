"""Drive the multi-device chapter through the tpu-multichip target in one fresh process, and time it.

    python bench/multichip.py [all|stubs|solutions|mistakes|correct|warm] [--only NAME]

The process is set up as a checker for the target is (engine/targets/process.py: the host device
count before JAX starts, then the target's hooks). Every stub must fail, every solution pass, every
mistake of the chapter in course/builtin/mistakes.toml fail with its kind and name its line, every correct
alternative in course/builtin/correct.toml pass. After each deadlock the chapter's solution is checked again at
once: it must pass. `warm` checks each solution three times and reports the first and the median of
the others (a started process, a freshly loaded file each time, every shape case). Exits 1 on any
unmet expectation, or a warm check of 3 s or more.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any

from pallas_puzzles.backends import Mode
from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.course.reader import builtin_folder, load_course
from pallas_puzzles.engine.checker import check_puzzle
from pallas_puzzles.engine.targets import process
from pallas_puzzles.engine.targets.tpu_multichip.target import TpuMultichip
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import CheckResult

REPO = Path(__file__).resolve().parents[1]


def entries(table: str, names: set[str]) -> list[dict[str, Any]]:
    key = "mistake" if table == "mistakes" else "correct"
    return [e for e in tomllib.loads((builtin_folder() / f"{table}.toml").read_text())[key] if e["puzzle"] in names]


def build(entry: dict[str, Any], puzzle: Puzzle, folder: Path) -> Path:
    source = puzzle.solution_path.read_text()
    for edit in entry["edits"]:
        assert source.count(edit["old"]) == 1, f"{entry['name']}: an edit's old text must occur once"
        source = source.replace(edit["old"], edit["new"])
    path = folder / f"{entry['name']}.py"
    path.write_text(source)
    return path


def describe(result: CheckResult) -> str:
    if result.passed:
        traffic = max((c.traffic for c in result.cases if c.traffic), key=lambda t: t.devices, default=None)
        return f"pass{f' ({traffic.ratio:.2g}x the minimum traffic)' if traffic else ''}"
    case = result.first_failure
    finding = result.finding or (case.finding if case else None)
    text = result.kind.id if result.kind else "?"
    if finding is not None:
        text += f" [{', '.join(str(w.line) for w in finding.where)}] {finding.message}"
    elif case is not None and case.mismatch is not None:
        text += f" ({case.mismatch.n_bad} of {case.mismatch.total} wrong, {case.label})"
    return text


def meets(result: CheckResult, expect: Any) -> bool:
    if isinstance(expect, bool):
        return result.passed is expect
    if result.passed or result.kind is not FindingKind.by_id(expect["kind"]):
        return False
    case = result.first_failure
    finding = result.finding or (case.finding if case else None)
    return not expect["line"] or any(expect["line"] in w.text for w in (finding.where if finding else ()))


def warm(started: process.Started, puzzles: list[Puzzle]) -> int:
    slow = []
    for puzzle in puzzles:
        times = []
        for _ in range(3):
            began = time.perf_counter()
            check_puzzle(puzzle, puzzle.solution_path, started.backend, target=started.target)
            times.append(time.perf_counter() - began)
        print(f"{puzzle.number} {puzzle.name:26} first {times[0]:.2f} s, warm {statistics.median(times[1:]):.2f} s")
        slow += [puzzle.name] if statistics.median(times[1:]) >= 3.0 else []
    print(f"warm checks of 3 s or more: {slow}" if slow else "every warm check under 3 s")
    return 1 if slow else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", nargs="?", default="all",
                        choices=["all", "stubs", "solutions", "mistakes", "correct", "warm"])
    parser.add_argument("--only", default="", help="one puzzle, mistake or alternative by name")
    args = parser.parse_args()
    began = time.perf_counter()
    started = process.start(TpuMultichip.name, "interpret", Mode.RUN)
    print(f"checker set up with {TpuMultichip.setup.host_devices} devices in {time.perf_counter() - began:.2f} s")
    puzzles = [p for p in load_course().puzzles if p.target == TpuMultichip.name]
    if args.what == "warm":
        return warm(started, puzzles)
    by_name = {p.name: p for p in puzzles}
    folder = Path(tempfile.mkdtemp(prefix="multichip-"))
    jobs: list[tuple[str, Puzzle, Path, Any]] = []
    for p in puzzles:
        if args.what in ("all", "stubs"):
            jobs.append(("stub", p, p.stub_path, False))
        if args.what in ("all", "solutions"):
            jobs.append(("solution", p, p.solution_path, True))
    for table in ("mistakes", "correct"):
        if args.what in ("all", table):
            jobs += [(e["name"], by_name[e["puzzle"]], build(e, by_name[e["puzzle"]], folder),
                      True if table == "correct" else e) for e in entries(table, set(by_name))]
    unmet, deadlocks = [], []
    for name, puzzle, path, expect in jobs:
        if args.only and args.only not in (name, puzzle.name):
            continue
        began = time.perf_counter()
        result = check_puzzle(puzzle, path, started.backend, target=started.target)
        seconds = time.perf_counter() - began
        ok = meets(result, expect)
        unmet += [] if ok else [name]
        print(f"{'ok ' if ok else 'BAD'} {seconds:5.2f}s {puzzle.name:25} {name:40} {describe(result)}"[:400])
        if result.kind is FindingKind.DEADLOCK:  # the very next check, of the solution, must run clean
            began = time.perf_counter()
            after = check_puzzle(puzzle, puzzle.solution_path, started.backend, target=started.target)
            deadlocks.append((name, seconds, after.passed, time.perf_counter() - began))
    for name, seconds, passed, after in deadlocks:
        print(f"deadlock {name}: found in {seconds:.2f} s; "
              f"the solution next: {'pass' if passed else 'FAIL'} in {after:.2f} s")
    unmet += [name for name, seconds, passed, _ in deadlocks if not passed or seconds >= 5]
    print(f"{len(unmet)} unmet: {unmet}" if unmet else "every expectation met")
    return 1 if unmet else 0


if __name__ == "__main__":
    sys.exit(main())
