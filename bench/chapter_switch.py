"""Watch mode at a chapter's end (figures, not a test): the first save in the next chapter.

    python bench/chapter_switch.py [--read 3]

At every place in the course where the next puzzle has another target (another checker process),
a real watch loop with its file observer and checkers: the chapter's last puzzle is solved, the
learner reads the pass for --read seconds, then saves the next puzzle's reference solution. Prints
the seconds from that save to its verdict, which include starting the new chapter's checker unless
watch started it while the pass was read.
"""

from __future__ import annotations

import argparse
import os
import queue
import tempfile
import threading
import time
from pathlib import Path

from bench import bytecode_as_installed


def first_save_after_pass(last: str, first: str, read: float) -> float:
    from rich.console import Console

    from pallas_puzzles.course.reader import load_course
    from pallas_puzzles.watch import EventQueue, PuzzleFileHandler, QuitEvent, WatchLoop, start_observer
    from pallas_puzzles.worker.by_target import WorkersByTarget
    from pallas_puzzles.worker.limits import learner_limits
    from pallas_puzzles.workspace.folder import init_workspace
    from pallas_puzzles.workspace.progress import Progress

    course = load_course()
    done, upcoming = course.find(last), course.find(first)
    with tempfile.TemporaryDirectory() as tmp:
        workspace = init_workspace(Path(tmp) / "ws", course)
        progress = Progress.open(workspace, course, warn=print)
        progress.move_to(done)
        events: EventQueue = queue.Queue()
        with WorkersByTarget("interpret", limits=learner_limits()) as workers:  # as watch's
            workers.start(done.target)
            handler = PuzzleFileHandler({p.file for p in course.puzzles}, events)
            observer, _ = start_observer(workspace.exercises, handler, poll=False)
            with open(os.devnull, "w") as devnull:
                loop = WatchLoop(Console(file=devnull), progress, workers, events)
                runner = threading.Thread(target=loop.run, daemon=True)
                runner.start()
                for puzzle, pause in ((None, 0.0), (done, read), (upcoming, 0.0)):
                    if puzzle is not None:
                        loop.idle.clear()
                        saved = time.perf_counter()
                        workspace.exercise(puzzle).write_text(puzzle.solution_path.read_text())
                    assert loop.idle.wait(120), "the watch loop gave no verdict"
                    time.sleep(pause)
                events.put(QuitEvent())
                runner.join(timeout=30)
            observer.stop()
            observer.join()
    return time.perf_counter() - saved


def chapter_ends() -> list[tuple[str, str]]:
    """(last puzzle, next puzzle) wherever the next puzzle has another target."""
    from pallas_puzzles.course.reader import load_course

    puzzles = load_course().puzzles
    return [(a.name, b.name) for a, b in zip(puzzles, puzzles[1:]) if a.target != b.target]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--read", type=float, default=3.0, help="seconds the learner reads the pass")
    args = parser.parse_args()
    os.environ.setdefault("PALLAS_PUZZLES_TIME_LIMIT", "600")
    print(bytecode_as_installed())
    from pallas_puzzles.checking import support
    from pallas_puzzles.course.reader import load_course

    course = load_course()
    for last, first in chapter_ends():
        refused = support.refusal(course.find(first), None) or support.refusal(course.find(last), None)
        if refused is not None:
            print(f"{last} -> {first}: skipped ({refused.sentence})")
            continue
        seconds = first_save_after_pass(last, first, args.read)
        print(f"{last} -> {first}: first save after {args.read:g} s reading the pass: {seconds:.2f} s")


if __name__ == "__main__":
    main()
