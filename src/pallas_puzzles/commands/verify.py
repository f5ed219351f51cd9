"""`verify`, `lower` and `perf`: check puzzles once and say what was found; `python exercises/NN.py` too."""

from __future__ import annotations

import datetime
from pathlib import Path

from pallas_puzzles import backends
from pallas_puzzles.backends import Backend, Mode
from pallas_puzzles.checking import support
from pallas_puzzles.checking.service import Run
from pallas_puzzles.checking.service import check_all as check_all_puzzles
from pallas_puzzles.commands.common import open_progress, shown_path
from pallas_puzzles.course import source as course_source
from pallas_puzzles.course.model import Course, Puzzle
from pallas_puzzles.course.reader import load_course
from pallas_puzzles.errors import EXIT_FAIL, EXIT_INTERNAL, EXIT_PASS, UserError
from pallas_puzzles.output import Output
from pallas_puzzles.perf.model import for_chip
from pallas_puzzles.report import sentences
from pallas_puzzles.report.formats import RunReport, Verdict
from pallas_puzzles.report.live import RunProgress
from pallas_puzzles.results import CheckResult, Status
from pallas_puzzles.workspace.folder import find_workspace, reference_solution


def cmd_perf(out: Output, key: str | None, requested: str, solution: bool, chip_name: str | None) -> int:
    """Check one puzzle and show what its kernel costs on a TPU."""
    from pallas_puzzles.perf import chips

    chips.chip(chip_name)  # an unknown generation is bad input: say so before any work
    return cmd_verify(out, key, False, requested, solution, card=True, chip_name=chip_name)


def cmd_verify(out: Output, key: str | None, check_all: bool, requested: str, solutions: bool = False,
               mode: Mode = Mode.RUN, card: bool = True, chip_name: str | None = None) -> int:
    started = datetime.datetime.now()
    progress = open_progress(out)
    puzzles = list(progress.course.puzzles) if check_all else [progress.puzzle(key)]
    files = {p.name: reference_solution(p) if solutions else progress.learner_file(p) for p in puzzles}
    # A document for an autograder checks every file afresh: stored verdicts live in the learner's workspace.
    run = Run(progress.workspace, files, requested, mode, use_stored=out.format.trusts_stored)
    report = RunReport(many=check_all, course=progress.course, puzzles=puzzles, started=started)
    if not check_all:
        support.require(puzzles[0], None)  # a jax too old: say so before any checker starts

    def refuse(backend: Backend) -> None:
        if not check_all:
            support.require(puzzles[0], backend, mode)

    def verdict(puzzle: Puzzle, result: CheckResult) -> None:
        if chip_name:
            result.cases = for_chip(result.cases, chip_name)
        one = Verdict(puzzle, result, card=card and not check_all and mode is Mode.RUN, one_of_many=check_all)
        report.verdicts.append(one)
        out.write(out.format.check(one))
        if result.passed and not solutions:
            progress.record_pass(puzzle)

    verb = "Lowering" if mode is Mode.LOWER else "Checking"
    try:
        with RunProgress(out.console, len(puzzles), verb, enabled=not out.format.document) as bar:
            backend = check_all_puzzles(run, puzzles, bar, out.info, out.warning, refuse, verdict)
    except KeyboardInterrupt:  # say how far it got; the boundary then exits 130
        if check_all:
            out.info(sentences.interrupted(len(run.results), len(puzzles), run.results))
        raise
    for puzzle in run.skipped:
        refusal = support.refusal(puzzle, backend, mode)
        report.skipped.append((puzzle, refusal.sentence if refusal else "it does not run here."))
        out.info(f"- puzzle {puzzle.number} skipped: {report.skipped[-1][1]}")
    if run.from_cache:
        out.info(sentences.kept_verdicts(run.from_cache, shown_path(progress.workspace.meta / "results")))
    report.backend, report.seconds = backend.name, (datetime.datetime.now() - started).total_seconds()
    out.write(out.format.run(report))
    if any(r.status is Status.ERROR for r in run.results):
        return EXIT_INTERNAL
    return EXIT_PASS if all(r.passed for r in run.results) else EXIT_FAIL


def _course_around(file: Path) -> Course:
    """The course of the workspace holding `file`; the built-in course outside any workspace."""
    try:
        workspace = find_workspace(file.parent)
    except UserError:
        return load_course()
    return course_source.course_of(workspace)


def verify_file(path: str) -> int:
    """`python exercises/07_long_sum.py`: check that file as its puzzle, like `verify`."""
    from pallas_puzzles.boundary import run_guarded

    out = Output.make()

    def check() -> int:
        file = Path(path).resolve()
        puzzle = _course_around(file).by_file(file.name)
        if puzzle is None:
            raise UserError(f"{file.name} is not a puzzle file of this course.")
        from pallas_puzzles.worker.client import Worker

        support.require(puzzle, None)
        with Worker(backends.AUTO, target=puzzle.target) as worker:
            backend = worker.start()
            if worker.warning:
                out.warning(worker.warning)
            support.require(puzzle, backend)
            result = worker.check(puzzle, file)
        out.write(out.format.check(Verdict(puzzle, result)))
        return EXIT_PASS if result.passed else EXIT_FAIL

    return run_guarded(check, out.error)
