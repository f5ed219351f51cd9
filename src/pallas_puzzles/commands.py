"""One small function per command; each returns the process exit code.

`cli` parses arguments and calls these inside the one error boundary. Progress
rules live in `progress`, output in `report`: a command only wires them up.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from rich.console import Console

from pallas_puzzles import backends
from pallas_puzzles.backends import Backend, Mode
from pallas_puzzles.errors import EXIT_FAIL, EXIT_INTERNAL, EXIT_PASS, UserError
from pallas_puzzles.metadata import Puzzle, load_course
from pallas_puzzles.progress import Progress
from pallas_puzzles.report import json_view, terminal
from pallas_puzzles.results import CheckResult, Status
from pallas_puzzles.state import fresh_state, save_state
from pallas_puzzles.workspace import find_workspace, init_workspace, reference_solution

Confirm = Callable[[str], bool]
MAX_WORKERS = 4  # checks are dominated by single-threaded compiles: one worker per core, at most this


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


def require_support(puzzle: Puzzle, backend: Backend) -> None:
    if not puzzle.supports(backend):
        idiom = f" ({puzzle.tpu_only_idiom})" if puzzle.tpu_only_idiom else ""
        raise UserError(
            f"Puzzle {puzzle.number} uses an idiom{idiom} that the {backend.name} backend does not run; "
            f"it runs on: {', '.join(puzzle.backends)}."
        )


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


def show_card(out: Output, result: CheckResult, wanted: bool) -> None:
    """The performance card after a passing check."""
    from pallas_puzzles.report import perf_card

    perf = perf_card.card_case(result) if wanted and result.passed else None
    if perf is not None:
        perf_card.render_card(out.console, perf)


def on_chip(result: CheckResult, chip_name: str) -> None:
    """Re-estimate every case's figures for another TPU generation (the worker used the default)."""
    from pallas_puzzles.perf import chips
    from pallas_puzzles.perf.model import estimate

    chip = chips.chip(chip_name)
    result.cases = [replace(c, performance=estimate(c.calls, c.performance.flops, c.performance.hbm_bytes_min,
                                                    chip, c.label)) if c.performance is not None else c
                    for c in result.cases]


def cmd_perf(out: Output, key: str | None, requested: str, solution: bool, chip_name: str | None) -> int:
    """Check one puzzle and show what its kernel costs on a TPU."""
    from pallas_puzzles.perf import chips

    chips.chip(chip_name)  # an unknown generation is bad input: say so before any work
    return cmd_verify(out, key, False, requested, solution, card=True, chip_name=chip_name)


def cmd_verify(out: Output, key: str | None, check_all: bool, requested: str, solutions: bool = False,
               mode: Mode = Mode.RUN, card: bool = True, chip_name: str | None = None) -> int:
    from pallas_puzzles.worker.pool import WorkerPool

    progress = open_progress(out)
    puzzles = list(progress.course.puzzles) if check_all else [progress.puzzle(key)]
    files = {p.number: reference_solution(p) if solutions else progress.learner_file(p) for p in puzzles}
    size = min(len(puzzles), os.cpu_count() or 1, MAX_WORKERS)
    results: list[CheckResult] = []
    with WorkerPool(requested, size, mode) as pool:
        backend = pool.start()
        if pool.warning:
            out.warning(pool.warning)
        if mode is Mode.LOWER:
            out.info("Checking that kernels lower for a TPU (Mosaic's lowering, cross-compiled on this machine)…")
        else:
            out.info(f"Checking on the {backend.name} backend…")
        if not check_all:
            require_support(puzzles[0], backend)
        skipped = [p for p in puzzles if not p.supports(backend)]
        jobs = [(p, files[p.number]) for p in puzzles if p not in skipped]
        for (puzzle, _), result in zip(jobs, pool.check_in_order(jobs)):
            if chip_name:
                on_chip(result, chip_name)
            results.append(result)
            if not out.as_json:
                terminal.render_result(out.console, result, puzzle)
                show_card(out, result, card and not check_all and mode is Mode.RUN)
            if result.passed and not solutions:
                progress.record_pass(puzzle)
    for puzzle in skipped:
        out.info(f"- puzzle {puzzle.number} skipped: it does not run on {backend.name} "
                 f"({', '.join(puzzle.backends)} only)")
    failed = len([r for r in results if not r.passed])
    if out.as_json:
        json_view.emit(json_view.summary_document(results, [p.number for p in skipped]) if check_all
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

        with Worker(backends.AUTO) as worker:
            backend = worker.start()
            if worker.warning:
                out.warning(worker.warning)
            require_support(puzzle, backend)
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

