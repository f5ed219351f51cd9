"""Check one puzzle: load the learner's file, run (or lower) every shape case, compare.

This runs inside the checker process (jax imported, the strict pallas_call
installed) and returns plain data; rendering happens elsewhere.
"""

from __future__ import annotations

import contextlib
import functools
import io
import itertools
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from pallas_puzzles import versions
from pallas_puzzles.backends import TPU, Backend, Mode
from pallas_puzzles.engine import launcher_traffic, multiples, probe, specs
from pallas_puzzles.engine.compare import compare
from pallas_puzzles.engine.explain import cause, lowering
from pallas_puzzles.engine.explain.launcher_lines import argument_line
from pallas_puzzles.engine.explain.runtime import (
    diagnose,
    import_finding,
    syntax_finding,
    wrong_out_shape,
)
from pallas_puzzles.engine.explain.source import make_line, remember_source
from pallas_puzzles.engine.intercept import call_reader, dma_watch, patch, poison
from pallas_puzzles.engine.intercept.session import StrictSession, StrictViolation, session_scope
from pallas_puzzles.errors import UserError
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.metadata import Puzzle
from pallas_puzzles.perf.budget import check_budget
from pallas_puzzles.perf.model import Performance, case_performance
from pallas_puzzles.results import CallLayout, CaseResult, CheckResult, Finding
from pallas_puzzles.workspace import course_dir

_module_counter = itertools.count()


def load_learner_module(path: Path, text: str | None = None) -> ModuleType:
    """Run a learner's file as a fresh module, so every save is re-read.

    The text that runs is the text every finding quotes (see remember_source),
    and no bytecode is written next to the learner's file.
    """
    if text is None:
        text = path.read_text(encoding="utf-8")
    filename = str(path)
    remember_source(filename, text)
    code = compile(text, filename, "exec")
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
def _pristine_stub(file: str) -> tuple[Path, str] | None:
    """The course's own exercise file and its text; it never changes while a worker lives."""
    try:
        original = (course_dir("exercises") / file).resolve()
        return original, original.read_text(encoding="utf-8")
    except (UserError, OSError):
        return None


def _not_started(puzzle: Puzzle, path: Path, text: str) -> Finding | None:
    """A finding when the file is still the original stub: nothing of the learner's to judge."""
    stub = _pristine_stub(puzzle.file)
    # In the source checkout the learner edits the course file itself: nothing to compare with.
    if stub is None or stub[0] == path.resolve():
        return None
    if puzzle.tour or text != stub[1]:
        return None
    todo = tuple(make_line(str(path), n + 1) for n, line in enumerate(text.splitlines()) if "TODO" in line)
    return Finding(FindingKind.NOT_STARTED,
                   f"You have not started puzzle {puzzle.number} yet: {path.name} is the original exercise.",
                   where=todo)


_CaseData = tuple[tuple[np.ndarray, ...], np.ndarray, float]
_case_cache: dict[tuple[str, int, tuple[tuple[str, int], ...]], _CaseData] = {}


def _case_data(puzzle: Puzzle, index: int, sizes: dict[str, int]) -> _CaseData:
    """Inputs, the spec's output and its FLOPs for a case; deterministic, so a worker computes them once."""
    key = (puzzle.name, index, tuple(sorted(sizes.items())))
    if key not in _case_cache:
        inputs = specs.make_inputs(puzzle, sizes, index)
        _case_cache[key] = (inputs, *specs.expected_and_flops(puzzle, inputs))
    return _case_cache[key]


def _output_layout(session: StrictSession, shape: tuple[int, ...]) -> tuple[tuple[int, ...] | None, np.ndarray | None]:
    """Block shape and coverage of the pallas_call output that produced a result of `shape`.

    Under jax.vmap the recorded call has the per-example shape: its trailing
    dimensions match and the coverage repeats over the batch dimensions.
    """
    found = session.output_for(shape)
    if found is None:
        return None, None
    _, out, lead = found
    block = (1,) * lead + tuple(out.block_dims) if out.block_dims is not None else None
    covered = np.broadcast_to(out.covered, shape) if out.covered is not None else None
    return block, covered


def _shape_finding(expected: np.ndarray, got: Any, session: StrictSession) -> Finding | None:
    got_shape = tuple(getattr(got, "shape", ()))
    if got_shape != tuple(expected.shape):
        out_shape = [argument_line(r.call_line, "out_shape") for r in session.calls[-1:]]
        return Finding(
            FindingKind.SHAPE,
            f"Your function returned shape {got_shape}; the spec's output has shape {tuple(expected.shape)}.",
            where=tuple(line for line in out_shape if line is not None),
        )
    return None


class _Case:
    """One shape case being checked: its label, sizes and a stopwatch."""

    def __init__(self, puzzle: Puzzle, sizes: dict[str, int], index: int, backend: Backend, learner_file: Path) -> None:
        self.puzzle, self.sizes, self.index = puzzle, sizes, index
        self.label = specs.case_label(sizes, puzzle, index)
        self.started = time.perf_counter()
        self.session = StrictSession(backend=backend, learner_file=str(learner_file),
                                     allow_revisits=puzzle.sequential_grid, cores=puzzle.cores,
                                     detect_races=puzzle.detect_races,
                                     poison=poison.poison_for_case(index), seed=index, dma_mode=dma_watch.mode_for_case(index),
                                     tpu_block_rules=puzzle.tpu_only and backend.interprets)

    @functools.cached_property
    def layouts(self) -> tuple[CallLayout, ...]:
        """The calls the case made, as results data; read once the case has run (the records are final)."""
        return tuple(call_reader.layout(record) for record in self.session.calls)

    def done(self, passed: bool, *findings: Finding, mismatch: Any = None,
             performance: Performance | None = None) -> CaseResult:
        return CaseResult(label=self.label, passed=passed, findings=tuple(findings), mismatch=mismatch,
                          seconds=time.perf_counter() - self.started, sizes=dict(self.sizes),
                          calls=self.layouts,
                          grid_points_run=tuple(self.session.grid_points) if self.session.backend.interprets
                          else None, performance=performance)


def run_case(case: _Case, entry: Any) -> CaseResult:
    import jax

    inputs, expected, flops = _case_data(case.puzzle, case.index, case.sizes)
    interprets = case.session.backend.interprets
    device = jax.devices("cpu")[0] if interprets else None
    try:
        with session_scope(case.session), jax.default_device(device):
            got = jax.block_until_ready(entry(*specs.on_device(inputs)))
    except Exception as exc:  # the learner's code failed: explain it
        finding = diagnose(exc, case.session)
        finding = wrong_out_shape(finding, case.session, tuple(expected.shape)) or finding
        if interprets:
            patch.reset_interpreter()
        return case.done(False, finding)
    if isinstance(got, (tuple, list)) and len(got) == 1:
        got = got[0]
    # A copy nobody waited for comes first: what the output holds is then a matter of chance.
    problem = case.session.unbalanced[0] if case.session.unbalanced else _shape_finding(expected, got, case.session)
    if problem is not None:
        return case.done(False, problem)
    block, covered = _output_layout(case.session, tuple(expected.shape))
    mismatch = compare(expected, np.asarray(got), case.puzzle.rtol, case.puzzle.atol, block, covered)
    if mismatch is not None:
        rerun = functools.partial(probe.rerun, case.session, entry, inputs)
        causes, mismatch = cause.explain(expected, np.asarray(got), mismatch, case.session, covered, rerun)
        return case.done(False, *causes, mismatch=mismatch)
    calls = case.layouts
    launcher = launcher_traffic.measure(entry, inputs, case.puzzle, case.session)
    performance = case_performance(calls, case.label, inputs, expected, flops, launcher)
    budget = case.puzzle.budget
    over = check_budget(performance, budget, calls) if budget is not None else None
    return case.done(over is None, *([over] if over else []), performance=performance)


def lower_case(case: _Case, entry: Any) -> CaseResult:
    """Cross-lower for a TPU on this machine: Pallas's Mosaic lowering and its block-shape rules."""
    import jax

    inputs = specs.make_inputs(case.puzzle, case.sizes, case.index)
    shapes = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in inputs]
    case.session.tpu_block_rules = False  # Mosaic's own lowering applies them, in its own words
    try:
        with session_scope(case.session), lowering.target_tpu():
            jax.jit(entry).trace(*shapes).lower(lowering_platforms=(TPU.platform,))
    except StrictViolation as exc:
        return case.done(False, exc.finding)
    except lowering.LoweringUnavailable as exc:
        return case.done(False, Finding(FindingKind.INTERNAL, f"The TPU lowering check cannot run here: {exc}."))
    except Exception as exc:
        return case.done(False, lowering.explain(exc, case.session))
    return case.done(True)


def _load(result: CheckResult, puzzle: Puzzle, learner_file: Path) -> Any:
    """The learner's entry point, or None with the reason added to the result."""
    try:
        text = learner_file.read_text(encoding="utf-8")
        not_started = _not_started(puzzle, learner_file, text)
        if not_started is not None:
            result.findings.append(not_started)
        module = load_learner_module(learner_file, text)
    except SyntaxError as exc:
        result.findings.append(syntax_finding(exc, str(learner_file)))
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


def check_puzzle(puzzle: Puzzle, learner_file: Path, backend: Backend, mode: Mode = Mode.RUN,
                 fail_fast: bool = True) -> CheckResult:
    """Check a learner's file for one puzzle on one backend (or only lower it for a TPU)."""
    start = time.perf_counter()
    result = _start(puzzle, learner_file, backend, mode)
    if result.finding is not None:
        return result
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        entry = _load(result, puzzle, learner_file)
        if entry is not None:
            _run_cases(result, puzzle, entry, learner_file, backend, mode, fail_fast)
    result.printed = printed.getvalue()
    result.seconds = time.perf_counter() - start
    return result


def _start(puzzle: Puzzle, learner_file: Path, backend: Backend, mode: Mode) -> CheckResult:
    """A fresh result, with the strict checker installed; it holds a finding when this jax is too old."""
    patch.install()
    dma_watch.install()
    result = CheckResult(number=puzzle.number, name=puzzle.name, file=str(learner_file),
                         backend=backend.name, passed=False, mode=mode.value)
    too_old = versions.missing_requirement(puzzle.number, puzzle.min_jax)
    if too_old:  # watch mode and notebooks reach here; verify refuses earlier with the same sentence
        result.findings.append(Finding(FindingKind.JAX_TOO_OLD, too_old))
    return result


def _run_cases(result: CheckResult, puzzle: Puzzle, entry: Any, learner_file: Path, backend: Backend,
               mode: Mode, fail_fast: bool) -> None:
    cases = puzzle.cases_for(TPU if mode is Mode.LOWER else backend)
    run = lower_case if mode is Mode.LOWER else run_case
    for index, sizes in enumerate(cases):
        case = run(_Case(puzzle, sizes, index, backend, learner_file), entry)
        result.cases.append(case)
        if not case.passed and fail_fast:
            result.skipped_cases = len(cases) - index - 1
            break
    passed = all(c.passed for c in result.cases) and len(result.cases) == len(cases)
    late = multiples.check(puzzle, entry, learner_file, backend) if passed and mode is Mode.RUN else None
    result.cases += [late] if late is not None else []
    result.passed = passed and late is None and not result.not_started


def check_function(puzzle: Puzzle, entry: Any, backend: Backend, fail_fast: bool = True) -> CheckResult:
    """Check a launcher already in memory (a notebook cell, a script) in this process: no file to load.

    Findings name lines of the file Python compiled the function from; for a
    notebook cell that is the cell (IPython keeps its text in linecache).
    """
    import inspect

    start = time.perf_counter()
    code = getattr(inspect.unwrap(entry), "__code__", None)
    learner_file = Path(code.co_filename if code is not None else "<function>")
    result = _start(puzzle, learner_file, backend, Mode.RUN)
    if result.finding is not None:
        return result
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        _run_cases(result, puzzle, entry, learner_file, backend, Mode.RUN, fail_fast)
    result.printed = printed.getvalue()
    result.seconds = time.perf_counter() - start
    return result
