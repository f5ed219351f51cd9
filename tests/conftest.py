"""Shared fixtures: the course, fresh workspaces, and the CLI runner."""

from __future__ import annotations

import contextlib
import functools
import importlib
import io
import json
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pallas_puzzles import backends
from pallas_puzzles.course.model import Course, Puzzle
from pallas_puzzles.course.reader import load_course
from pallas_puzzles.engine import targets

# Checks made in this process compile with the checker process's XLA options (precision, speed), and
# run every target's kernels, so JAX starts here with as many host devices as any target needs. The
# device count is set through JAX's config, not XLA_FLAGS, which checker processes started by tests
# inherit: each of those takes its count from its own target.
backends.use_checker_xla_flags()
importlib.import_module("jax").config.update(  # imported only now, with the flags above in place
    "jax_num_cpu_devices", max(t.setup.host_devices for t in targets.BUILTIN.values()))

REPO = Path(__file__).resolve().parents[1]


def skip_if_jax_too_old(puzzle: Puzzle) -> None:
    """A puzzle with min_jax (its own or its target's) is checked on every leg whose jax has its APIs,
    and skipped on the others."""
    from pallas_puzzles.checking import support

    refused = support.refusal(puzzle, None)
    if refused is not None:
        pytest.skip(refused.sentence)


def checkable(puzzles: tuple[Puzzle, ...] | list[Puzzle]) -> list[Puzzle]:
    """The puzzles this environment's jax can check on the interpreter (`verify --all` skips the others)."""
    from pallas_puzzles.backends import INTERPRET
    from pallas_puzzles.checking import support

    return [p for p in puzzles if support.refusal(p, INTERPRET) is None]


@pytest.fixture(scope="session")
def course() -> Course:
    return load_course()


@pytest.fixture(scope="session")
def course_check():
    """`dev check` of the built-in course, run once for the session on pools of real checkers: every
    stub, solution, TPU lowering, mistake and correct alternative. Tests read its verdicts."""
    from rich.console import Console

    from pallas_puzzles.dev.check import check_course
    from pallas_puzzles.report.live import RunProgress

    quiet = Console(file=io.StringIO())
    return check_course(load_course().folder, lambda total: RunProgress(quiet, total, enabled=False))


def checked_by_dev_check(course_check, subject: str) -> dict[str, object]:
    """The verdicts of one kind of job in the course check, by puzzle (or example) name."""
    return {(job.example.name if job.example else job.puzzle.name): result
            for job, result in course_check.checked if job.subject == subject}


@pytest.fixture(scope="session")
def small_course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The course `dev new` writes (one chapter, two puzzles), made once: copy it before changing it."""
    from pallas_puzzles.dev.new import new_course

    return new_course(tmp_path_factory.mktemp("courses") / "small-course")


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


@pytest.fixture()
def workspace(tmp_path: Path) -> Iterator[Path]:
    """A fresh workspace made by `init`, with the current directory inside it."""
    from pallas_puzzles.cli import app

    result = CliRunner().invoke(app, ["init", str(tmp_path / "ws")])
    assert result.exit_code == 0, result.output
    with contextlib.chdir(tmp_path / "ws"):
        yield tmp_path / "ws"


@pytest.fixture()
def cli() -> CliRunner:
    return CliRunner()


@functools.cache
def json_schema() -> dict:
    """The schema of `--json` output, as shipped inside the package."""
    return json.loads(resources.files("pallas_puzzles").joinpath("report/check.schema.json").read_text())


@pytest.fixture()
def validate_json() -> Callable[[dict], None]:
    import jsonschema

    return lambda document: jsonschema.validate(document, json_schema())


def one_sentence(output: str) -> str:
    """Bad input gets exactly one 'error:' sentence and no traceback; returns the words of the output."""
    assert "Traceback" not in output
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, output
    return " ".join(output.split())
