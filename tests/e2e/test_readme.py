"""The docs show what the tool prints: their sample verdicts are checked against the real command."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _samples_script():
    spec = importlib.util.spec_from_file_location("readme_samples", REPO / "scripts" / "readme_samples.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it runs
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_the_sample_verdicts_in_the_docs_are_what_the_tool_prints():
    script = _samples_script()
    shown = [(page, name, body) for page in script.pages()
             for name, body in script.shown(page.read_text(encoding="utf-8")).items()]
    # every sample has one place, and no other; the README shows one
    assert sorted(name for _, name, _ in shown) == sorted(s.name for s in script.SAMPLES)
    assert any(page.name == "README.md" and page.parent == REPO for page, _, _ in shown)
    fresh = script.samples()
    for page, name, body in shown:
        assert "✗ Puzzle" in fresh[name], fresh[name]  # the tool really printed a verdict
        assert script.normalise(body) == script.normalise(fresh[name]), (
            f"{page.relative_to(REPO)}'s sample {name} is stale: run python scripts/generate_docs.py")


def test_the_readme_says_how_to_make_the_virtual_environment_and_where_to_run_the_tests():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    setup = readme[readme.index("## Set up"):readme.index("## Commands")]
    assert "python3 -m venv .venv && source .venv/bin/activate" in setup
    assert setup.index("venv") < setup.index("pip install .")
    assert "from the clone's root" in setup
    # .ci/run runs the README's test command, exactly.
    assert 'python -m pip install -e ".[test]" && python -m pytest' in setup
    assert 'python -m pip install -e ".[test]" && python -m pytest' in (REPO / ".ci" / "run").read_text()
