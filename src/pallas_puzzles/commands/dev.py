"""The `dev` commands for course authors: each returns the process exit code (see `cli`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pallas_puzzles import backends
from pallas_puzzles.errors import EXIT_FAIL, EXIT_PASS, UserError
from pallas_puzzles.report.live import RunProgress

if TYPE_CHECKING:
    from pallas_puzzles.output import Output

ACCELERATORS = (backends.GPU.name, backends.TPU.name)


def cmd_new(out: Output, directory: Path) -> int:
    from pallas_puzzles.dev.new import new_course

    folder = new_course(directory)
    out.info(f"Wrote a course with one chapter and two puzzles in {folder}.")
    out.info("The course format is described by `pallas-puzzles dev guide`.")
    out.info(f"Check it with `pallas-puzzles dev check {directory}`, measure its time limits with "
             f"`pallas-puzzles dev times {directory} --write`, and try it as a learner with "
             f"`pallas-puzzles init --course {directory} WORKSPACE`.")
    return EXIT_PASS


def cmd_guide(out: Output) -> int:
    """The course-format guide as written (Markdown): whole, to read or to pipe into a pager."""
    from pallas_puzzles.dev.guide import guide_path

    out.console.file.write(guide_path().read_text(encoding="utf-8"))
    out.console.file.flush()
    return EXIT_PASS


def cmd_times(out: Output, directory: Path, write: bool, only: list[str]) -> int:
    """Measure each reference solution's cold check; with `write`, regenerate reference_times.toml."""
    from pallas_puzzles.course import source as course_source
    from pallas_puzzles.course.reader import load_course
    from pallas_puzzles.dev import times

    course = load_course(course_source.resolve(str(directory)).folder)
    for name in only:
        course.find(name)  # a misspelt name is bad input, said before anything is measured
    figures, failed = times.measure(course, out.info, {course.find(name).name for name in only} or None)
    if failed:
        out.error(f"{len(failed)} puzzle(s) got no figure ({', '.join(failed)}); nothing was written.")
        return EXIT_FAIL
    if write:
        out.info(f"Wrote {times.write(course, figures)}.")
    return EXIT_PASS


def cmd_check(out: Output, directory: Path, accelerator: str | None, only: tuple[str, ...] = ()) -> int:
    from pallas_puzzles.dev.check import check_course

    if accelerator is not None and accelerator not in ACCELERATORS:
        raise UserError(f"dev check --backend takes {' or '.join(ACCELERATORS)}: the interpreter runs every "
                        f"check anyway, and this adds the stubs', solutions' and examples' runs on that accelerator.")

    def progress(total: int) -> RunProgress:
        return RunProgress(out.console, total, "Checking the course", enabled=not out.format.document)

    check = check_course(directory, progress, accelerator, only)
    ran = [job.puzzle for job, _ in check.checked]
    if accelerator and check.course is not None and not any(accelerator in p.backends for p in ran):
        out.warning(f"No puzzle checked declares the {accelerator} backend, so nothing ran there.")
    out.write(out.format.course_check(check))
    return EXIT_PASS if check.passed else EXIT_FAIL
