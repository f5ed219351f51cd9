"""Timings for the staged chapter, in one process (the checker worker's situation): each solution checked
cold and then warm, and each hanging-barrier mistake from the start of its check to its finding.

    PYTHONPATH=src /work/venvs/py312/bin/python staging/mosaic_gpu/measure.py
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "src"))

import drive  # noqa: E402


def main() -> None:
    start = time.perf_counter()
    from pallas_puzzles.backends import use_checker_xla_flags

    use_checker_xla_flags()  # as in every checker process: strict precision, cheap compiles
    from pallas_puzzles.engine.targets.mosaic_gpu import MosaicGpuTarget

    target = MosaicGpuTarget()
    target.start()
    print(f"import + start: {time.perf_counter() - start:.2f} s")
    puzzles = drive.chapter()
    for puzzle in puzzles.values():
        path = HERE / "solutions" / puzzle.file
        runs = [drive.check(target, puzzle, path)[2] for _ in range(4)]
        print(f"{puzzle.name:18} first {runs[0]:.2f} s, warm median {statistics.median(runs[1:]):.2f} s "
              f"(all cases: {len(puzzle.cases)})")
    folder = Path(tempfile.mkdtemp())
    mistakes = tomllib.loads((HERE / "mistakes.toml").read_text())["mistake"]
    for entry in mistakes:
        if entry["kind"] != "barrier-stall":
            continue
        puzzle = puzzles[entry["puzzle"]]
        path = drive.build(entry, puzzle, folder)
        runs = []
        for _ in range(3):
            passed, result, seconds = drive.check(target, puzzle, path)
            assert not passed and result.kind.id == "barrier-stall", result
            runs.append(seconds)
        print(f"{entry['name']:34} hang -> finding in {max(runs):.2f} s at most (of 3)")


if __name__ == "__main__":
    main()
