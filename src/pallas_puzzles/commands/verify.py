"""`verify`, `lower` and `perf`: check puzzles once and say what was found; `python exercises/NN.py` too."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from pallas_puzzles import backends
from pallas_puzzles.backends import LOWERING_CHIP, Backend, Mode
from pallas_puzzles.checking import service, support
from pallas_puzzles.checking.events import Listener
from pallas_puzzles.checking.jobs import Job, Options, RunReport
from pallas_puzzles.commands.common import open_progress, shown_path
from pallas_puzzles.course import source as course_source
from pallas_puzzles.course.model import Course, Puzzle
from pallas_puzzles.course.reader import load_course
from pallas_puzzles.errors import EXIT_FAIL, EXIT_INTERNAL, EXIT_PASS, UserError
from pallas_puzzles.output import Output
from pallas_puzzles.perf import rechip
from pallas_puzzles.report import sentences
from pallas_puzzles.report.formats import Verdict
from pallas_puzzles.report.live import RunProgress
from pallas_puzzles.results import CheckResult, Status
from pallas_puzzles.worker.limits import learner_limits
from pallas_puzzles.workspace.folder import find_workspace, reference_solution
from pallas_puzzles.workspace.progress import PassOutcome, Progress


def cmd_perf(out: Output, key: str | None, requested: str, solution: bool, chip_name: str | None,
             check_all: bool = False) -> int:
    """Check one puzzle (or all) and show what its kernel costs on a TPU; on an accelerator, time it too."""
    from pallas_puzzles.engine.targets.timing import RUNS

    if chip_name:  # an unknown chip, or one of the wrong kind, is bad input: say so before any work
        _check_chip(chip_name, None if check_all else open_progress(out).puzzle(key))
    return cmd_verify(out, key, check_all, requested, solution, card=True, chip_name=chip_name, full_card=True,
                      timed_runs=RUNS)


def _check_chip(chip_name: str, puzzle: Puzzle | None) -> None:
    from pallas_puzzles.engine import targets

    if puzzle is None:
        rechip.check_chip(chip_name)
    else:
        rechip.check_chip(chip_name, puzzle.number, targets.get(puzzle.target).gpu_card)


class _Warned(Listener):
    def __init__(self, out: Output) -> None:
        self.out = out

    def warned(self, message: str) -> None:
        self.out.warning(message)


class _Shown(_Warned):
    """What `verify` prints as its run goes: each verdict in course order (recording each pass), then
    the puzzles skipped, the verdicts kept from earlier checks and the format's summary or document."""

    in_job_order = True

    def __init__(self, out: Output, progress: Progress, many: bool, solutions: bool, card: bool,
                 chip_name: str | None, full_card: bool = False) -> None:
        super().__init__(out)
        self.progress, self.many, self.solutions = progress, many, solutions
        self.card, self.chip_name, self.full_card = card, chip_name, full_card
        self.results: list[CheckResult] = []  # the verdicts shown so far
        self.passed: tuple[Puzzle, PassOutcome] | None = None  # one puzzle checked, and it passed

    def resolved(self, backend: Backend, mode: Mode) -> None:
        if mode is Mode.LOWER:
            self.out.info(f"Checking that kernels lower for a {LOWERING_CHIP} (Mosaic's lowering, run on this machine; "
                          f"nothing runs on a TPU)…")
        else:
            self.out.info(f"Checking on the {backend.name} backend…")

    def cached(self, job: Job, result: CheckResult) -> None:
        self.finished(job, result)

    def finished(self, job: Job, result: CheckResult) -> None:
        if self.chip_name:
            result.cases = rechip.for_named_chip(result.cases, self.chip_name)
        self.results.append(result)
        full_card = self.full_card or self.progress.course.teaches_cost(job.puzzle)  # else the card's one line
        self.out.write(self.out.format.check(Verdict(job.puzzle, result, card=self.card, full_card=full_card,
                                                     one_of_many=self.many)))
        if result.passed and not self.solutions:
            self.passed = (job.puzzle, self.progress.record_pass(job.puzzle))

    def done(self, report: RunReport) -> None:
        for line in support.grouped([(o.puzzle, o.refusal) for o in report.refused if o.refusal is not None]):
            self.out.info(line)
        if report.from_cache and self.progress.workspace is not None:
            self.out.info(sentences.kept_verdicts(report.from_cache,
                                                  shown_path(self.progress.workspace.meta / "results")))
        self.out.write(self.out.format.run(dataclasses.replace(report, course=self.progress.course, many=self.many)))
        if self.passed is not None and not self.many:
            self._lead_on(*self.passed)

    def _lead_on(self, puzzle: Puzzle, outcome: PassOutcome) -> None:
        """After the current puzzle passes, it moves on as watch does, and says where to."""
        if puzzle != self.progress.current:  # an earlier puzzle checked again: the learner stays where they are
            return
        if outcome.upcoming is not None:
            self.progress.move_to(outcome.upcoming)
        if self.out.format.document:
            return
        said = [] if puzzle.tour else [sentences.solved(puzzle)]
        if outcome.solution is not None:
            said.append(f"Compare with the reference solution: {shown_path(outcome.solution, folder=False)}")
        if outcome.upcoming is None:
            said.append(sentences.COURSE_FINISHED)
        else:
            said.append(sentences.next_puzzle(outcome.upcoming))
            said.append(f"Edit {shown_path(self.progress.exercise(outcome.upcoming), folder=False)}; "
                        f"`pallas-puzzles verify` checks it (`pallas-puzzles watch` checks every save).")
        for line in said:
            self.out.info(line)


def cmd_verify(out: Output, key: str | None, check_all: bool, requested: str, solutions: bool = False,
               mode: Mode = Mode.RUN, card: bool = True, chip_name: str | None = None, full_card: bool = False,
               timed_runs: int = 0) -> int:
    progress = open_progress(out)
    puzzles = list(progress.course.puzzles) if check_all else [progress.puzzle(key)]
    jobs = [Job(p, reference_solution(p) if solutions else progress.learner_file(p), requested, mode)
            for p in puzzles]
    # A document for an autograder checks every file afresh: stored verdicts live in the learner's workspace.
    options = Options(workspace=progress.workspace, use_stored=out.format.trusts_stored,
                      refusal_is_bad_input=not check_all, limits=learner_limits(), timed_runs=timed_runs)
    shown = _Shown(out, progress, check_all, solutions, card and not check_all and mode is Mode.RUN, chip_name,
                   full_card)
    verb = "Lowering" if mode is Mode.LOWER else "Checking"
    try:
        with RunProgress(out.console, len(jobs), verb, enabled=not out.format.document) as bar:
            report = service.run(jobs, options, [bar, shown])
    except KeyboardInterrupt:  # say how far it got; the boundary then exits 130
        if check_all:
            out.info(sentences.interrupted(len(shown.results), len(puzzles), shown.results))
        raise
    return exit_code(report.results)


def _course_around(file: Path) -> Course:
    """The course of the workspace holding `file`; the built-in course outside any workspace."""
    try:
        workspace = find_workspace(file.parent)
    except UserError:
        return load_course()
    return course_source.course_of(workspace)


def exit_code(results: list[CheckResult]) -> int:
    """3 when a checker failed (no verdict), else 0 when every check passed, else 1."""
    if any(r.status is Status.ERROR for r in results):
        return EXIT_INTERNAL
    return EXIT_PASS if all(r.passed for r in results) else EXIT_FAIL


def verify_file(path: str) -> int:
    """`python exercises/07_long_sum.py`: check that file as its puzzle, like `verify`."""
    from pallas_puzzles.boundary import run_guarded

    out = Output.make()

    def check() -> int:
        file = Path(path).resolve()
        puzzle = _course_around(file).by_file(file.name)
        if puzzle is None:
            raise UserError(f"{file.name} is not a puzzle file of this course.")
        report = service.run([Job(puzzle, file, backends.AUTO)], Options(refusal_is_bad_input=True,
                                                                         limits=learner_limits()), [_Warned(out)])
        out.write(out.format.check(Verdict(puzzle, report.results[0])))
        return exit_code(report.results)

    return run_guarded(check, out.error)
