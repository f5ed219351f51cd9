"""Targets are plug-ins: a course can name a target that only it (here: only this test) defines.

The test writes a small course whose chapter names a target class of its own, the
TPU interpreter over four simulated host devices, and checks that course's puzzle
in a real checker process. It touches nothing outside this file and engine/targets/.
"""

from __future__ import annotations

import textwrap

import pytest

from pallas_puzzles.backends import TPU, Mode
from pallas_puzzles.engine import targets
from pallas_puzzles.errors import UserError


def test_an_unknown_target_is_one_sentence():
    with pytest.raises(UserError, match="There is no target 'no-such'"):
        targets.get("no-such")
    with pytest.raises(UserError, match="cannot be loaded"):
        targets.get("no_such_module_anywhere:Target")
    with pytest.raises(UserError, match="not a pallas_puzzles Target"):
        targets.get("os:path")


def test_a_target_without_a_partner_cannot_run_there():
    from pallas_puzzles.engine.targets.tpu_lowering import TpuLowering

    assert targets.partner_name(TpuLowering.name, TPU, Mode.RUN) is None
    with pytest.raises(UserError, match="no way to run on the tpu backend"):
        targets.for_check(TpuLowering.name, TPU, Mode.RUN)


def test_no_target_module_imports_jax_when_the_cli_reads_it():
    """The CLI reads targets' process needs and partners before any checker starts JAX."""
    import subprocess
    import sys

    probe = textwrap.dedent("""
        import sys
        from pallas_puzzles.engine import targets
        for name in targets.BUILTIN:
            targets.get(name).setup, targets.get(name).partners
        print('jax' in sys.modules, 'numpy' in sys.modules)
    """)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False"]


