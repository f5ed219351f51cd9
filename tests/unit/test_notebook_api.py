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
