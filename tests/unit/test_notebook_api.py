"""The notebook API in a real Jupyter kernel: cells define launchers, pp.check and pp.show render.

The kernel is this interpreter's ipykernel; it sees the code under test through
the environment (PYTHONPATH in a source checkout, the installed package in CI).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("ipykernel")

SRC = Path(__file__).resolve().parents[2] / "src"

def test_api_import_is_light() -> None:
    """`import pallas_puzzles as pp` and reaching pp.check load no JAX: that waits for the first check."""
    import subprocess
    import sys

    code = ("import sys, pallas_puzzles as pp; assert callable(pp.check) and callable(pp.show); "
            "assert pp.exercise(3).stub.startswith(('\"\"\"', '#', 'import', 'from')); "
            "print('jax' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(SRC)), check=False)
    assert done.returncode == 0 and done.stdout.strip() == "False", done.stderr


def test_api_bad_input_is_one_sentence() -> None:
    import pallas_puzzles as pp
    from pallas_puzzles.errors import UserError

    with pytest.raises(UserError, match="no file"):
        pp.check(1, "/no/such/file.py", backend="interpret")
    with pytest.raises(UserError, match="launcher function"):
        pp.check(1, 42, backend="interpret")


RE_RUN_CELLS = """
import importlib.util, json, sys
import pallas_puzzles as pp
from pallas_puzzles.engine.targets.memory import private_memory_mib

solution, entry = sys.argv[1], sys.argv[2]
sizes = []
for cell in range(int(sys.argv[3])):  # the learner runs the launcher's cell again: a new function each time
    spec = importlib.util.spec_from_file_location(f"cell{cell}", solution)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert pp.check("tma_copy", getattr(module, entry), backend="interpret").passed
    sizes.append(private_memory_mib())
print(json.dumps(sizes))
"""


@pytest.mark.slow
def test_a_notebook_of_many_re_run_cells_does_not_grow_for_ever() -> None:
    """pp.check runs in the learner's kernel, and JAX keeps every check's programs: each re-run of a
    Mosaic GPU launcher's cell left about 5 MiB behind, for as long as the kernel lived. The checks let
    go once they have added NOTEBOOK_GROWTH_MIB."""
    import json
    import subprocess
    import sys

    from helpers import COURSE, skip_if_jax_too_old

    from pallas_puzzles.engine.targets.memory import NOTEBOOK_GROWTH_MIB

    puzzle = COURSE.find("tma_copy")
    skip_if_jax_too_old(puzzle)
    done = subprocess.run([sys.executable, "-c", RE_RUN_CELLS, str(puzzle.solution_path), puzzle.entry, "36"],
                          capture_output=True, text=True, timeout=600, env=dict(os.environ, PYTHONPATH=str(SRC)),
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    sizes = json.loads(done.stdout.strip().splitlines()[-1])
    assert any(later < earlier - 50 for earlier, later in zip(sizes, sizes[1:])), sizes  # let go at least once
    assert max(sizes) < sizes[0] + NOTEBOOK_GROWTH_MIB + 30, sizes
