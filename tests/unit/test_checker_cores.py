"""A core of its own for each checker, only while a command's checkers fill the cores (worker/cores.py)."""

from __future__ import annotations

import pytest

from pallas_puzzles import environment
from pallas_puzzles.worker.cores import Placement


class FakeProcess:
    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        return self.returncode


def _placement(cores: list[int]) -> tuple[Placement, dict[int, int]]:
    pinned: dict[int, int] = {}

    def pin(pid: int, core: int) -> bool:
        pinned[pid] = core
        return True

    return Placement(cores=lambda: cores, pin=pin), pinned


@pytest.fixture(autouse=True)
def _fast_path_on(monkeypatch):
    monkeypatch.delenv(environment.FAST.name, raising=False)


def test_fewer_checkers_than_cores_are_left_free():
    placement, pinned = _placement([0, 1, 2])
    placement.started(FakeProcess(10))
    placement.started(FakeProcess(11))
    assert pinned == {}
    assert placement.core_of(10) is None


def test_checkers_that_fill_the_cores_get_one_each_the_first_started_first():
    placement, pinned = _placement([4, 7])
    placement.started(FakeProcess(10))  # the checker started early: free until a second one comes
    assert pinned == {}
    placement.started(FakeProcess(11))
    assert pinned == {10: 4, 11: 7}


def test_more_checkers_than_cores_share_them_evenly():
    placement, pinned = _placement([0, 1])
    for pid in (10, 11, 12, 13, 14):
        placement.started(FakeProcess(pid))
    assert sorted(pinned.values()).count(0) == 3 and sorted(pinned.values()).count(1) == 2


def test_an_ended_checker_gives_its_core_to_the_next():
    placement, pinned = _placement([0, 1])
    first, second = FakeProcess(10), FakeProcess(11)
    placement.started(first)
    placement.started(second)
    first.returncode = 0  # a restart after a timeout: the old process ended, a new one starts
    placement.started(FakeProcess(12))
    assert pinned[12] == pinned[10] == 0 and placement.core_of(10) is None


def test_one_core_or_the_fast_path_off_pins_nothing(monkeypatch):
    lone, pinned = _placement([0])
    lone.started(FakeProcess(10))
    lone.started(FakeProcess(11))
    monkeypatch.setenv(environment.FAST.name, "0")
    off, pinned_off = _placement([0, 1])
    off.started(FakeProcess(10))
    off.started(FakeProcess(11))
    assert pinned == {} and pinned_off == {}


def test_a_checker_that_cannot_be_pinned_stays_free_and_is_tried_again():
    refused = {10}
    pinned: dict[int, int] = {}

    def pin(pid: int, core: int) -> bool:
        if pid in refused:
            return False
        pinned[pid] = core
        return True

    placement = Placement(cores=lambda: [0, 1], pin=pin)
    placement.started(FakeProcess(10))
    placement.started(FakeProcess(11))
    assert pinned == {11: 0} and placement.core_of(10) is None
    refused.clear()
    placement.started(FakeProcess(12))
    assert pinned == {11: 0, 10: 1, 12: 0}
