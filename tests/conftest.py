"""Shared fixtures of every tier: the course, fresh workspaces, and the CLI runner (no JAX here: the unit
tier runs without it; the other tiers start it in their own conftest.py). Plain helpers: helpers.py."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers import json_schema
from typer.testing import CliRunner

from pallas_puzzles.course.model import Course
from pallas_puzzles.course.reader import load_course


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


@pytest.fixture(scope="session")
def small_course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The course `dev new` writes (one chapter, two puzzles), made once: copy it before changing it."""
    from pallas_puzzles.dev.new import new_course

    return new_course(tmp_path_factory.mktemp("courses") / "small-course")


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


@pytest.fixture()
def validate_json() -> Callable[[dict], None]:
    import jsonschema

    return lambda document: jsonschema.validate(document, json_schema())


