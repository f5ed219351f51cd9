"""A learner's file that reaches into the checker is refused before it runs, at its line (issue 31):
read with `ast`, no JAX."""

from __future__ import annotations

import ast

import pytest

from pallas_puzzles.engine.integrity.file_rules import scan
from pallas_puzzles.findings import FindingKind

CLEAN = '''"""Puzzle 1, about pallas_puzzles (a docstring may name the package)."""
import jax
from jax.experimental import pallas as pl


def kernel(x_ref, z_ref):
    z_ref[...] = x_ref[...] + 10.0


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
'''
REACHING = {
    "from pallas_puzzles.engine import specs": "imports pallas_puzzles.engine",
    "import pallas_puzzles.engine.case as case": "imports pallas_puzzles.engine.case",
    "import importlib": "imports importlib",
    "spec = __import__('json')": "uses __import__",
    "import sys\nmods = sys.modules": "reads sys.modules",
    "import sys\nf = sys._getframe(2)": "(_getframe)",
    "import inspect\nst = inspect.stack()": "(stack)",
    "import gc\nobjs = gc.get_objects()": "(get_objects)",
    "name = 'pallas_puzzles.engine.case'": "names the checker's package",
    "import jax\ntraced = isinstance(1, jax.core.Tracer)": "(Tracer)",
}


def _scan(text: str):
    return scan(ast.parse(text), "learner.py")


def test_a_clean_file_and_its_main_block_pass():
    assert _scan(CLEAN) is None
    assert _scan("import numpy as np\nstack = np.stack\ndef f(t):\n    return t.trace()\n") is None


@pytest.mark.parametrize("code", REACHING)
def test_a_line_that_reaches_into_the_checker_is_named(code: str):
    finding = _scan(CLEAN.replace("import jax\n", f"import jax\n{code}\n", 1))
    assert finding is not None and finding.kind is FindingKind.REACHES_CHECKER
    assert REACHING[code] in finding.message
    assert finding.where[0].line == 3 + code.count("\n")  # the inserted lines follow `import jax`, line 2
