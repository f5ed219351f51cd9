"""`grade SUBMISSION...`: many learners' work checked against one course, as one table.

A submission is a workspace (its `exercises/` are graded) or a plain folder of exercise files.
Without --course, the course is the one the workspaces record (`.pallas_puzzles/course.json`), and
workspaces of different courses are refused; with neither, the built-in course.
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

from pallas_puzzles.checking import service
from pallas_puzzles.checking.grade_results import GradeJob, GradeTable, Submission
from pallas_puzzles.checking.jobs import Options
from pallas_puzzles.course import source as course_source
from pallas_puzzles.course.model import Course
from pallas_puzzles.course.reader import load_course
from pallas_puzzles.errors import EXIT_INTERNAL, EXIT_PASS, UserError
from pallas_puzzles.output import Output
from pallas_puzzles.report.live import RunProgress
from pallas_puzzles.results import Status
from pallas_puzzles.worker.limits import Limits
from pallas_puzzles.workspace.folder import MARKER, Workspace

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


def recorded_course(given: list[str]) -> Course | None:
    """Without --course: the course the submitted workspaces were made from (each records its own);
    None when none records one (plain folders of files). Workspaces of different courses cannot make
    one table: that is refused, in one sentence."""
    courses: dict[tuple[str, Path], list[str]] = {}
    for name in given:
        path = Path(name)
        if not (path / MARKER).is_dir() or course_source.recorded(Workspace(path.resolve())) is None:
            continue
        try:
            course = course_source.course_of(Workspace(path.resolve()))
        except UserError as exc:
            raise UserError(f"{name}: {exc.message}") from None
        courses.setdefault((course.name, course.folder), []).append(name)
    if len(courses) > 1:
        mix = "; ".join(f"{', '.join(names)}: '{course}' ({folder})" for (course, folder), names in courses.items())
        raise UserError(f"These workspaces come from different courses ({mix}); grade each course's workspaces "
                        f"on their own, or name the one to grade against with --course.")
    if not courses:
        return None
    (_, folder), = courses
    return load_course(folder)


def grade_jobs(course: Course, submissions: list[Submission], requested: str) -> list[GradeJob]:
    """A check of every submission's file of every counted puzzle; a file not handed in has none."""
    return [GradeJob(puzzle, sub.folder / puzzle.file, requested, submission=sub)
            for sub in submissions for puzzle in course.counted if (sub.folder / puzzle.file).is_file()]


def cmd_grade(out: Output, given: list[str], course_name: str | None, requested: str, csv_file: str | None,
              json_file: str | None, seconds: float, memory_mib: int) -> int:
    """The `grade` command: the table goes to the files named (`-`: stdout; CSV on stdout by default)."""
    from pallas_puzzles.report import grade_table

    if seconds < 0 or memory_mib < 0:
        raise UserError("--time-limit and --memory-limit take positive numbers (0: the puzzle's own time limit, "
                        "no memory limit).")
    writes = {name: view for name, view in ((csv_file, grade_table.csv_text), (json_file, grade_table.json_text))
              if name} or {"-": grade_table.csv_text}
    if csv_file == json_file == "-":
        raise UserError("Only one of --csv and --json can go to stdout (-); give the other a file name.")
    course = recorded_course(given) if course_name is None else None
    if course is not None:
        out.info(f"Grading against {course.heading} ({course.folder}), the course these workspaces were made "
                 f"from; --course names another.")
    else:
        course = load_course(course_source.resolve(course_name or course_source.BUILTIN).folder)
    submissions = [submission(name, course, out.warning) for name in dict.fromkeys(given)]
    jobs = grade_jobs(course, submissions, requested)
    with RunProgress(out.notices, len(jobs), "Grading") as bar:
        # Never from stored verdicts: those live in the submission, which its author controls.
        report = service.run(jobs, Options(limits=Limits(seconds, memory_mib, "raise --memory-limit")), [bar])
    table = GradeTable(course, submissions, report)
    for name, view in writes.items():
        if name == "-":
            sys.stdout.write(view(table))
            sys.stdout.flush()
        else:
            Path(name).write_text(view(table), encoding="utf-8")
            out.info(f"Wrote {name}.")
    grade_table.render(out.notices, table)
    return EXIT_INTERNAL if table.report.count(Status.ERROR) else EXIT_PASS
