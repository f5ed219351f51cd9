"""The package's shape: the CLI stays light, no import cycles, small modules, one home per text."""

from __future__ import annotations

import ast
import subprocess
import sys
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


@pytest.mark.parametrize("kind", list(FindingKind), ids=lambda k: k.id)
def test_each_explanation_is_written_once(kind):
    """A finding's explanation lives in the catalogue and nowhere else in the package."""
    fragment = kind.explanation[:60]
    sources = [p for p in MODULES if fragment in p.read_text().replace("\n", " ")]
    homes = [p.relative_to(PACKAGE).as_posix() for p in sources]
    assert homes == ["findings.py"], homes


def test_finding_kinds_have_unique_names():
    names = [kind.id for kind in FindingKind]
    assert len(names) == len(set(names))
