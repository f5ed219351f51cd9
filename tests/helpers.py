"""Plain helpers the tests of every tier import (`from helpers import ...`); fixtures live in conftest.py."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import signal
import subprocess
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path

import pytest

from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.course.reader import load_course
from pallas_puzzles.dev import examples
from pallas_puzzles.results import CheckResult

REPO = Path(__file__).resolve().parents[1]
COURSE = load_course()
MISTAKES = examples.load(COURSE.folder, examples.MISTAKES)


def build_mistake(mistake: examples.Example, folder: Path) -> Path:
    """Write the mistaken learner file: the reference solution with the mistake's edits."""
    return examples.build(mistake, COURSE, folder)


def rendered(result: CheckResult) -> str:
    """A verdict as the terminal shows it, without colour."""
    from pallas_puzzles.report import terminal

    console = terminal.make_console(force_plain=True)
    with console.capture() as capture:
        terminal.render_result(console, result, COURSE.find(result.name))
    return capture.get()


def start_jax_as_a_checker_does() -> None:
    """Checks made in a test process compile with the checker process's XLA options (precision, speed) and run
    every target's kernels, so JAX starts with as many host devices as any target needs. The device count is set
    through JAX's config, not XLA_FLAGS, which checker processes started by tests inherit: each of those takes
    its count from its own target. Called by the conftest of every tier that checks kernels in-process."""
    import importlib

    from pallas_puzzles import backends
    from pallas_puzzles.engine import targets

    backends.use_checker_xla_flags()
    importlib.import_module("jax").config.update(  # imported only now, with the flags above in place
        "jax_num_cpu_devices", max(t.setup.host_devices for t in targets.BUILTIN.values()))


def skip_if_jax_too_old(puzzle: Puzzle) -> None:
    """A puzzle with min_jax (its own or its interpreting target's) is checked on every leg whose jax has
    its APIs, and skipped on the others. The tests check on the interpreter: no test has a GPU."""
    from pallas_puzzles.backends import INTERPRET
    from pallas_puzzles.checking import support

    refused = support.refusal(puzzle, INTERPRET)
    if refused is not None:
        pytest.skip(refused.sentence)


def checkable(puzzles: tuple[Puzzle, ...] | list[Puzzle]) -> list[Puzzle]:
    """The puzzles this environment's jax can check on the interpreter (`verify --all` skips the others)."""
    from pallas_puzzles.backends import INTERPRET
    from pallas_puzzles.checking import support

    return [p for p in puzzles if support.refusal(p, INTERPRET) is None]


def checked_by_dev_check(course_check, subject: str) -> dict[str, object]:
    """The verdicts of one kind of job in the course check, by puzzle (or example) name."""
    return {(job.example.name if job.example else job.puzzle.name): result
            for job, result in course_check.checked if job.subject == subject}


def run_cli(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 300):
    """The real command in a process of its own: `python -m pallas_puzzles ARGS` (checkers included)."""
    import os
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "pallas_puzzles", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "COLUMNS": "120", **(env or {})})


def puzzles_checked(course_check) -> set[str]:
    """The puzzles whose kernels the course check ran (not those this leg's jax is too old for)."""
    return {job.puzzle.name for job, _ in course_check.checked}


@functools.cache
def json_schema() -> dict:
    """The schema of `--json` output, as shipped inside the package."""
    return json.loads(resources.files("pallas_puzzles").joinpath("report/check.schema.json").read_text())


def one_sentence(output: str) -> str:
    """Bad input gets exactly one 'error:' sentence and no traceback; returns the words of the output."""
    assert "Traceback" not in output
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, output
    return " ".join(output.split())


def swapped_maps(folder: Path) -> Path:
    """Puzzle 4's classic mistake: x's and y's index_maps swapped, so x's map runs past its 2 blocks."""
    text = (REPO / "solutions" / "04_outer_add_blocked.py").read_text()
    x_map, y_map = "pl.BlockSpec((B0,), lambda i, j: (j,))", "pl.BlockSpec((B1,), lambda i, j: (i,))"
    assert x_map in text and y_map in text
    swapped = folder / "04_outer_add_blocked.py"
    swapped.write_text(text.replace(x_map, "X").replace(y_map, y_map.replace("(i,)", "(j,)"))
                       .replace("X", x_map.replace("(j,)", "(i,)")))
    return swapped


@contextlib.contextmanager
def ctrl_c_as_in_a_terminal() -> Iterator[None]:
    """Processes started inside get Ctrl-C (SIGINT) as a terminal's foreground job does.

    A test run started in the background (`pytest &` in a script, nohup, a CI runner) ignores SIGINT,
    and an ignored signal stays ignored in every process it starts: Python then installs no
    KeyboardInterrupt handler, so the SIGINT a test sends is lost and the command runs on to its
    end (exit 0, not 130). A handled signal is reset to its default in a child, so handling it here
    while the child starts gives the child what a shell gives a foreground command."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def as_in_a_background_run() -> Iterator[None]:
    """SIGINT ignored, as in a test run started in the background: the condition under which the Ctrl-C
    tests once lost their exit code 130, made the condition they always run under."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def hungry(exercises: Path) -> Path:
    """Puzzle 1's solution in `exercises`, with a launcher that first builds a 1.5 GiB temporary."""
    docstring = '    """The launcher: one program, one block covering the whole array."""\n'
    hog = ("    hog = jnp.ones((3 << 27,), jnp.float32)  # 1.5 GiB\n"
           "    x = x + hog[-1] * 0.0\n")
    reference = (REPO / "solutions" / "01_constant_add.py").read_text()
    assert docstring in reference
    exercise = exercises / "01_constant_add.py"
    exercise.write_text(reference.replace(docstring, docstring + hog))
    return exercise


def read_only(folder: Path) -> Callable[[], None]:
    """Make `folder` read-only for real; returns the undo. Skips when this machine cannot."""
    if os.geteuid() == 0:
        try:
            subprocess.run(["mount", "--bind", str(folder), str(folder)], check=True, capture_output=True)
        except (OSError, subprocess.CalledProcessError) as exc:
            pytest.skip(f"cannot bind-mount here: {exc}")
        try:
            subprocess.run(["mount", "-o", "remount,bind,ro", str(folder)], check=True, capture_output=True)
        except (OSError, subprocess.CalledProcessError) as exc:
            subprocess.run(["umount", str(folder)], check=False)
            pytest.skip(f"cannot remount read-only here: {exc}")

        def unmount() -> None:
            subprocess.run(["umount", "-l", str(folder)], check=True)

        return unmount
    changed = [folder, *folder.rglob("*")]
    modes = {p: p.stat().st_mode for p in changed}
    for p in changed:
        p.chmod(modes[p] & ~0o222)

    def undo() -> None:
        for p in reversed(changed):
            p.chmod(modes[p])

    return undo


def heading_on_its_own_lines(lines: list[str], heading: str, width: int) -> bool:
    """A chapter heading of `list` from the left edge: one whole line where it fits the width, else
    folded at the width across lines of its own (never into the puzzle column)."""
    if len(heading) <= width:
        return heading in lines
    start = next((i for i, line in enumerate(lines) if line.startswith(heading.split(":")[0] + ": ")), None)
    return start is not None and " ".join(" ".join(lines[start:start + 3]).split()).startswith(heading)
