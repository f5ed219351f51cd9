"""tpu-interpret's fast path, lever by lever: what switches it, what it compiles and what it keeps.

That it changes no verdict is compared on the whole course in tests/engine/test_fast_path.py.
"""

from __future__ import annotations

from pallas_puzzles.backends import INTERPRET, Mode
from pallas_puzzles.engine import targets
from pallas_puzzles.engine.targets import memory
from pallas_puzzles.engine.targets.pallas_call import fast_path
from pallas_puzzles.engine.targets.pallas_call.fast_path import OFF, FastPath
from pallas_puzzles.engine.targets.tpu_interpret import TpuInterpreter

# -- each lever, by what it does ----------------------------------------------------------------

def started(fast: FastPath) -> TpuInterpreter:
    target = TpuInterpreter(fast)
    target.start()
    return target


def test_private_memory_is_read():
    used = memory.private_memory_mib()
    assert used is not None and 1 < used < 1e6


def test_where_memory_cannot_be_read_the_caches_go_every_few_checks(monkeypatch):
    cleared = []
    monkeypatch.setattr(memory, "private_memory_mib", lambda: None)
    monkeypatch.setattr(memory, "forget_compiled", lambda: cleared.append(True))
    release, every = memory.CacheRelease(), memory.CHECKS_PER_CLEAR
    assert [release.after_check() for _ in range(2 * every)] == ([False] * (every - 1) + [True]) * 2
    assert len(cleared) == 2


def test_one_variable_turns_the_whole_fast_path_off(monkeypatch):
    monkeypatch.setenv(fast_path.VARIABLE, "0")
    assert targets.for_check("tpu-interpret", INTERPRET, Mode.RUN).fast == OFF
    assert memory.CacheRelease.from_environment() == memory.CacheRelease(ceiling_mib=0.0, trim=False)
    monkeypatch.setenv(fast_path.VARIABLE, "1")
    assert targets.for_check("tpu-interpret", INTERPRET, Mode.RUN).fast == FastPath()
    assert memory.CacheRelease.from_environment() == memory.CacheRelease()
    assert memory.CacheRelease().ceiling_mib > 0
    assert FastPath().eager_grid_limit > 0 and FastPath().freeze_gc
    assert FastPath().numpy_ops and not OFF.numpy_ops


