"""Measure what a cold check of each reference solution takes, for puzzles.toml.

    python bench/reference_times.py [--write]

Each puzzle is checked in a fresh checker process (so first-use compiles are
included), on the interpret backend. A puzzle's time limit is derived from
this figure (see Puzzle.limit_seconds); `--write` stores the figures in
puzzles.toml as `reference_seconds`. Rerun it when a puzzle or the checker
changes a lot.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import time
from pathlib import Path

from pallas_puzzles.metadata import load_course
from pallas_puzzles.worker.client import Worker
from pallas_puzzles.workspace import reference_solution

TOML = Path(__file__).resolve().parents[1] / "src" / "pallas_puzzles" / "puzzles.toml"


def measure() -> dict[int, float]:
    figures = {}
    for puzzle in load_course().puzzles:
        with Worker("interpret") as worker:
            worker.start()
            started = time.perf_counter()
            result = worker.check(puzzle, reference_solution(puzzle), fail_fast=False)
            figures[puzzle.number] = time.perf_counter() - started
        assert result.passed, puzzle.number
        limit = dataclasses.replace(puzzle, reference_seconds=figures[puzzle.number], time_limit=0.0).limit_seconds
        print(f"puzzle {puzzle.number:2d}: {figures[puzzle.number]:.2f} s (limit {limit:.0f} s)")
    return figures


def write(figures: dict[int, float]) -> None:
    """Set `reference_seconds = X` right after each puzzle's `file = ...` line."""
    text = TOML.read_text()
    blocks = text.split("[[puzzle]]")
    for i, block in enumerate(blocks[1:], start=1):
        number = int(re.search(r"^number = (\d+)", block, re.M).group(1))
        block = re.sub(r"^reference_seconds = .*\n", "", block, flags=re.M)
        value = f"reference_seconds = {figures[number]:.1f}  # measured by bench/reference_times.py\n"
        blocks[i] = re.sub(r"^(file = .*\n)", lambda m, line=value: m.group(1) + line, block, count=1, flags=re.M)
    TOML.write_text("[[puzzle]]".join(blocks))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="store the figures in puzzles.toml")
    args = parser.parse_args()
    figures = measure()
    if args.write:
        write(figures)


if __name__ == "__main__":
    main()
