"""The package's shape: the CLI stays light, no import cycles, small modules, one home per text."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from pallas_puzzles.findings import FindingKind

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "pallas_puzzles"
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


def _top_level_imports(path: Path) -> set[str]:
    """pallas_puzzles modules imported when this module is imported (not inside functions)."""
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If):  # `if TYPE_CHECKING:` imports never run
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pallas_puzzles"):
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("pallas_puzzles"))
    known = {module_name(m) for m in MODULES}
    return {name for name in found if name in known}


def test_there_is_no_import_cycle():
    graph = {module_name(m): _top_level_imports(m) for m in MODULES}

    def visit(node: str, trail: list[str]) -> None:
        if node in trail:
            cycle = trail[trail.index(node):] + [node]
            pytest.fail("import cycle: " + " -> ".join(cycle))
        for child in graph.get(node, ()):
            visit(child, trail + [node])

    for name in graph:
        visit(name, [])


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_modules_stay_small(path):
    assert len(path.read_text().splitlines()) <= MAX_MODULE_LINES


def _sentences(text: str) -> list[str]:
    """The sentences of a catalogue text long enough to be recognised anywhere else."""
    return [s.strip() for s in re.split(r"(?<=[.:;!?])\s", text) if len(s.strip()) >= 30]


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
    names = [kind.id for kind in FindingKind]
    assert len(names) == len(set(names))
