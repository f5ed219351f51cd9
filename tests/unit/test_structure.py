"""The package's shape: the CLI stays light, no import cycles, small modules, one home per text."""

from __future__ import annotations

import ast
import functools
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from pallas_puzzles.findings import FindingKind

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "pallas_puzzles"
MODULES = sorted(PACKAGE.rglob("*.py"))
MAX_MODULE_LINES = 300


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_importing_the_cli_does_not_import_jax():
    """JAX takes a second to import: only the checker process pays for it."""
    probe = "import sys, pallas_puzzles.cli, pallas_puzzles.commands; print('jax' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def _imports(path: Path) -> set[str]:
    """Every pallas_puzzles module this module imports anywhere: at the top, inside functions and
    under `if TYPE_CHECKING:` alike (a cycle through a function-local import is still a cycle of
    ideas). `from pallas_puzzles.pkg import sub` counts the submodule, not the package."""
    known = {module_name(m) for m in MODULES}
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pallas_puzzles"):
            submodules = {f"{node.module}.{alias.name}" for alias in node.names} & known
            found |= submodules
            if len(submodules) < len(node.names):  # it also takes names defined in the module itself
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("pallas_puzzles")}
    return found & known


def test_there_is_no_import_cycle():
    graph = {module_name(m): _imports(m) for m in MODULES}
    done: set[str] = set()

    def visit(node: str, trail: list[str]) -> None:
        if node in trail:
            pytest.fail("import cycle: " + " -> ".join(trail[trail.index(node):] + [node]))
        if node in done:
            return
        for child in sorted(graph.get(node, ())):
            visit(child, trail + [node])
        done.add(node)

    for name in sorted(graph):
        visit(name, [])


def test_the_cycle_test_sees_imports_inside_functions_and_type_checking(tmp_path: Path):
    """The test above would pass anything if _imports missed the imports that hide cycles."""
    module = tmp_path / "probe.py"
    module.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pallas_puzzles.results import X\n"
                      "def f():\n    from pallas_puzzles.perf import model\n")
    assert _imports(module) == {"pallas_puzzles.results", "pallas_puzzles.perf.model"}


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_modules_stay_small(path):
    assert len(path.read_text().splitlines()) <= MAX_MODULE_LINES


def _sentences(text: str) -> list[str]:
    """The sentences of a catalogue text long enough to be recognised anywhere else."""
    return [s.strip() for s in re.split(r"(?<=[.:;!?])\s", text) if len(s.strip()) >= 30]


@functools.cache
def _string_constants(path: Path) -> str:
    """Every string literal in a module (implicit concatenations joined, as Python joins them)."""
    return "\n".join(node.value for node in ast.walk(ast.parse(path.read_text()))
                     if isinstance(node, ast.Constant) and isinstance(node.value, str))


@pytest.mark.parametrize("kind", list(FindingKind), ids=lambda k: k.id)
def test_each_explanation_is_written_once(kind):
    """A finding's label and explanation live in findings.toml; no module repeats any sentence of them."""
    sentences = _sentences(kind.explanation) + ([kind.label] if len(kind.label) >= 30 else [])
    assert sentences, "an explanation says at least one whole sentence"
    repeated = {p.relative_to(PACKAGE).as_posix(): s for p in MODULES for s in sentences if s in _string_constants(p)}
    assert not repeated


def test_the_catalogue_names_every_kind_and_nothing_else():
    catalogue = tomllib.loads((PACKAGE / "findings.toml").read_text())
    assert list(catalogue) == [kind.id for kind in FindingKind]
    assert all(set(entry) == {"label", "explanation"} and all(entry.values()) for entry in catalogue.values())


def test_finding_kinds_have_unique_names():
    """Iterating an Enum skips aliases (a second name for a value), so count the names it was written with."""
    assert len(FindingKind.__members__) == len(FindingKind)
    assert len({kind.id for kind in FindingKind}) == len(FindingKind)
