"""Shared fixtures: the course, fresh workspaces, and the CLI runner."""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pallas_puzzles import backends
from pallas_puzzles.course_file import load_course
from pallas_puzzles.metadata import Course, Puzzle

# Checks made in this process compile with the checker process's XLA options (precision, speed).
backends.use_checker_xla_flags()

REPO = Path(__file__).resolve().parents[1]


def skip_if_jax_too_old(puzzle: Puzzle) -> None:
    """A puzzle with min_jax (its own or its target's) is checked on every leg whose jax has its APIs,
    and skipped on the others."""
    from pallas_puzzles import support

    refused = support.refusal(puzzle, None)
    if refused is not None:
        pytest.skip(refused.sentence)


def checkable(puzzles: tuple[Puzzle, ...] | list[Puzzle]) -> list[Puzzle]:
    """The puzzles this environment's jax can check on the interpreter (`verify --all` skips the others)."""
    from pallas_puzzles import support
    from pallas_puzzles.backends import INTERPRET

    return [p for p in puzzles if support.refusal(p, INTERPRET) is None]


@pytest.fixture(scope="session")
def course() -> Course:
    return load_course()


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
