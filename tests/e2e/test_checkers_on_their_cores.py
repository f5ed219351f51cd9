"""Checkers that fill the cores each run on a core of their own (worker/cores.py), on a real pool."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pallas_puzzles import environment
from pallas_puzzles.worker import cores
from pallas_puzzles.worker.pool import WorkerPool

pytestmark = pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or not Path("/proc/self/task").exists(),
                                reason="pins through Linux's affinity calls and reads /proc")


def _cores_of_threads(pid: int) -> set[str]:
    """Each thread's allowed cores, as /proc lists them ("3", "0-15")."""
    found = set()
    for thread in Path(f"/proc/{pid}/task").iterdir():
        for line in (thread / "status").read_text().splitlines():
            if line.startswith("Cpus_allowed_list:"):
                found.add(line.split()[1])
    return found


def _two_cores(monkeypatch) -> list[int]:
    usable = cores.usable_cores()
    if len(usable) < 2:
        pytest.skip("needs two cores")
    monkeypatch.setattr(cores, "CHECKERS", cores.Placement(cores=lambda: usable[:2]))
    return usable[:2]


def test_two_checkers_on_two_cores_run_each_on_its_own_every_thread(monkeypatch):
    monkeypatch.delenv(environment.FAST.name, raising=False)
    two = _two_cores(monkeypatch)
    with WorkerPool("interpret", 2) as pool:
        pool.start()
        for worker in pool.workers:  # each ready: JAX has started its threads
            assert pool._ready[id(worker)].wait(120)
        placed = [_cores_of_threads(worker._process.pid) for worker in pool.workers]
    assert sorted(placed, key=str) == [{str(two[0])}, {str(two[1])}]


def test_with_the_fast_path_off_the_operating_system_places_them(monkeypatch):
    monkeypatch.setenv(environment.FAST.name, "0")
    _two_cores(monkeypatch)
    everywhere = _cores_of_threads(os.getpid())
    with WorkerPool("interpret", 2) as pool:
        pool.start()
        placed = [_cores_of_threads(worker._process.pid) for worker in pool.workers]
    assert placed == [everywhere, everywhere]
