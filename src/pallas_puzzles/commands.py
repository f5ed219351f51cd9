"""One small function per command; each returns the process exit code.

`cli` parses arguments and calls these inside the one error boundary. Progress
rules live in `progress`, output in `report`: a command only wires them up.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from pallas_puzzles import backends, support
from pallas_puzzles.backends import Backend, Mode
from pallas_puzzles.course_file import load_course
from pallas_puzzles.errors import EXIT_FAIL, EXIT_INTERNAL, EXIT_PASS, UserError
from pallas_puzzles.metadata import Puzzle
from pallas_puzzles.perf.model import for_chip
from pallas_puzzles.progress import Progress
from pallas_puzzles.report import json_view, perf_card, terminal
from pallas_puzzles.report.live import RunProgress
from pallas_puzzles.results import CheckResult, Status
from pallas_puzzles.runs import Run
from pallas_puzzles.runs import check_all as check_all_puzzles
from pallas_puzzles.state import fresh_state, save_state
from pallas_puzzles.workspace import find_workspace, init_workspace, reference_solution

Confirm = Callable[[str], bool]


@dataclass(frozen=True)
class Output:
    """Where a command's output goes: views on stdout; notices on stderr when stdout is JSON."""

    console: Console
    notices: Console
    as_json: bool = False

    @classmethod
    def make(cls, as_json: bool = False) -> Output:
        console = terminal.make_console()
        return cls(console, terminal.make_console(stderr=True) if as_json else console, as_json)

    def info(self, message: str) -> None:
        terminal.info(self.notices, message)

    def warning(self, message: str) -> None:
        terminal.warning(self.notices, message)

    def error(self, message: str) -> None:
        terminal.error(self.notices, message)
        if self.as_json:
            json_view.emit(json_view.error_document(message))


def open_progress(out: Output) -> Progress:
    return Progress.open(find_workspace(), load_course(), warn=out.warning)


def cmd_init(out: Output, directory: Path) -> int:
    course = load_course()
    workspace = init_workspace(directory, course)
    save_state(workspace, fresh_state(course))
    out.info(f"Created a workspace with {len(course.puzzles)} puzzles in {workspace.root}.")
    tours = [p for p in course.puzzles if p.tour]
    if tours:
        out.info(f"Start by reading {workspace.exercise(tours[0]).relative_to(workspace.root)}: "
                 f"a solved, runnable tour of Pallas.")
    out.info(f"Then: cd {directory} && pallas-puzzles watch")
    return EXIT_PASS


def cmd_perf(out: Output, key: str | None, requested: str, solution: bool, chip_name: str | None) -> int:
    """Check one puzzle and show what its kernel costs on a TPU."""
    from pallas_puzzles.perf import chips

    chips.chip(chip_name)  # an unknown generation is bad input: say so before any work
    return cmd_verify(out, key, False, requested, solution, card=True, chip_name=chip_name)


def cmd_verify(out: Output, key: str | None, check_all: bool, requested: str, solutions: bool = False,
               mode: Mode = Mode.RUN, card: bool = True, chip_name: str | None = None) -> int:
    progress = open_progress(out)
    puzzles = list(progress.course.puzzles) if check_all else [progress.puzzle(key)]
    files = {p.name: reference_solution(p) if solutions else progress.learner_file(p) for p in puzzles}
    run = Run(progress.workspace, files, requested, mode)
    if not check_all:
        support.require(puzzles[0], None)  # a jax too old: say so before any checker starts

    def refuse(backend: Backend) -> None:
        if not check_all:
            support.require(puzzles[0], backend, mode)

    def verdict(puzzle: Puzzle, result: CheckResult) -> None:
        if chip_name:
            result.cases = for_chip(result.cases, chip_name)
        if not out.as_json:
            terminal.render_result(out.console, result, puzzle)
            if card and not check_all and mode is Mode.RUN:
                perf_card.render_after_pass(out.console, result)
        if result.passed and not solutions:
            progress.record_pass(puzzle)

    verb = "Lowering" if mode is Mode.LOWER else "Checking"
    with RunProgress(out.console, len(puzzles), verb, enabled=not out.as_json) as bar:
        backend = check_all_puzzles(run, puzzles, bar, out.info, out.warning, refuse, verdict)
    results = run.results
    for puzzle in run.skipped:
        refusal = support.refusal(puzzle, backend, mode)
        out.info(f"- puzzle {puzzle.number} skipped: {refusal.sentence if refusal else 'it does not run here.'}")
    if run.from_cache:
        out.info(f"{run.from_cache} unchanged file(s) kept the verdict of their last check "
                 f"(delete {progress.workspace.meta / 'results'} to check them again).")
    failed = len([r for r in results if not r.passed])
    if out.as_json:
        json_view.emit(json_view.summary_document(results, [p.number for p in run.skipped]) if check_all
                       else json_view.result_document(results[0]))
    elif check_all:
        out.info(f"{len(results) - failed} passed, {failed} failed")
    if any(r.status is Status.ERROR for r in results):
        return EXIT_INTERNAL
    return EXIT_PASS if failed == 0 else EXIT_FAIL


def cmd_lower(out: Output, key: str | None, check_all: bool, solutions: bool) -> int:
    """Check, without a TPU, that kernels lower for one."""
    return cmd_verify(out, key, check_all, backends.TPU.name, solutions, mode=Mode.LOWER)


def verify_file(path: str) -> int:
    """`python exercises/07_long_sum.py`: check that file as its puzzle, like `verify`."""
    from pallas_puzzles.boundary import run_guarded

    out = Output.make()

    def check() -> int:
        file = Path(path).resolve()
        puzzle = load_course().by_file(file.name)
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
        terminal.render_result(out.console, result, puzzle)
        return EXIT_PASS if result.passed else EXIT_FAIL

    return run_guarded(check, out.error)


def cmd_doctor(out: Output) -> int:
    from pallas_puzzles.doctor import diagnose_installation

    report = diagnose_installation()
    terminal.render_doctor(out.console, report)
    return EXIT_PASS if report.healthy else EXIT_FAIL


def cmd_hint(out: Output, key: str | None) -> int:
    progress = open_progress(out)
    puzzle = progress.puzzle(key)
    terminal.render_hint_reveal(out.console, puzzle, progress.reveal_hint(puzzle))
    return EXIT_PASS


def cmd_list(out: Output) -> int:
    progress = open_progress(out)
    if out.as_json:
        json_view.emit(json_view.list_document(progress))
    else:
        terminal.render_list(out.console, progress)
    return EXIT_PASS


def interactive() -> bool:
    """Whether there is a person at a terminal to answer a question."""
    return bool(sys.stdin is not None and sys.stdin.isatty())


def _confirm_or_fail(question: str, yes: bool, confirm: Confirm, flag_hint: str) -> bool:
    if yes:
        return True
    if not interactive():
        raise UserError(f"{question.rstrip('?')}: no terminal to ask at; pass {flag_hint} to confirm.")
    return confirm(question)


def cmd_reset(out: Output, key: str, yes: bool, confirm: Confirm) -> int:
    progress = open_progress(out)
    puzzle = progress.puzzle(key)
    question = f"Replace {puzzle.file} with the original stub (your version is backed up first)?"
    if not _confirm_or_fail(question, yes, confirm, "--yes"):
        out.info("Nothing was changed.")
        return EXIT_PASS
    backup = progress.reset(puzzle)
    if backup is not None:
        out.info(f"Your version was saved as {backup}.")
    out.info(f"Restored {progress.exercise(puzzle)}.")
    return EXIT_PASS


def cmd_solution(out: Output, key: str | None, yes: bool, confirm: Confirm) -> int:
    progress = open_progress(out)
    puzzle = progress.puzzle(key)
    if not progress.is_solved(puzzle) and not puzzle.tour:
        question = f"Puzzle {puzzle.number} is not solved yet. Show the reference solution anyway?"
        if not _confirm_or_fail(question, yes, confirm, "--yes"):
            out.info("Keep going, the hints (`pallas-puzzles hint`) may help.")
            return EXIT_PASS
    terminal.render_source(out.console, reference_solution(puzzle))
    return EXIT_PASS


def cmd_watch(out: Output, requested: str, poll: bool) -> int:
    from pallas_puzzles.watch import run_watch

    return run_watch(out.console, open_progress(out), requested, poll)



def cmd_show(out: Output, key: str | None, requested: str, solution: bool, case: int | None,
             html_file: Path | None, open_browser: bool) -> int:
    """The grid step-through of a puzzle's kernel: in the terminal, or as an HTML page."""
    from pallas_puzzles.report import stepper
    from pallas_puzzles.report.show import check_target, view_of, write_page
    from pallas_puzzles.worker.client import Worker

    progress = open_progress(out)
    puzzle = progress.puzzle(key)
    file = reference_solution(puzzle) if solution else progress.learner_file(puzzle)
    if html_file is not None:
        check_target(html_file)  # before the run: a bad name should not cost a check
    support.require(puzzle, None)
    with Worker(requested, target=puzzle.target) as worker:
        backend = worker.start()
        if worker.warning:
            out.warning(worker.warning)
        support.require(puzzle, backend)
        cases = len(puzzle.cases_for(backend))
        if case is not None and case > cases:
            raise UserError(f"There is no shape case {case}: puzzle {puzzle.number} has {cases} on the "
                            f"{backend.name} backend (pick --case 1 to {cases}).")
        out.info(f"Running puzzle {puzzle.number} on the {backend.name} backend to record its grid…")
        result = worker.check(puzzle, file, fail_fast=case is None)
    if result.status is Status.ERROR:
        terminal.render_result(out.console, result, puzzle)
        return EXIT_INTERNAL
    size = stepper.board_size_for(out.console.width) if html_file is None else 48
    try:
        view = view_of(result, puzzle, case, size)
    except UserError as exc:
        if exc.exit_code != EXIT_FAIL:
            raise
        terminal.render_result(out.console, result, puzzle)  # nothing ran to draw: show why
        out.info(exc.message)
        return EXIT_FAIL
    if html_file is None:
        stepper.step_through(out.console, view)
    else:
        written = write_page(html_file, view)
        out.info(f"Wrote {written}.")
        if open_browser:
            import webbrowser

            if not webbrowser.open(written.as_uri()):
                out.info("No browser could be opened here; open the file yourself.")
    shown = view.verdict.endswith("passed.")
    return EXIT_PASS if shown else EXIT_FAIL
