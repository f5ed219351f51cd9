"""Benchmarks for pallas-puzzles (figures, not pass/fail tests).

    python bench/bench.py [--saves 20] [--runs 3] [--peer "CMD"] [--peer-cwd DIR]
    python bench/bench.py --puzzle NAME [--saves 20]     (only 2., on that puzzle's reference solution;
                                                          the first save, the worker's first kernel, apart)
    python bench/bench.py --puzzle NAME --during-check   (the same, each save saved again while it is
                                                          checked: watch stops that check and starts afresh)
    python bench/bench.py --puzzle NAME --backend gpu    (the same, checked on a GPU: watch --backend gpu)

Prints, on this machine, in one run:
  1. cold `pallas-puzzles verify 1` on a fresh workspace's stub (median of --runs; the
     result cache is emptied before each run, JAX's compilation cache is left as a learner has it),
  2. watch-mode save-to-verdict latency over --saves saves (median and p90): a real
     watchdog observer, the 200 ms debounce, the long-lived worker and the checker,
  3. `verify --all --solutions` over puzzles 1-12 (what the peer's `-a` on its answers covers), cold (median
     of --runs, each round beside one of the peer's: the vCPUs' speed drifts minute to minute),
  4. the real `verify --all --solutions` over the whole course: cold, then re-run unchanged,
     then after editing one file, each with the whole process tree's peak memory.

The package's bytecode is compiled first, as `pip install .` leaves it for a learner.
Times come from runs without the memory sampler, and peaks from a run of their own: reading
/proc/PID/smaps_rollup 20 times a second costs a tree of JAX processes on 2 cores about 0.1 s
(9 % of figure 3; the one-process peer, 1 %).

With --peer, the peer is measured in the same run and each figure is printed beside it as a
ratio (ours / peer; < 1 is faster). The peer is Triton-Puzzles-Lite
(https://github.com/SiriusNEO/Triton-Puzzles-Lite), set up as its README says for a CPU: `torch==2.5.0`
(it brings `triton==3.1.0`), `numpy<2`, and its interpreter switched on with TRITON_INTERPRET=1. CMD
runs a Python file of the peer's, in --peer-cwd, by the shell: its stubs' `puzzles.py -p 1` beside our
cold `verify 1` (a learner's first run, which fails), and its answers' `puzzles_ans.py -a` beside our
puzzles 1-12 (its `-a` stops at the first failure: on the stubs it would check one puzzle, not twelve;
the bench checks that all twelve passed), e.g.
    --peer "TRITON_INTERPRET=1 python" --peer-cwd ~/Triton-Puzzles-Lite
Timings on a loaded machine are noisy: compare ratios from one run, and note the load printed.
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
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


class TreePeak:
    """Samples the memory of a process and all its descendants (Linux /proc), keeping the peaks.

    Two sums: resident set sizes (RSS; counts the JAX libraries that every checker maps once
    per process) and proportional set sizes (PSS; a page shared by n processes counts 1/n,
    so the sum is the memory the tree really occupies).
    """

    def __init__(self, pid: int, interval: float = 0.05) -> None:
        self.pid, self.interval = pid, interval
        self.rss = self.pss = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _tree(self) -> set[int]:
        parents: dict[int, int] = {}
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                try:
                    with open(f"/proc/{entry.name}/stat") as stat:
                        parents[int(entry.name)] = int(stat.read().rsplit(")", 1)[1].split()[1])
                except (OSError, IndexError, ValueError):
                    pass
        tree, frontier = {self.pid}, [self.pid]
        while frontier:
            parent = frontier.pop()
            children = [pid for pid, ppid in parents.items() if ppid == parent and pid not in tree]
            tree.update(children)
            frontier.extend(children)
        return tree

    def _sample(self) -> None:
        while not self._stop.is_set():
            # Each sample reads the tree twice and keeps the smaller sums. A process that ends between the
            # reads of one pass leaves the pages it shared to the processes read after it, while its own
            # reading, taken before, still holds its share: that pass counts those pages twice (30-50 MiB
            # when a checker ends beside another). The other pass sees the tree before or after the end.
            first, second = self._sums(), self._sums()
            rss, pss = min(first[0], second[0]), min(first[1], second[1])
            self.rss, self.pss = max(self.rss, rss), max(self.pss, pss)
            self._stop.wait(self.interval)

    def _sums(self) -> tuple[int, int]:
        rss = pss = 0
        for pid in self._tree():
            try:
                with open(f"/proc/{pid}/smaps_rollup") as rollup:
                    fields = dict(line.split(":", 1) for line in rollup if line.count(":") == 1)
                rss += int(fields["Rss"].split()[0]) * 1024
                pss += int(fields["Pss"].split()[0]) * 1024
            except (OSError, KeyError, ValueError):
                pass
        return rss, pss

    def stop(self) -> tuple[float, float]:
        """Stop sampling; the peaks (RSS sum, PSS sum) in MiB."""
        self._stop.set()
        self._thread.join()
        return self.rss / 2**20, self.pss / 2**20


def timed(command: Sequence[str] | str, cwd: Path, shell: bool = False,
          sample: bool = False) -> tuple[float, tuple[float, float], int, str]:
    """(seconds, peak MiB of the process tree as (RSS, PSS), exit code, output tail) of one command;
    the peaks are (0, 0) unless `sample`, whose sampler slows the command down."""
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, shell=shell, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
    peak = TreePeak(process.pid) if sample else None
    output, _ = process.communicate()
    elapsed = time.perf_counter() - start
    return elapsed, peak.stop() if peak else (0.0, 0.0), process.returncode, output[-3000:]


def ours(*args: str) -> list[str]:
    return [sys.executable, "-m", "pallas_puzzles", *args]


def bytecode_as_installed() -> str:
    """Compile the package's bytecode, as `pip install .` leaves it. An editable checkout run where
    PYTHONDONTWRITEBYTECODE is set (some sandboxes set it) never writes any, and each of its processes
    would compile every one of the package's modules from source: 40 ms of a cold check-all here."""
    import pallas_puzzles

    package = Path(pallas_puzzles.__file__).parent
    done = subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], capture_output=True, text=True)
    if done.returncode:
        return f"bytecode: could not compile {package} ({done.stdout.strip() or done.stderr.strip()})"
    return f"bytecode: compiled for {package}, as pip install leaves it"


def fresh_workspace(tmp: str) -> Path:
    subprocess.run(ours("init", "ws"), cwd=tmp, check=True, capture_output=True)
    return Path(tmp) / "ws"


def forget_results(workspace: Path) -> None:
    shutil.rmtree(workspace / ".pallas_puzzles" / "results", ignore_errors=True)


def cold_verify(runs: int) -> list[float]:
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        workspace = fresh_workspace(tmp)
        for _ in range(runs):
            forget_results(workspace)
            seconds, _, code, output = timed(ours("verify", "1", "--backend", "interpret"), workspace)
            assert code == 1, output
            times.append(seconds)
    return times


PEER_STUBS, PEER_ANSWERS = "puzzles.py -p 1", "puzzles_ans.py -a"
PEER_PUZZLES = 12


def peer_runs(command: str, cwd: Path, what: str, runs: int) -> list[float]:
    """Seconds per run of the peer's `what` (PEER_STUBS or PEER_ANSWERS)."""
    times = []
    for _ in range(runs):
        seconds, _, code, output = timed(f"{command} {what}", cwd, shell=True)
        assert code == 0, f"the peer failed ({command} {what}):\n{output}"
        if what == PEER_ANSWERS:  # `-a` stops at the first failure: the last puzzle passed, or not all ran
            assert f"Puzzle #{PEER_PUZZLES}:" in output and "Results match: False" not in output, \
                f"the peer did not pass all {PEER_PUZZLES} of its answers:\n{output}"
        times.append(seconds)
    return times


def save_to_verdict(saves: int, name: str = "", during_check: bool = False, backend: str = "interpret") -> list[float]:
    """Seconds from a file write to the watch loop having shown its verdict, per save.

    By default on puzzle 2 with a wrong attempt; with `name`, on that puzzle's reference solution
    (every shape case runs), in a worker of that puzzle's target. `during_check`: each save is written
    again while its check runs, and timed from that second write (watch stops the check it makes stale).
    `backend`: where the checks run, as `watch --backend` says."""
    from rich.console import Console

    from pallas_puzzles.course.reader import load_course
    from pallas_puzzles.watch import (
        EventQueue,
        PuzzleFileHandler,
        QuitEvent,
        WatchLoop,
        start_observer,
    )
    from pallas_puzzles.worker.by_target import WorkersByTarget
    from pallas_puzzles.worker.limits import learner_limits
    from pallas_puzzles.workspace.folder import init_workspace
    from pallas_puzzles.workspace.progress import Progress

    course = load_course()
    latencies: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        ws = init_workspace(Path(tmp) / "ws", course)
        progress = Progress.open(ws, course, warn=print)
        puzzle = course.find(name or 2)
        progress.move_to(puzzle)
        target = ws.exercise(puzzle)
        solution = puzzle.solution_path.read_text()
        # A learner's wrong attempt: the grid rounds down, so a check fails on its first case.
        # Every save has new content, so no verdict comes from the result cache.
        wrong = solution if name else solution.replace("grid=(pl.cdiv(n, B),)", "grid=(n // B,)")
        assert name or wrong != solution
        events: EventQueue = queue.Queue()
        with WorkersByTarget(backend, limits=learner_limits()) as worker:  # watch's checkers
            worker.start(puzzle.target)
            warm = puzzle if name else course.find(1)
            worker.check(warm, ws.exercise(warm))  # warm the worker like a watch session does
            worker.wait_until_ready(puzzle.target)  # a second checker sharing the checks, where there is one
            observer, _ = start_observer(ws.exercises, PuzzleFileHandler({p.file for p in course.puzzles}, events),
                                         poll=False)
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
                    if during_check:
                        while not worker.workers[puzzle.target].busy:  # its check has begun
                            if loop.idle.is_set():  # ended between two looks: nothing to stop
                                raise SystemExit(f"error: a check of {name} ended before it could be saved "
                                                 "again; --during-check needs a puzzle whose check is slower.")
                            time.sleep(0.002)
                        saved = time.perf_counter()
                        target.write_text(wrong + f"\n# save {i}, again\n")
                    assert loop.idle.wait(120), f"save {i} got no verdict"
                    answered = time.perf_counter()
                    # The first check may end while the second save's file event is still on its way from
                    # the observer, and the loop is idle for a moment: only an idle the event does not
                    # end is the second save's verdict.
                    while during_check and not _stays_idle(loop.idle):
                        assert loop.idle.wait(120), f"save {i} got no verdict"
                        answered = time.perf_counter()
                    latencies.append(answered - saved)
                events.put(QuitEvent())
                runner.join(timeout=30)
            observer.stop()
            observer.join()
    return latencies


def _stays_idle(idle: threading.Event, settle: float = 0.1) -> bool:
    """Is the watch loop still idle after `settle` s (longer than a file event takes to arrive)?"""
    time.sleep(settle)
    return idle.is_set()


SEED_SCRIPT = """
import os
from pallas_puzzles.course.reader import load_course
from pallas_puzzles.worker.pool import WorkerPool
from pallas_puzzles.workspace.folder import reference_solution
try:
    from pallas_puzzles.worker.pool import pool_size
except ImportError:  # the code before issue 13
    def pool_size(jobs): return min(jobs, os.cpu_count() or 1, 4)
jobs = [(p, reference_solution(p)) for p in load_course().puzzles if 1 <= p.number <= 12]
with WorkerPool('interpret', pool_size(len(jobs))) as pool:
    pool.start()
    for (p, _), r in zip(jobs, pool.check_in_order(jobs)):
        assert r.passed, (p.number, r)
"""


def check_all_seed(runs: int, peer: str | None, peer_cwd: Path) -> tuple[float, tuple[float, float], float | None]:
    """What `verify --all --solutions` does, over puzzles 1-12 only, and the peer's `-a`, round by round:
    (our median seconds, our peak MiB as RSS and PSS, the peer's median seconds or None)."""
    ours_seconds, peer_seconds = [], []
    for _ in range(runs):
        seconds, _, code, output = timed([sys.executable, "-c", SEED_SCRIPT], REPO)
        assert code == 0, output
        ours_seconds.append(seconds)
        if peer:
            peer_seconds += peer_runs(peer, peer_cwd, PEER_ANSWERS, 1)
    _, peak, code, output = timed([sys.executable, "-c", SEED_SCRIPT], REPO, sample=True)
    assert code == 0, output
    return statistics.median(ours_seconds), peak, statistics.median(peer_seconds) if peer else None


def check_all_command() -> dict[str, tuple[float, tuple[float, float]]]:
    """The real `verify --all --solutions` over the whole course: cold, unchanged, one file edited;
    timed in one fresh workspace, their peaks sampled in another."""
    timings, peaks = _course_runs(sample=False), _course_runs(sample=True)
    return {label: (timings[label][0], peaks[label][1]) for label in timings}


def _course_runs(sample: bool) -> dict[str, tuple[float, tuple[float, float]]]:
    figures = {}
    command = ours("verify", "--all", "--solutions", "--backend", "interpret")
    with tempfile.TemporaryDirectory() as tmp:
        workspace = fresh_workspace(tmp)
        for label in ("cold", "unchanged re-run"):
            seconds, peak, code, output = timed(command, workspace, sample=sample)
            assert code == 0, output
            figures[label] = (seconds, peak)
        # `--solutions` checks the course's own files: edit one puzzle's file in the workspace instead.
        command = ours("verify", "--all", "--backend", "interpret")
        timed(command, workspace)  # every learner stub judged once (they fail)
        from pallas_puzzles.course.reader import load_course

        exercise = workspace / "exercises" / load_course().find(5).file
        exercise.write_text(exercise.read_text() + "\n# an edit\n")
        seconds, peak, code, output = timed(command, workspace, sample=sample)
        figures["one file edited"] = (seconds, peak)
    return figures


def p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]


def memory(peak: tuple[float, float]) -> str:
    return f"tree peak {peak[0]:.0f} MiB RSS, {peak[1]:.0f} MiB PSS"


def ratio(value: float, peer: float | None) -> str:
    return f"   peer {peer:.2f} s   ratio {value / peer:.2f}" if peer else ""


def main() -> None:
    from pallas_puzzles.backends import INTERPRET, REGISTRY

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--saves", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--peer", help="how to run a Python file of the peer's, e.g. \"TRITON_INTERPRET=1 python\"")
    parser.add_argument("--peer-cwd", type=Path, default=Path.cwd(), help="where the peer's command runs")
    parser.add_argument("--puzzle", default="", help="measure only save-to-verdict, on this puzzle's solution")
    parser.add_argument("--during-check", action="store_true",
                        help="with --puzzle: each save is saved again while it is checked, and timed from then")
    parser.add_argument("--backend", default=INTERPRET.name, choices=tuple(REGISTRY),
                        help="with --puzzle: where the checks run (the other figures are the interpreter's)")
    args = parser.parse_args()
    if args.during_check and not args.puzzle:
        parser.error("--during-check measures one puzzle: give it with --puzzle NAME")
    if args.backend != INTERPRET.name and not args.puzzle:
        parser.error("--backend measures one puzzle's saves: give it with --puzzle NAME")
    # A benchmark measures; on a loaded machine the puzzles' own time limits could stop a check.
    os.environ.setdefault("PALLAS_PUZZLES_TIME_LIMIT", "600")
    bytecode = bytecode_as_installed()
    if args.puzzle:
        load = os.getloadavg()[0]
        first, *latencies = save_to_verdict(max(args.saves, 2), args.puzzle, args.during_check, args.backend)
        print(bytecode)
        # The worker was warmed with the stub, which fails before any kernel runs: the first save is the
        # first kernel this worker checks (its one-off costs): shown apart, the median and p90 are of the rest.
        how = ", each saved again during its check" if args.during_check else ""
        how += f", on {args.backend}" if args.backend != INTERPRET.name else ""
        print(f"save-to-verdict, {args.puzzle}{how} ({len(latencies)} saves after a first of {first:.2f} s, "
              f"load {load:.2f} -> {os.getloadavg()[0]:.2f}): "
              f"median {statistics.median(latencies):.2f} s   p90 {p90(latencies):.2f} s")
        return

    load = os.getloadavg()
    peer_one = None
    if args.peer:
        peer_one = statistics.median(peer_runs(args.peer, args.peer_cwd, PEER_STUBS, args.runs))
    cold = statistics.median(cold_verify(args.runs))
    latencies = save_to_verdict(args.saves)
    seed, seed_peak, peer_all = check_all_seed(args.runs, args.peer, args.peer_cwd)
    course = check_all_command()
    load_after = os.getloadavg()

    import jax

    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, jax {jax.__version__}, "
          f"load {load[0]:.2f} before, {load_after[0]:.2f} after (1-min average)")
    print(bytecode)
    print(f"cold verify 1 (stub, median of {args.runs}):  {cold:.2f} s{ratio(cold, peer_one)}")
    print(f"save-to-verdict ({len(latencies)} saves):       median {statistics.median(latencies):.2f} s   "
          f"p90 {p90(latencies):.2f} s")
    print(f"verify --all, puzzles 1-12 (cold, median of {args.runs}): {seed:.2f} s   {memory(seed_peak)}"
          f"{ratio(seed, peer_all)}")
    for label, (seconds, peak) in course.items():
        print(f"verify --all, whole course, {label + ':':18s} {seconds:.2f} s   {memory(peak)}")
    if not args.peer:
        print("(no --peer given: no ratios; see the docstring for the peer's set-up)")


if __name__ == "__main__":
    from pallas_puzzles.errors import UserError

    try:
        main()
    except UserError as exc:  # e.g. --backend gpu where JAX sees no GPU: one sentence
        raise SystemExit(f"error: {exc.message}") from None
