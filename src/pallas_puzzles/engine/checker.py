"""Check one puzzle: load the learner's file, hand every shape case to the puzzle's target.

This runs inside the checker process (or the notebook's), with JAX started and
the target's hooks installed, and returns plain data; rendering happens elsewhere.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import io
import itertools
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from pallas_puzzles.backends import Backend, Mode
from pallas_puzzles.checking import support
from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.engine import device_faults, targets
from pallas_puzzles.engine.case import LOWERED_APART, LOWERED_HERE, ONLY_LOWERED, Case
from pallas_puzzles.engine.file_faults import encoding_finding, exit_finding, import_finding, syntax_finding
from pallas_puzzles.engine.integrity import file_rules, guard
from pallas_puzzles.engine.learner_lines import make_line, read_source, remember_source
from pallas_puzzles.engine.targets.base import Target
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import CaseResult, CaseSpan, CheckResult, Finding

_module_counter = itertools.count()


def load_learner_module(path: Path, text: str | None = None, tree: ast.Module | None = None) -> ModuleType:
    """Run a learner's file as a fresh module, so every save is re-read.

    The text that runs is the text every finding quotes (see remember_source),
    and no bytecode is written next to the learner's file. `tree`: the text already parsed.
    """
    if text is None:
        text = read_source(path)
    filename = str(path)
    remember_source(filename, text)
    code = compile(tree if tree is not None else text, filename, "exec")
    name = f"pallas_puzzles_learner_{path.stem}_{next(_module_counter)}"
    module = ModuleType(name)
    module.__file__ = filename
    sys.modules[name] = module  # dataclasses and pickling look their module up while it runs
    try:
        exec(code, module.__dict__)
    finally:
        sys.modules.pop(name, None)
    return module


@functools.cache
def _pristine_stub(stub: Path) -> tuple[Path, str] | None:
    """The course's own exercise file and its text; it never changes while a worker lives."""
    try:
        original = stub.resolve()
        return original, read_source(original)
    except OSError:
        return None


def _not_started(puzzle: Puzzle, path: Path, text: str) -> Finding | None:
    """A finding when the file is still the original stub: nothing of the learner's to judge."""
    stub = _pristine_stub(puzzle.stub_path)
    # The course's own stub checked as itself (dev check): judged by running it, not as "not started".
    if stub is None or stub[0] == path.resolve():
        return None
    if puzzle.tour or text != stub[1]:
        return None
    todo = tuple(make_line(str(path), n + 1) for n, line in enumerate(text.splitlines()) if "TODO" in line)
    return Finding(FindingKind.NOT_STARTED,
                   f"You have not started puzzle {puzzle.number} yet: {path.name} is the original exercise.",
                   where=todo)


def _load(result: CheckResult, puzzle: Puzzle, learner_file: Path) -> Any:
    """The learner's entry point, or None with the reason added to the result."""
    try:
        text = read_source(learner_file)
    except UnicodeDecodeError as exc:  # the file's bytes (a decode error the learner's code raises is theirs)
        result.findings.append(encoding_finding(exc))
        return None
    try:
        not_started = _not_started(puzzle, learner_file, text)
        if not_started is not None:  # wrong by design: running it would only show a wall of mismatches
            result.findings.append(not_started)
            return None
        tree = ast.parse(text, filename=str(learner_file))
        remember_source(str(learner_file), text)
        reached = file_rules.scan(tree, str(learner_file))
        if reached is not None:  # refused before it runs: running it could read the answer
            result.findings.append(reached)
            return None
        module = load_learner_module(learner_file, text, tree)
    except SyntaxError as exc:
        result.findings.append(syntax_finding(exc, str(learner_file)))
        return None
    except SystemExit as exc:  # sys.exit() at the top of the file: not the end of the checker
        result.findings.append(exit_finding(exc, str(learner_file), importing=True))
        return None
    except Exception as exc:
        result.findings.append(import_finding(exc, str(learner_file)))
        return None
    entry = getattr(module, puzzle.entry, None)
    if not callable(entry):
        result.findings.append(Finding(
            FindingKind.MISSING_ENTRY, f"Your file has no function named {puzzle.entry}(); the checker calls it."))
        return None
    return entry


@functools.cache
def _target(name: str) -> Target:
    target = targets.get(name)()
    target.start()
    return target


def check_puzzle(puzzle: Puzzle, learner_file: Path, backend: Backend, mode: Mode = Mode.RUN,
                 fail_fast: bool = True, target: Target | None = None, timed_runs: int = 0,
                 cases: CaseSpan | None = None) -> CheckResult:
    """Check a learner's file for one puzzle on one backend (or only lower it for a TPU).

    `target` is the started target this process checks with; by default the one that runs the
    puzzle's chapter on `backend` in `mode`, started here (tests and scripts). `timed_runs`: on an
    accelerator, also time each passing case over that many compiled calls. `cases`: only the shape
    cases from `start` up to `stop`, for a part of a check another process shares (worker/split.py);
    a part that starts past the first case leaves out what loading the file printed, which the first
    part reports.
    """
    def load_and_run(result: CheckResult, printed: io.StringIO) -> None:
        entry = _load(result, puzzle, learner_file)
        if entry is not None:
            if cases is not None and cases.start > 0:
                printed.seek(0)
                printed.truncate()
            started = target or _target(targets.partner_name(puzzle.target, backend, mode) or puzzle.target)
            _run_cases(result, puzzle, entry, learner_file, backend, started, fail_fast, timed_runs, cases)

    return _checked(puzzle, learner_file, backend, mode, load_and_run)


def _checked(puzzle: Puzzle, learner_file: Path, backend: Backend, mode: Mode,
             body: Callable[[CheckResult, io.StringIO], None]) -> CheckResult:
    """A result filled by `body`, timed and with what the learner's code printed; when the puzzle
    cannot run here it holds only the refusal (commands refuse earlier)."""
    start = time.perf_counter()
    result = CheckResult(number=puzzle.number, name=puzzle.name, file=str(learner_file),
                         backend=backend.name, passed=False, mode=mode.value)
    refusal = support.refusal(puzzle, backend, mode)
    if refusal is not None:
        result.findings.append(Finding(refusal.kind, refusal.sentence))
        return result
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), guard.watching(puzzle, str(learner_file)) as watch:
        body(result, printed)
    if watch.found:  # the learner's code read the course's files: whatever the cases said, that comes first
        result.findings.insert(0, watch.found[0])
        result.passed = False
    result.printed = printed.getvalue()
    result.seconds = time.perf_counter() - start
    return result


def _run_cases(result: CheckResult, puzzle: Puzzle, entry: Any, learner_file: Path, backend: Backend,
               target: Target, fail_fast: bool, timed_runs: int = 0, span: CaseSpan | None = None) -> None:
    every = puzzle.cases_for(backend)
    span = span or CaseSpan(0, len(every))

    def run(index: int, lowering: str) -> CaseResult:
        running = Case(puzzle, index, every[index], learner_file, backend, timed_runs, lowering=lowering)
        try:
            case = target.run_case(running, entry)
        except SystemExit as exc:  # the launcher called sys.exit(): a finding at its line, and the checker goes on
            target.reset()
            case = running.done(False, exit_finding(exc, str(learner_file), importing=False))
        return device_faults.recognised(case)

    def lowering(index: int) -> str:
        if span.ends_at_lowering and index == span.stop - 1:
            return ONLY_LOWERED
        return LOWERED_APART if span.starts_after_lowering and index == span.start else LOWERED_HERE

    for index in range(span.start, span.stop):
        case = run(index, lowering(index))
        result.cases.append(case)
        if not case.passed and (fail_fast or case.lost_device):
            result.skipped_cases = span.stop - index - 1
            break
    passed = all(c.passed for c in result.cases) and len(result.cases) == span.stop - span.start
    # the checks after every case belong to the part that ends with the last case
    last = span.stop == len(every) and not span.ends_at_lowering
    late = target.after_cases(puzzle, entry, learner_file, backend) if passed and last else None
    result.cases += [late] if late is not None else []
    result.passed = passed and late is None


def check_function(puzzle: Puzzle, entry: Any, backend: Backend, target: Target, fail_fast: bool = True) -> CheckResult:
    """Check a launcher already in memory (a notebook cell, a script) in this process: no file to load.

    Findings name lines of the file Python compiled the function from; for a
    notebook cell that is the cell (IPython keeps its text in linecache).
    """
    import inspect

    code = getattr(inspect.unwrap(entry), "__code__", None)
    learner_file = Path(code.co_filename if code is not None else "<function>")
    return _checked(puzzle, learner_file, backend, Mode.RUN,
                    lambda result, _: _run_cases(result, puzzle, entry, learner_file, backend, target, fail_fast))
