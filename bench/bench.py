"""Benchmarks for pallas-puzzles (figures, not pass/fail tests).

    python bench/bench.py [--saves 20] [--runs 3]

Prints, on this machine, in one run:
  1. cold `pallas-puzzles verify 1` wall time on a fresh workspace's stub (median of --runs),
  2. watch-mode save-to-verdict latency over --saves saves (median and p90): a real
     watchdog observer, the 200 ms debounce, the long-lived worker and the checker,
  3. `verify --all --solutions` restricted to the 12 seed puzzles, cold (worker start included),
     and the real command over the whole course,
and each beside the baseline from DESIGN.md as a ratio (ours / baseline; < 1 is faster).
"""

from __future__ import annotations

import argparse
import os
import queue
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BASELINE_COLD_VERIFY = 1.9  # s, TRITON_INTERPRET=1 python puzzles.py -p N (Triton-Puzzles-Lite), median
BASELINE_CHECK_ALL = 3.6  # s, Triton-Puzzles-Lite -a over its 12 puzzles
TARGET_SAVE_TO_VERDICT = 0.5  # s, median


def cold_verify(runs: int) -> list[float]:
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pallas_puzzles", "init", "ws"], cwd=tmp, check=True, capture_output=True)
        for _ in range(runs):
            start = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "pallas_puzzles", "verify", "1", "--backend", "interpret"],
                                  cwd=Path(tmp) / "ws", capture_output=True, text=True)
            times.append(time.perf_counter() - start)
            assert done.returncode == 1, done.stdout + done.stderr
    return times


def save_to_verdict(saves: int) -> list[float]:
    """Seconds from a file write to the watch loop having shown its verdict, per save."""
    from rich.console import Console

    from pallas_puzzles.metadata import load_course
    from pallas_puzzles.progress import Progress
    from pallas_puzzles.watch import (
        EventQueue,
        PuzzleFileHandler,
        QuitEvent,
        WatchLoop,
        start_observer,
    )
    from pallas_puzzles.worker.client import Worker
    from pallas_puzzles.workspace import init_workspace

    course = load_course()
    latencies: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        ws = init_workspace(Path(tmp) / "ws", course)
        progress = Progress.open(ws, course, warn=print)
        progress.move_to(course.find(2))
        target = ws.exercises / "02_constant_add_blocked.py"
        # A learner's wrong attempt: the grid rounds down, so a check fails on its first case.
        solution = (REPO / "solutions" / "02_constant_add_blocked.py").read_text()
        wrong = solution.replace("grid=(pl.cdiv(n, B),)", "grid=(n // B,)")
        assert wrong != solution
        events: EventQueue = queue.Queue()
        with Worker("interpret") as worker:
            worker.start()
            worker.check(course.find(1), ws.exercise(course.find(1)))  # warm the worker like a watch session does
            observer, _ = start_observer(ws.exercises, PuzzleFileHandler({p.file for p in course.puzzles}, events), poll=False)
            with open(os.devnull, "w") as devnull:
                loop = WatchLoop(Console(file=devnull), progress, worker, events)
                runner = threading.Thread(target=loop.run, daemon=True)
                runner.start()
                # `idle`: the loop has shown a verdict and has nothing left in flight.
                assert loop.idle.wait(120), "the initial check of the current puzzle did not finish"
                for i in range(saves):
                    time.sleep(0.3)
                    loop.idle.clear()
                    saved = time.perf_counter()
                    target.write_text(wrong + f"\n# save {i}\n")
                    assert loop.idle.wait(120), f"save {i} got no verdict"
                    latencies.append(time.perf_counter() - saved)
                events.put(QuitEvent())
                runner.join(timeout=30)
            observer.stop()
            observer.join()
    return latencies


def check_all_seed() -> float:
    """What `verify --all --solutions` does (one worker per core), over puzzles 1-12 only."""
    script = (
        "import os\n"
        "from pallas_puzzles.metadata import load_course\n"
        "from pallas_puzzles.worker.pool import WorkerPool\n"
        "from pallas_puzzles.workspace import reference_solution\n"
        "course = load_course()\n"
        "jobs = [(p, reference_solution(p)) for p in course.puzzles if 1 <= p.number <= 12]\n"
        "with WorkerPool('interpret', min(os.cpu_count() or 1, 4)) as pool:\n"
        "    pool.start()\n"
        "    for (p, _), r in zip(jobs, pool.check_in_order(jobs)):\n"
        "        assert r.passed, (p.number, r)\n"
    )
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", script], check=True)
    return time.perf_counter() - start


def check_all_command() -> float:
    """The real `pallas-puzzles verify --all --solutions` over the whole course."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pallas_puzzles", "init", "ws"], cwd=tmp, check=True, capture_output=True)
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "pallas_puzzles", "verify", "--all", "--solutions", "--backend", "interpret"],
                              cwd=Path(tmp) / "ws", capture_output=True, text=True)
        elapsed = time.perf_counter() - start
        assert done.returncode == 0, done.stdout[-3000:]
    return elapsed


def p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--saves", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    shutil.rmtree(Path(tempfile.gettempdir()) / "pallas-puzzles-bench", ignore_errors=True)

    cold = cold_verify(args.runs)
    latencies = save_to_verdict(args.saves)
    check_all = check_all_seed()
    whole_course = check_all_command()

    cold_median = statistics.median(cold)
    watch_median = statistics.median(latencies)
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, jax {__import__('jax').__version__}")
    print(f"cold verify 1 (stub, {args.runs} runs):   median {cold_median:.2f} s   baseline {BASELINE_COLD_VERIFY:.1f} s   ratio {cold_median / BASELINE_COLD_VERIFY:.2f}")
    print(f"save-to-verdict ({len(latencies)} saves):      median {watch_median:.2f} s   p90 {p90(latencies):.2f} s   target < {TARGET_SAVE_TO_VERDICT:.1f} s   ratio {watch_median / TARGET_SAVE_TO_VERDICT:.2f}")
    print(f"verify --all, seed puzzles 1-12 (cold): {check_all:.2f} s   baseline {BASELINE_CHECK_ALL:.1f} s   ratio {check_all / BASELINE_CHECK_ALL:.2f}")
    print(f"verify --all --solutions, whole course ({len(__import__('pallas_puzzles.metadata', fromlist=['x']).load_course().puzzles)} puzzles, every shape case): {whole_course:.2f} s")


if __name__ == "__main__":
    main()
