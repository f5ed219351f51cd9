"""`grade SUBMISSION...`: many learners' work checked against one course, as one table.

A submission is a workspace (its `exercises/` are graded) or a plain folder of exercise files.
Each (submission, puzzle) pair is one check on a pool of checkers, under the puzzle's time limit
(or `--time-limit`) and a memory limit; a file that is not there is marked missing without a
check, and a puzzle that cannot run here is marked skipped. Results are not cached: a grade is
always a fresh check.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from pathlib import Path

from pallas_puzzles.backends import Mode
from pallas_puzzles.checking import support
from pallas_puzzles.checking.grade_results import Cell, GradeTable, Submission
from pallas_puzzles.course import source as course_source
from pallas_puzzles.course.model import Course, Puzzle
from pallas_puzzles.errors import EXIT_INTERNAL, EXIT_PASS, UserError
from pallas_puzzles.output import Output
from pallas_puzzles.report.live import RunProgress
from pallas_puzzles.results import Status
from pallas_puzzles.worker.client import Limits
from pallas_puzzles.workspace.folder import Workspace

MISSING, SKIPPED = "missing", "skipped"
Say = Callable[[str], None]


def submission(given: str, course: Course, warn: Say) -> Submission:
    """A submission folder; warns when it is a workspace made from another course."""
    path = Path(given)
    if not path.is_dir():
        raise UserError(f"{given} is not a folder; a submission is a workspace or a folder of exercise files.")
    folder = path / "exercises" if (path / "exercises").is_dir() else path
    with contextlib.suppress(UserError):
        record = course_source.recorded(Workspace(path.resolve()))
        if record is not None and record.get("course") and record["course"] != course.name:
            warn(f"{given} is a workspace of the course '{record['course']}', graded here against '{course.name}'.")
    if not any((folder / p.file).is_file() for p in course.counted):
        warn(f"{given} holds none of the course's exercise files; every puzzle is marked missing.")
    return Submission(given, folder)


def grade(course: Course, submissions: list[Submission], requested: str, limits: Limits,
          progress: Callable[[int], RunProgress]) -> GradeTable:
    """Check every submission's file of every counted puzzle; the table of their verdicts."""
    from pallas_puzzles.worker.pool import WorkerPool, check_by_target, pool_size

    table = GradeTable(course, submissions)
    jobs: list[tuple[Submission, Puzzle, Path]] = []
    for sub in submissions:
        for puzzle in course.counted:
            file = sub.folder / puzzle.file
            if file.is_file():
                jobs.append((sub, puzzle, file))
            else:
                table.cells[(sub.name, puzzle.name)] = Cell(MISSING, message=f"{puzzle.file} is not there")
    waiting: list[WorkerPool] = []  # started to learn the backend, not yet checking

    def open_pool(target: str, size: int) -> WorkerPool:
        early = next((p for p in waiting if p.target == target), None)
        if early is not None:
            waiting.remove(early)
            return early
        pool = WorkerPool(requested, pool_size(size), Mode.RUN, target, limits)
        pool.start()
        return pool

    try:
        if jobs:
            waiting.append(open_pool(jobs[0][1].target, len(jobs)))
            backend = waiting[0].backend
            table.backend = backend.name
            runnable = []
            for sub, puzzle, file in jobs:
                refusal = support.refusal(puzzle, backend)
                if refusal is None:
                    runnable.append((sub, puzzle, file))
                else:
                    table.cells[(sub.name, puzzle.name)] = Cell(SKIPPED, refusal.kind.id, refusal.sentence)
            runnable.sort(key=lambda job: job[1].target)  # one pool per target
            with progress(len(runnable)) as bar:
                verdicts = check_by_target([(p, f) for _, p, f in runnable], open_pool,
                                           on_start=bar.started, on_done=bar.finished)
                for (sub, puzzle, _), result in zip(runnable, verdicts):
                    table.cells[(sub.name, puzzle.name)] = Cell.of(result)
    finally:
        for pool in waiting:
            pool.stop()
    return table


def cmd_grade(out: Output, given: list[str], course_name: str | None, requested: str, csv_file: str | None,
              json_file: str | None, seconds: float, memory_mib: int) -> int:
    """The `grade` command: the table goes to the files named (`-`: stdout; CSV on stdout by default)."""
    from pallas_puzzles.course.reader import load_course
    from pallas_puzzles.report import grade_table

    if seconds < 0 or memory_mib < 0:
        raise UserError("--time-limit and --memory-limit take positive numbers (0: the puzzle's own time limit, "
                        "no memory limit).")
    writes = {name: view for name, view in ((csv_file, grade_table.csv_text), (json_file, grade_table.json_text))
              if name} or {"-": grade_table.csv_text}
    if csv_file == json_file == "-":
        raise UserError("Only one of --csv and --json can go to stdout (-); give the other a file name.")
    course = load_course(course_source.resolve(course_name or course_source.BUILTIN).folder)
    submissions = [submission(name, course, out.warning) for name in dict.fromkeys(given)]
    table = grade(course, submissions, requested, Limits(seconds, memory_mib),
                  lambda total: RunProgress(out.notices, total, "Grading"))
    for name, view in writes.items():
        if name == "-":
            sys.stdout.write(view(table))
            sys.stdout.flush()
        else:
            Path(name).write_text(view(table), encoding="utf-8")
            out.info(f"Wrote {name}.")
    grade_table.render(out.notices, table)
    errors = any(cell.status == Status.ERROR.value for cell in table.cells.values())
    return EXIT_INTERNAL if errors else EXIT_PASS
