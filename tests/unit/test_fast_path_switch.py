"""tpu-interpret's fast path, lever by lever: what switches it, what it compiles and what it keeps.

That it changes no verdict is compared on the whole course in tests/engine/test_fast_path.py.
"""

from __future__ import annotations

from pallas_puzzles.backends import INTERPRET, Mode
from pallas_puzzles.engine import targets
from pallas_puzzles.engine.targets.pallas_call import fast_path
from pallas_puzzles.engine.targets.pallas_call.fast_path import OFF, FastPath
from pallas_puzzles.engine.targets.tpu_interpret import TpuInterpreter

# -- each lever, by what it does ----------------------------------------------------------------

def started(fast: FastPath) -> TpuInterpreter:
    target = TpuInterpreter(fast)
    target.start()
    return target


def test_private_memory_is_read():
    used = fast_path.private_memory_mib()
    assert used is not None and 1 < used < 1e6


def test_where_memory_cannot_be_read_the_caches_go_every_few_puzzles(monkeypatch):
    monkeypatch.setattr(fast_path, "private_memory_mib", lambda: None)
    every = fast_path.PUZZLES_PER_CLEAR
    assert [FastPath().keeps_caches(kept) for kept in range(1, every + 1)] == [True] * (every - 1) + [False]


def test_one_variable_turns_the_whole_fast_path_off(monkeypatch):
    monkeypatch.setenv(fast_path.VARIABLE, "0")
    assert targets.for_check("tpu-interpret", INTERPRET, Mode.RUN).fast == OFF
    monkeypatch.setenv(fast_path.VARIABLE, "1")
    assert targets.for_check("tpu-interpret", INTERPRET, Mode.RUN).fast == FastPath()
    assert FastPath().eager_grid_limit > 0 and FastPath().memory_ceiling_mib > 0 and FastPath().freeze_gc
    assert FastPath().numpy_ops and not OFF.numpy_ops


