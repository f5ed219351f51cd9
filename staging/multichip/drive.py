"""Run the multi-device chapter through the tpu-multichip target, in one fresh process (phase A of issue 21).

    PYTHONPATH=src python staging/multichip/drive.py [stubs|solutions|mistakes|correct|all] [--only NAME] [-v]

Each stub must fail, each solution pass, each mistake fail with its kind (and
name its line), each correct alternative pass. Prints one line per check with
its time, then every deadlock's time and the check that followed it, and
exits 1 if any expectation failed. It starts jax itself, after setting the
host device count the target asks for, as a checker process would.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import provisional  # noqa: E402

from pallas_puzzles.backends import INTERPRET, Mode, start_jax  # noqa: E402
from pallas_puzzles.engine.checker import load_learner_module  # noqa: E402
from pallas_puzzles.findings import FindingKind  # noqa: E402

provisional.install()
from pallas_puzzles.engine.targets.tpu_multichip import TpuMultichip  # noqa: E402


def start() -> TpuMultichip:
    flag = f"--xla_force_host_platform_device_count={TpuMultichip.setup.host_devices}"
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + flag).strip()
    start_jax(INTERPRET.name, Mode.RUN)
    target = TpuMultichip()
    target.start()
    return target


def load_chapter() -> list[SimpleNamespace]:
    chapter = tomllib.loads((HERE / "chapter.toml").read_text())["chapter"][0]
    puzzles = []
    for raw in chapter["puzzle"]:
        problems = TpuMultichip.option_problems(raw["target_options"])
        assert not problems, (raw["name"], problems)
        assert len(raw["hints"]) >= 3, raw["name"]
        puzzles.append(SimpleNamespace(**{"rtol": 1e-5, "atol": 1e-5, **raw}))
    return puzzles


def spec_module(name: str) -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"multichip_spec_{name}", HERE / "specs" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def case_data(puzzle: SimpleNamespace, index: int, sizes: dict[str, int]) -> tuple[tuple[Any, ...], Any]:
    import numpy as np

    rng = np.random.default_rng([20261122, sum(map(ord, puzzle.name)), index])
    module = spec_module(getattr(puzzle, "spec", puzzle.name))
    if hasattr(module, "make_inputs"):
        inputs = tuple(module.make_inputs(sizes, rng))
    else:
        inputs = tuple(rng.uniform(-0.5, 0.5, size=[sizes[d] if isinstance(d, str) else d for d in item["shape"]])
                       .astype(np.float32) for item in puzzle.inputs)
    return inputs, np.asarray(module.spec(*inputs))


@dataclass
class Outcome:
    passed: bool
    kind: FindingKind | None
    finding: Any
    seconds: float
    cases: list[Any] = field(default_factory=list)


def check(target: TpuMultichip, puzzle: SimpleNamespace, path: Path) -> Outcome:
    started = time.perf_counter()
    module = load_learner_module(path)
    entry = getattr(module, puzzle.entry)
    results = []
    for index, sizes in enumerate(puzzle.cases["interpret"]):
        inputs, expected = case_data(puzzle, index, sizes)
        label = ", ".join(f"{k}={v}" for k, v in sizes.items())
        case = provisional.Case(puzzle, index, sizes, label, path, INTERPRET, inputs, expected)
        result = target.run_case(case, entry)
        object.__setattr__(result, "traffic", getattr(case, "extra", {}).get("traffic"))
        results.append(result)
        if not result.passed:
            break
    last = results[-1]
    passed = all(r.passed for r in results) and len(results) == len(puzzle.cases["interpret"])
    return Outcome(passed, last.kind, last.finding, time.perf_counter() - started, results)


def build(entry: dict[str, Any], puzzles: dict[str, SimpleNamespace], folder: Path) -> Path:
    source = (HERE / "solutions" / puzzles[entry["puzzle"]].file).read_text()
    for edit in entry.get("edits", []):
        assert source.count(edit["old"]) == 1, f"{entry['name']}: edit not unique: {edit['old']!r}"
        source = source.replace(edit["old"], edit["new"])
    path = folder / f"{entry['name']}.py"
    path.write_text(source)
    return path


def describe(outcome: Outcome) -> str:
    finding = outcome.finding
    if outcome.passed:
        traffic = getattr(outcome.cases[-1], "traffic", None)
        return "pass" + (f" ({traffic.ratio:.2g}x minimum traffic)" if traffic else "")
    text = outcome.kind.id if outcome.kind else "?"
    if finding is not None:
        where = ", ".join(str(w.line) for w in finding.where)
        place = f" device={finding.device}/{finding.devices} grid_point={finding.grid_point}"
        text += f" [{where}]{place} {finding.message}"
    elif outcome.cases and outcome.cases[-1].mismatch is not None:
        text += f" {outcome.cases[-1].mismatch.n_bad} of {outcome.cases[-1].mismatch.total} wrong"
    return text


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("what", nargs="?", default="all",
                        choices=["stubs", "solutions", "mistakes", "correct", "all", "warm"])
    parser.add_argument("--only", default="")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    t0 = time.perf_counter()
    target = start()
    print(f"jax started with {TpuMultichip.setup.host_devices} devices in {time.perf_counter() - t0:.2f} s")
    chapter = load_chapter()
    puzzles = {p.name: p for p in chapter}
    if args.what == "warm":
        return warm(target, chapter)
    failures, deadlocks = [], []
    folder = Path(tempfile.mkdtemp(prefix="multichip-"))
    jobs: list[tuple[str, SimpleNamespace, Path, Any]] = []
    for p in chapter:
        if args.what in ("stubs", "all"):
            jobs.append(("stub", p, HERE / "exercises" / p.file, False))
        if args.what in ("solutions", "all"):
            jobs.append(("solution", p, HERE / "solutions" / p.file, True))
    for table in ("mistakes", "correct"):
        if args.what in (table, "all"):
            entries = tomllib.loads((HERE / f"{table}.toml").read_text()).get("mistake" if table == "mistakes" else "correct", [])
            for entry in entries:
                jobs.append((entry["name"], puzzles[entry["puzzle"]], build(entry, puzzles, folder),
                             True if table == "correct" else entry))
    for name, puzzle, path, expect in jobs:
        if args.only and args.only not in (name, puzzle.name):
            continue
        outcome = check(target, puzzle, path)
        if outcome.kind is FindingKind.DEADLOCK:  # the very next check, of the solution, must run clean
            after = check(target, puzzle, HERE / "solutions" / puzzle.file)
            deadlocks.append((name, outcome.seconds, "its solution", after.passed, after.seconds))
        ok = _meets(outcome, expect)
        if not ok:
            failures.append(name)
        print(f"{'ok ' if ok else 'BAD'} {outcome.seconds:5.2f}s {puzzle.name:24} {name:40} {describe(outcome)}")
        if args.verbose and outcome.finding is not None:
            print("      " + outcome.finding.explanation)
        if args.verbose and outcome.passed and getattr(outcome.cases[-1], "traffic", None) is not None:
            print("\n".join("      " + line for line in outcome.cases[-1].traffic.lines()))
    for name, seconds, after, passed, after_seconds in deadlocks:
        print(f"deadlock {name}: {seconds:.2f} s; next check {after}: {'pass' if passed else 'fail'} in {after_seconds:.2f} s")
    print(f"{len(failures)} unexpected: {failures}" if failures else "every expectation met")
    return 1 if failures else 0


def warm(target: TpuMultichip, chapter: list[SimpleNamespace]) -> int:
    """Each solution checked three times in this process: the first (cold) and the median of the others."""
    import statistics

    slow = []
    for puzzle in chapter:
        times = [check(target, puzzle, HERE / "solutions" / puzzle.file).seconds for _ in range(3)]
        print(f"{puzzle.name:26} first {times[0]:.2f} s, warm {statistics.median(times[1:]):.2f} s")
        slow += [puzzle.name] if statistics.median(times[1:]) >= 3.0 else []
    print(f"warm checks of 3 s or more: {slow}" if slow else "every warm check under 3 s")
    return 1 if slow else 0


def _meets(outcome: Outcome, expect: Any) -> bool:
    if expect is True or expect is False:
        return outcome.passed is expect
    if outcome.passed or outcome.kind is not FindingKind.by_id(expect["kind"]):
        return False
    line = expect.get("line", "")
    return not line or any(line in w.text for w in (outcome.finding.where if outcome.finding else ()))


if __name__ == "__main__":
    raise SystemExit(main())
