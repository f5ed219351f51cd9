"""`show [N]`: the grid step-through of a kernel, in the terminal or as a page."""

from __future__ import annotations

from pathlib import Path

from pallas_puzzles.checking import support
from pallas_puzzles.commands.common import open_progress
from pallas_puzzles.errors import EXIT_FAIL, EXIT_INTERNAL, EXIT_PASS, UserError
from pallas_puzzles.output import Output
from pallas_puzzles.report import terminal
from pallas_puzzles.results import Status
from pallas_puzzles.workspace.folder import reference_solution


def cmd_show(out: Output, key: str | None, requested: str, solution: bool, case: int | None,
             html_file: Path | None, open_browser: bool) -> int:
    """The grid step-through of a puzzle's kernel: in the terminal, or as an HTML page."""
    from pallas_puzzles.report import stepper
    from pallas_puzzles.report.show import NoGrid, check_target, view_of, write_page
    from pallas_puzzles.worker.client import Worker
    from pallas_puzzles.worker.limits import learner_limits

    progress = open_progress(out)
    puzzle = progress.puzzle(key)
    file = reference_solution(puzzle) if solution else progress.learner_file(puzzle)
    if html_file is not None:
        check_target(html_file)  # before the run: a bad name should not cost a check
    support.require(puzzle, None)
    with Worker(requested, target=puzzle.target, limits=learner_limits()) as worker:
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
    except NoGrid as exc:
        terminal.render_result(out.console, result, puzzle)  # nothing ran to draw: the verdict says why
        out.info(exc.short)
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
    return EXIT_PASS if view.passed else EXIT_FAIL
