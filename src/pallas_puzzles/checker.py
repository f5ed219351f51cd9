"""Check one puzzle: import the learner's file, run every shape case, compare.

This runs inside the worker process (jax already imported, the strict
pallas_call installed). It returns plain data; rendering happens elsewhere.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import itertools
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from pallas_puzzles import specs, strict
from pallas_puzzles.compare import compare
from pallas_puzzles.diagnose import diagnose, import_finding, syntax_finding
from pallas_puzzles.metadata import Puzzle
from pallas_puzzles.results import CaseResult, CheckResult, Finding

_module_counter = itertools.count()


def load_learner_module(path: Path) -> ModuleType:
    """Import a learner's file under a fresh name, so every save is re-read."""
    name = f"pallas_puzzles_learner_{path.stem}_{next(_module_counter)}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(name, None)
    return module


_case_cache: dict[tuple[str, int, tuple[tuple[str, int], ...]], tuple[tuple[np.ndarray, ...], np.ndarray]] = {}


def _case_data(puzzle: Puzzle, index: int, sizes: dict[str, int]) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    """Inputs and the spec's output for a case; deterministic, so a worker computes them once."""
    key = (puzzle.name, index, tuple(sorted(sizes.items())))
    if key not in _case_cache:
        inputs = specs.make_inputs(puzzle, sizes, index)
        _case_cache[key] = (inputs, specs.expected_output(puzzle, inputs))
    return _case_cache[key]


def _output_layout(session: strict.StrictSession, shape: tuple[int, ...]) -> tuple[tuple[int, ...] | None, np.ndarray | None]:
    """Block shape and coverage of the pallas_call output that produced a result of `shape`.

    Under jax.vmap the recorded call has the per-example shape: its trailing
    dimensions match and the coverage repeats over the batch dimensions.
    """
    for record in reversed(session.calls):
        for out in record.outputs:
            lead = len(shape) - len(out.array_shape)
            if lead < 0 or tuple(shape[lead:]) != out.array_shape:
                continue
            block = tuple(size for _, size in out.block_dims) if out.block_dims else None
            block = (1,) * lead + block if block is not None else None
            covered = np.broadcast_to(out.covered, shape) if out.covered is not None else None
            return block, covered
    return None, None


def _shape_finding(expected: np.ndarray, got: Any) -> Finding | None:
    got_shape = tuple(getattr(got, "shape", ()))
    if got_shape != tuple(expected.shape):
        return Finding(
            kind="shape",
            title=f"Your function returned shape {got_shape}; the spec's output has shape {tuple(expected.shape)}.",
            explanation="Check out_shape in pallas_call and the order of the dimensions (rows first).",
        )
    return None


def run_case(puzzle: Puzzle, entry: Any, sizes: dict[str, int], index: int, backend: str,
             learner_file: Path) -> CaseResult:
    import jax
    import jax.numpy as jnp

    label = specs.case_label(sizes)
    start = time.perf_counter()
    inputs, expected = _case_data(puzzle, index, sizes)
    session = strict.StrictSession(
        backend=backend, learner_file=str(learner_file), allow_revisits=puzzle.sequential_grid
    )
    device = jax.devices("cpu")[0] if backend == "interpret" else None
    try:
        with strict.session_scope(session), jax.default_device(device):
            got = entry(*(jnp.asarray(a) for a in inputs))
            got = jax.block_until_ready(got)
    except Exception as exc:  # the learner's code failed: explain it
        finding = diagnose(exc, session)
        if backend == "interpret":
            strict.reset_interpreter()
        return CaseResult(label=label, passed=False, finding=finding, seconds=time.perf_counter() - start)
    if isinstance(got, (tuple, list)) and len(got) == 1:
        got = got[0]
    shape_problem = _shape_finding(expected, got)
    if shape_problem is not None:
        return CaseResult(label=label, passed=False, finding=shape_problem, seconds=time.perf_counter() - start)
    got_np = np.asarray(got)
    block, covered = _output_layout(session, tuple(expected.shape))
    mismatch = compare(expected, got_np, puzzle.rtol, puzzle.atol, block, covered)
    return CaseResult(label=label, passed=mismatch is None, mismatch=mismatch, seconds=time.perf_counter() - start)


def lower_case(puzzle: Puzzle, entry: Any, sizes: dict[str, int], index: int, backend: str,
               learner_file: Path) -> CaseResult:
    """Cross-lower for a TPU on this machine: Pallas's Mosaic lowering and its block-shape rules."""
    import jax

    from pallas_puzzles import tpu_lowering

    label = specs.case_label(sizes)
    start = time.perf_counter()
    inputs = specs.make_inputs(puzzle, sizes, index)
    shapes = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in inputs]
    session = strict.StrictSession(backend=backend, learner_file=str(learner_file), allow_revisits=puzzle.sequential_grid)
    try:
        with strict.session_scope(session), tpu_lowering.target_tpu():
            jax.jit(entry).trace(*shapes).lower(lowering_platforms=("tpu",))
    except strict.StrictViolation as exc:
        return CaseResult(label=label, passed=False, finding=exc.finding, seconds=time.perf_counter() - start)
    except Exception as exc:
        finding = tpu_lowering.explain(exc, session)
        return CaseResult(label=label, passed=False, finding=finding, seconds=time.perf_counter() - start)
    return CaseResult(label=label, passed=True, seconds=time.perf_counter() - start)


def check_puzzle(puzzle: Puzzle, learner_file: Path, backend: str, fail_fast: bool = True) -> CheckResult:
    """Check a learner's file for one puzzle on one backend."""
    strict.install()
    start = time.perf_counter()
    result = CheckResult(number=puzzle.number, name=puzzle.name, file=str(learner_file), backend=backend, passed=False)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        try:
            module = load_learner_module(learner_file)
        except SyntaxError as exc:
            result.finding = syntax_finding(exc, str(learner_file))
        except Exception as exc:
            result.finding = import_finding(exc, str(learner_file))
        else:
            entry = getattr(module, puzzle.entry, None)
            if not callable(entry):
                result.finding = Finding(
                    kind="missing-entry",
                    title=f"Your file has no function named {puzzle.entry}(); the checker calls it.",
                    explanation="Keep the launcher function's name and arguments as the exercise gives them.",
                )
            else:
                lowering_only = backend == "tpu-lower"
                cases = puzzle.cases_for("tpu" if lowering_only else backend)
                run = lower_case if lowering_only else run_case
                for index, sizes in enumerate(cases):
                    case = run(puzzle, entry, sizes, index, backend, learner_file)
                    result.cases.append(case)
                    if not case.passed and fail_fast:
                        result.skipped_cases = len(cases) - index - 1
                        break
                result.passed = all(c.passed for c in result.cases) and len(result.cases) == len(cases)
    result.printed = printed.getvalue()
    result.seconds = time.perf_counter() - start
    return result
