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


def test_in_a_notebook_the_ceiling_bounds_what_the_checks_added(monkeypatch):
    """A notebook's kernel is the learner's process: its own data may be far above any fixed ceiling, so
    the caches go once the checks have grown it by the ceiling since the first check (or the last clear),
    and a clear that gives little back does not make every later check clear again."""
    readings = iter([900.0, 960.0, 1049.0, 1051.0, 1000.0, 1100.0, 1151.0, 1020.0])
    cleared = []
    monkeypatch.setattr(memory, "private_memory_mib", lambda: next(readings))
    monkeypatch.setattr(memory, "forget_compiled", lambda: cleared.append(True))
    monkeypatch.setattr(memory, "trim_heap", lambda: None)
    release = memory.CacheRelease.for_notebook()
    assert release.relative and release.ceiling_mib == memory.NOTEBOOK_GROWTH_MIB == 150
    # first check: 900 is where the learner's process stands; then +60, +149: kept; +151: cleared, and the
    # reading after the clear (1000) is the new baseline; +100 kept, +151 cleared (baseline 1020)
    assert [release.after_check() for _ in range(5)] == [False, False, False, True, False]
    assert release.after_check() is True and len(cleared) == 2 and release.baseline_mib == 1020.0
    monkeypatch.setenv(fast_path.VARIABLE, "0")  # the fast path off: the caches go after every check
    assert memory.CacheRelease.for_notebook() == memory.CacheRelease(ceiling_mib=0.0, trim=False, relative=True)


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


