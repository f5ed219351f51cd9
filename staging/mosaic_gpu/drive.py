"""Run the staged Mosaic GPU chapter through its target, before it joins the course.

    PYTHONPATH=src /work/venvs/py312/bin/python staging/mosaic_gpu/drive.py [solutions|stubs|mistakes|correct|all]
        [--only NAME] [--time]

Every solution must pass, every stub must fail, every mistake must fail with its kind naming its line,
and every correct alternative must pass. Exit status 0 when all of that holds. This is the phase-A stand-in
for the course's own checker and tests (tests/test_course.py, test_mistakes.py, test_correct.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import sys
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent


@dataclasses.dataclass(frozen=True)
class Puzzle:
    name: str
    file: str
    entry: str
    inputs: tuple[dict[str, Any], ...]
    cases: tuple[dict[str, int], ...]
    rtol: float
    atol: float
    distributions: tuple[dict[str, Any], ...] = ()


@dataclasses.dataclass
class Case:
    """The fields of engine/case.py's Case that the target reads (DESIGN-17 section 2)."""

    puzzle: Puzzle
    index: int
    sizes: dict[str, int]
    learner_file: Path
    inputs: tuple[np.ndarray, ...]
    expected: np.ndarray
    started: float = dataclasses.field(default_factory=time.perf_counter)

    @property
    def label(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.sizes.items())

    def done(self, passed: bool, *findings: Any, mismatch: Any = None, **_: Any) -> Any:
        from pallas_puzzles.results import CaseResult

        return CaseResult(label=self.label, passed=passed, findings=tuple(findings), mismatch=mismatch,
                          seconds=time.perf_counter() - self.started, sizes=dict(self.sizes))


def chapter() -> dict[str, Puzzle]:
    data = tomllib.loads((HERE / "chapter.toml").read_text())["chapter"][0]
    return {p["name"]: Puzzle(p["name"], p["file"], p["entry"], tuple(p["inputs"]),
                              tuple(p["cases"]["interpret"]), float(p["rtol"]), float(p["atol"]),
                              tuple(p.get("distributions", ())))
            for p in data["puzzle"]}


def _spec(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"mgpu_spec_{name}", HERE / "specs" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_cache: dict[tuple[str, int], tuple[tuple[np.ndarray, ...], np.ndarray]] = {}


def case_data(puzzle: Puzzle, index: int, sizes: dict[str, int]) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    """Inputs and the spec's output; computed once per process, as the checker's worker does."""
    if (puzzle.name, index) not in _cache:
        _cache[puzzle.name, index] = _compute(puzzle, index, sizes)
    return _cache[puzzle.name, index]


def _compute(puzzle: Puzzle, index: int, sizes: dict[str, int]) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng([20261122, sum(puzzle.name.encode()), index])
    reshape = puzzle.distributions[index % len(puzzle.distributions)] if puzzle.distributions else {}
    arrays = []
    for item in puzzle.inputs:
        shape = tuple(sizes[d] if isinstance(d, str) else d for d in item["shape"])
        how = reshape.get(item["name"], {})
        values = rng.uniform(-0.5, 0.5, size=shape) * how.get("scale", 1.0) + how.get("shift", 0.0)
        arrays.append(values.astype(jnp.dtype(item.get("dtype", "float32"))))
    with jax.default_device(jax.devices("cpu")[0]):
        expected = np.asarray(jax.jit(_spec(puzzle.name).spec)(*arrays))
    return tuple(arrays), expected


def check(target: Any, puzzle: Puzzle, path: Path) -> tuple[bool, Any, float]:
    """(passed, the first failing CaseResult or None, seconds) for one learner file."""
    from pallas_puzzles.engine.checker import load_learner_module

    start = time.perf_counter()
    module = load_learner_module(path)
    entry = getattr(module, puzzle.entry)
    for index, sizes in enumerate(puzzle.cases):
        inputs, expected = case_data(puzzle, index, sizes)
        result = target.run_case(Case(puzzle, index, sizes, path, inputs, expected), entry)
        if not result.passed:
            return False, result, time.perf_counter() - start
    return True, None, time.perf_counter() - start


def build(entry: dict[str, Any], puzzle: Puzzle, folder: Path) -> Path:
    source = (HERE / "solutions" / puzzle.file).read_text()
    for edit in entry["edits"]:
        assert source.count(edit["old"]) == 1, f"{entry['name']}: edit text must occur once: {edit['old']!r}"
        source = source.replace(edit["old"], edit["new"])
    path = folder / f"{entry['name']}.py"
    path.write_text(source)
    return path


def describe(result: Any) -> str:
    if result is None:
        return "pass"
    finding = result.finding
    kind = result.kind.id if result.kind else "?"
    lines = ", ".join(f"{w.line}: {w.text}" for w in finding.where) if finding is not None else ""
    return f"{kind} [{lines}] {finding.message if finding is not None else ''}"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("what", nargs="?", default="all")
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    from pallas_puzzles.backends import use_checker_xla_flags

    use_checker_xla_flags()  # as in every checker process: strict precision, cheap compiles
    from pallas_puzzles.engine.targets.mosaic_gpu import MosaicGpuTarget

    target = MosaicGpuTarget()
    target.start()
    puzzles = chapter()
    bad = 0
    folder = Path(tempfile.mkdtemp(prefix="mgpu_drive_"))
    groups = ["solutions", "stubs", "mistakes", "correct"] if args.what == "all" else [args.what]
    for group in groups:
        if group in ("solutions", "stubs"):
            for puzzle in puzzles.values():
                if args.only and args.only not in puzzle.name:
                    continue
                path = HERE / ("solutions" if group == "solutions" else "exercises") / puzzle.file
                passed, result, seconds = check(target, puzzle, path)
                ok = passed == (group == "solutions")
                bad += not ok
                print(f"{'ok ' if ok else 'BAD'} {group[:-1]:8} {puzzle.name:18} {seconds:5.2f}s {describe(result)[:300]}")
            continue
        entries = tomllib.loads((HERE / f"{group}.toml").read_text())[group[:-1] if group == "mistakes" else group]
        for entry in entries:
            if args.only and args.only not in entry["name"]:
                continue
            puzzle = puzzles[entry["puzzle"]]
            passed, result, seconds = check(target, puzzle, build(entry, puzzle, folder))
            if group == "correct":
                ok = passed
            else:
                finding = None if result is None else (result.finding or None)
                line_ok = not entry["line"] or (finding is not None and any(entry["line"] in w.text for w in finding.where))
                ok = not passed and result.kind is not None and result.kind.id == entry["kind"] and line_ok
            bad += not ok
            print(f"{'ok ' if ok else 'BAD'} {group[:-1]:8} {entry['name']:34} {seconds:5.2f}s "
                  f"want {entry.get('kind', 'pass')}: {describe(result)[:300]}")
    print(f"{bad} unexpected")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parents[1] / "src"))
    raise SystemExit(main())
