"""One small typed function per command. Each returns the process exit code.

`cli` only parses arguments and calls these; all output goes through `render`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.syntax import Syntax

from pallas_puzzles import render
from pallas_puzzles.errors import EXIT_FAIL, EXIT_PASS, UserError
from pallas_puzzles.metadata import Course, Puzzle, load_course
from pallas_puzzles.state import State, load_state, save_state
from pallas_puzzles.workspace import (
    Workspace,
    find_workspace,
    init_workspace,
    install_solution,
    reference_solution,
    reset_exercise,
)

Confirm = Callable[[str], bool]


def _open(console: Console) -> tuple[Workspace, Course, State]:
    workspace = find_workspace()
    course = load_course()
    state, warning = load_state(workspace, course)
    if warning:
        render.warning(console, warning)
        save_state(workspace, state)
    return workspace, course, state


def _learner_file(workspace: Workspace, puzzle: Puzzle) -> Path:
    path = workspace.exercise(puzzle)
    if not path.is_file():
        raise UserError(f"{path} is missing; `pallas-puzzles reset {puzzle.number}` restores the original exercise.")
    return path


def _require_backend_support(puzzle: Puzzle, backend: str) -> None:
    if not puzzle.supports(backend):
        idiom = f" ({puzzle.tpu_only_idiom})" if puzzle.tpu_only_idiom else ""
        raise UserError(
            f"Puzzle {puzzle.number} uses an idiom{idiom} that the {backend} backend does not run; "
            f"it runs on: {', '.join(puzzle.backends)}."
        )


def record_pass(workspace: Workspace, state: State, puzzle: Puzzle) -> Path:
    state.solved.add(puzzle.number)
    save_state(workspace, state)
    return install_solution(workspace, puzzle)


# --------------------------------------------------------------------------


def cmd_init(console: Console, directory: Path) -> int:
    course = load_course()
    workspace = init_workspace(directory, course)
    from pallas_puzzles.state import fresh_state

    save_state(workspace, fresh_state(course))
    render.info(console, f"Created a workspace with {len(course.puzzles)} puzzles in {workspace.root}.")
    tours = [p for p in course.puzzles if p.tour]
    if tours:
        render.info(console, f"Start by reading {workspace.exercise(tours[0]).relative_to(workspace.root)}: a solved, runnable tour of Pallas.")
    render.info(console, f"Then: cd {directory} && pallas-puzzles watch")
    return EXIT_PASS


def cmd_verify(console: Console, key: str | None, check_all: bool, backend: str, solutions: bool = False) -> int:
    from pallas_puzzles.worker import WorkerPool

    workspace, course, state = _open(console)
    puzzles = list(course.puzzles) if check_all else [course.find(key if key is not None else state.current)]
    # Checks are dominated by single-threaded compiles: one worker per core for --all.
    size = min(len(puzzles), os.cpu_count() or 1, 4) if check_all else 1
    with WorkerPool(backend, size) as pool:
        resolved = pool.start()
        if pool.warning:
            render.warning(console, pool.warning)
        if resolved == "tpu-lower":
            render.info(console, "Checking that kernels lower for a TPU (Mosaic's lowering, cross-compiled on this machine)…")
        else:
            render.info(console, f"Checking on the {resolved} backend…")
        jobs = []
        for puzzle in puzzles:
            if check_all and not puzzle.supports(resolved):
                render.info(console, f"- puzzle {puzzle.number} skipped: it does not run on {resolved} ({', '.join(puzzle.backends)} only)")
                continue
            _require_backend_support(puzzle, resolved)
            jobs.append((puzzle, reference_solution(puzzle) if solutions else _learner_file(workspace, puzzle)))
        failures = 0
        for (puzzle, _), result in zip(jobs, pool.check_in_order(jobs)):
            render.render_result(console, result, puzzle)
            if result.passed and not solutions and not puzzle.tour:
                record_pass(workspace, state, puzzle)
            failures += not result.passed
    if check_all:
        render.info(console, f"{len(jobs) - failures} passed, {failures} failed")
    return EXIT_PASS if failures == 0 else EXIT_FAIL


def cmd_lower(console: Console, key: str | None, check_all: bool, solutions: bool) -> int:
    """Check, without a TPU, that kernels lower for one (see tpu_lowering)."""
    return cmd_verify(console, key, check_all, "tpu-lower", solutions)


def cmd_doctor(console: Console) -> int:
    from pallas_puzzles.doctor import diagnose_installation

    report = diagnose_installation()
    render.render_doctor(console, report)
    return EXIT_PASS if report.healthy else EXIT_FAIL


def verify_file(path: str) -> int:
    """`python exercises/07_long_sum.py`: check the file by its name."""
    console = render.make_console()
    file = Path(path).resolve()
    try:
        course = load_course()
        puzzle = course.by_file(file.name)
        if puzzle is None:
            raise UserError(f"{file.name} is not a puzzle file of this course.")
        from pallas_puzzles.worker import Worker

        with Worker("auto") as worker:
            worker.start()
            result = worker.check(puzzle, file)
        render.render_result(console, result, puzzle)
        return EXIT_PASS if result.passed else EXIT_FAIL
    except UserError as exc:
        render.error(console, exc.message)
        return exc.exit_code


def next_hint_level(workspace: Workspace, state: State, puzzle: Puzzle) -> tuple[int, bool]:
    """Reveal one more hint level and save it.

    Returns (level to show, whether every hint had already been shown); level 0
    means the puzzle has no hints.
    """
    total = len(puzzle.hints)
    seen = state.hints_seen.get(puzzle.number, 0)
    if total == 0:
        return 0, True
    if seen >= total:
        return total, True
    state.hints_seen[puzzle.number] = seen + 1
    save_state(workspace, state)
    return seen + 1, False


def show_next_hint(console: Console, workspace: Workspace, state: State, puzzle: Puzzle) -> None:
    level, exhausted = next_hint_level(workspace, state, puzzle)
    if level == 0:
        render.info(console, f"Puzzle {puzzle.number} has no hints.")
        return
    if exhausted:
        render.info(console, f"No hints left for puzzle {puzzle.number}: all {level} are repeated below.")
    render.render_hint(console, puzzle, level)


def cmd_hint(console: Console, key: str | None) -> int:
    workspace, course, state = _open(console)
    puzzle = course.find(key) if key is not None else course.find(state.current)
    show_next_hint(console, workspace, state, puzzle)
    return EXIT_PASS


def cmd_list(console: Console) -> int:
    workspace, course, state = _open(console)
    render.render_list(console, course, state.solved, state.current, workspace.exercises)
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


def cmd_reset(console: Console, key: str, yes: bool, confirm: Confirm) -> int:
    workspace, course, state = _open(console)
    puzzle = course.find(key)
    question = f"Replace {puzzle.file} with the original stub (your version is backed up first)?"
    if not _confirm_or_fail(question, yes, confirm, "--yes"):
        render.info(console, "Nothing was changed.")
        return EXIT_PASS
    backup = reset_exercise(workspace, puzzle)
    if backup is not None:
        render.info(console, f"Your version was saved as {backup}.")
    render.info(console, f"Restored {workspace.exercise(puzzle)}.")
    return EXIT_PASS


def cmd_solution(console: Console, key: str | None, yes: bool, confirm: Confirm) -> int:
    workspace, course, state = _open(console)
    puzzle = course.find(key) if key is not None else course.find(state.current)
    if puzzle.number not in state.solved and not puzzle.tour:
        question = f"Puzzle {puzzle.number} is not solved yet. Show the reference solution anyway?"
        if not _confirm_or_fail(question, yes, confirm, "--yes"):
            render.info(console, "Keep going, the hints (`pallas-puzzles hint`) may help.")
            return EXIT_PASS
    source = reference_solution(puzzle)
    console.print(Syntax(source.read_text(encoding="utf-8"), "python", line_numbers=True))
    return EXIT_PASS


def cmd_watch(console: Console, backend: str, poll: bool) -> int:
    from pallas_puzzles.watch import run_watch

    workspace, course, state = _open(console)
    return run_watch(console, workspace, course, state, backend, poll)
