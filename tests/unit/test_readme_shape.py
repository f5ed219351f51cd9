"""The README is a one-minute read whose first screen sets a newcomer up."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
INSTALL_AND_WATCH = "python -m pip install . && pallas-puzzles init my-puzzles && cd my-puzzles && pallas-puzzles watch"
TEST = 'python -m pip install -e ".[test]" && python -m pytest'


def test_the_readme_stays_short():
    assert len(README.read_bytes()) <= 10_000


def test_the_set_up_comes_in_the_first_40_lines():
    first = README.read_text(encoding="utf-8").splitlines()[:40]
    assert "## Set up" in first
    commands = [line for line in first if line.startswith(("git clone ", "python", "python3 "))]
    assert commands[0].startswith("git clone ") and commands[-2:] == [INSTALL_AND_WATCH, TEST]
    setup = "\n".join(first)
    assert "Python 3.11" in setup and "Python 3.12" in setup and "jax 0.12" in setup


def test_ci_runs_the_readmes_test_command_exactly():
    assert TEST in README.read_text(encoding="utf-8")
    assert f"        {TEST} || exit 1\n" in (REPO / ".ci" / "run").read_text(encoding="utf-8")
