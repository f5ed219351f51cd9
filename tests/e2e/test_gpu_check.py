"""The prepared GPU check's dry run (scripts/gpu_check.sh --dry-run) on two puzzles, as CI can run it.

The same steps as on a GPU, with --backend interpret: the project installed from the checkout into a
scratch folder, doctor, verify, dev check, a kernel that never ends, perf; then summary.md with a line
per puzzle. The Mosaic GPU chapter's interpreter needs jax 0.12: on an older jax its puzzle is refused
in one sentence, which the summary repeats.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from helpers import REPO

from pallas_puzzles import versions
from pallas_puzzles.course import reader
from pallas_puzzles.dev import examples

INTERPRETS_THE_GPU_CHAPTER = versions.parse(versions.installed_jax() or "0") >= (0, 12)


def _examples_of(puzzle: str) -> int:
    """How many worked examples (mistakes and correct alternatives) the built-in course has for `puzzle`."""
    folder = reader.builtin_folder()
    return sum(e.puzzle == puzzle for file in (examples.MISTAKES, examples.CORRECT)
               for e in examples.load(folder, file))


def test_the_dry_run_checks_each_puzzle_and_writes_a_line_for_it(tmp_path: Path):
    out = tmp_path / "out"
    env = {**os.environ, "PYTHON": sys.executable}
    started = time.monotonic()
    done = subprocess.run(["bash", str(REPO / "scripts" / "gpu_check.sh"), "--dry-run", "--puzzles",
                           "constant_add,tma_copy", str(out)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    seconds = time.monotonic() - started
    log = (out / "log.txt").read_text() if (out / "log.txt").exists() else ""
    assert done.returncode == 0, done.stdout + done.stderr + log[-3000:]
    assert sorted(p.name for p in out.iterdir()) == ["kernel_times.json", "log.txt", "results.json", "summary.md"]
    assert seconds < 180

    summary = (out / "summary.md").read_text()
    assert summary.startswith("# GPU check, dry run on the CPU (--backend interpret)\n")
    assert "0 disagreements, 0 dev check problems; all steps ran." in summary
    rows = [line for line in summary.splitlines() if line.startswith("| 1 |") or line.startswith("| 37 |")]
    assert len(rows) == 2, summary
    examples = _examples_of("constant_add")
    assert examples >= 2, "the course has a mistake and a correct alternative for puzzle 1"
    assert rows[0].startswith("| 1 | constant_add | pass | pass | fail (mismatch-unwritten) / "
                              f"fail (mismatch-unwritten) | {examples} agree | — |"), rows[0]
    if INTERPRETS_THE_GPU_CHAPTER:
        assert rows[1].startswith("| 37 | tma_copy | pass | pass | fail (mismatch-unwritten) / ")
        assert "agree" in rows[1] and "DISAGREE" not in summary
    else:
        assert rows[1].startswith("| 37 | tma_copy | n/a (needs jax 0.12 or newer on the interpret backend) |")
        refusals = [line for line in summary.splitlines() if line.startswith("- tma_copy: Puzzle 37 needs jax")]
        assert len(refusals) == 1 and refusals[0].count(". ") == 0, summary
    assert "fail (timeout) after" in summary and "the next check: pass" in summary

    results = json.loads((out / "results.json").read_text())
    assert results["dry_run"] and results["backend"] == "interpret"
    assert all(step["exit"] == step["expected"] and not step["timed_out"] for step in results["steps"])
    assert all("--backend" not in step["command"] or "--backend interpret" in step["command"]
               for step in results["steps"]), "a dry run never asks for a GPU"
    assert results["environment"]["jax"] == versions.installed_jax()
    assert "/site/pallas_puzzles" in results["doctor"] and str(REPO / "src") not in results["doctor"], \
        "the commands run the copy installed from the checkout"
    times = json.loads((out / "kernel_times.json").read_text())
    assert [p["name"] for p in times["puzzles"]] == ["constant_add"] + (["tma_copy"] if INTERPRETS_THE_GPU_CHAPTER
                                                                        else [])
    assert all(case["seconds"] is None for p in times["puzzles"] for case in p["cases"]), \
        "an interpreter measures nothing"


def test_without_a_gpu_the_real_check_stops_at_once_in_one_sentence(tmp_path: Path):
    env = {**os.environ, "PYTHON": sys.executable, "JAX_PLATFORMS": "cpu"}
    done = subprocess.run(["bash", str(REPO / "scripts" / "gpu_check.sh"), str(tmp_path / "out")], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and ("CUDA plugin" in errors[0] or "no NVIDIA GPU" in errors[0]), done.stderr
    assert "Traceback" not in done.stderr


def test_an_output_folder_that_holds_something_is_left_alone(tmp_path: Path):
    kept = tmp_path / "out" / "mine.txt"
    kept.parent.mkdir()
    kept.write_text("keep me")
    done = subprocess.run(["bash", str(REPO / "scripts" / "gpu_check.sh"), "--dry-run", str(kept.parent)],
                          env={**os.environ, "PYTHON": sys.executable}, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "already holds something" in done.stderr
    assert kept.read_text() == "keep me" and [p.name for p in kept.parent.iterdir()] == ["mine.txt"]
