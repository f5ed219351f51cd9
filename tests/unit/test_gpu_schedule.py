"""The Mosaic GPU target's scheduler (mosaic_gpu/schedule.py): interpreter threads take turns at
their callbacks, in an order a Schedule fixes, so the same schedule gives the same interleaving;
a wait nothing can end is known at once; a warpgroup's warps join and leave the turns.

Plain Python threads stand in for the interpreter's (no JAX): each runs a list of steps, each
step a gated "callback" that logs what it did.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from pallas_puzzles.engine.targets.mosaic_gpu import schedule
from pallas_puzzles.engine.targets.mosaic_gpu.schedule import AWAY, DONE, RUNNING, TURNS, Schedule, gated


@dataclass(frozen=True)
class Warpgroup:
    block_id: int
    warpgroup_id: int

    def warps(self) -> list[Warp]:
        return [Warp(self.block_id, self.warpgroup_id, w) for w in range(4)]


@dataclass(frozen=True)
class Warp:
    block_id: int
    warpgroup_id: int
    warp_id: int

    def warpgroup(self) -> Warpgroup:
        return Warpgroup(self.block_id, self.warpgroup_id)


def _run(plan: Schedule, programs: dict[Warpgroup, list[Callable[[Warpgroup], None]]]) -> list[str]:
    """Run one thread per warpgroup, each calling its steps through a gate; the order they ran in."""
    log: list[str] = []

    def step(thread: Warpgroup, name: str, then: str = RUNNING) -> None:
        gated(lambda *, thread: log.append(name), then)(thread=thread)

    TURNS.begin(plan)
    TURNS.new_block(programs)
    try:
        threads = [threading.Thread(target=lambda t=t, p=p: [s(t, step) for s in p]) for t, p in programs.items()]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=20)
        assert not any(t.is_alive() for t in threads), "a thread never got its turn"
    finally:
        TURNS.end()
    return log


def _steps(*names: str) -> list[Callable[..., None]]:
    return [lambda t, step, n=n: step(t, n) for n in names] + [lambda t, step: step(t, "end", DONE)]


WG0, WG1 = Warpgroup(0, 0), Warpgroup(0, 1)
TWO = {WG0: _steps("a0", "a1", "a2"), WG1: _steps("b0", "b1", "b2")}


def test_a_thread_runs_ahead_until_it_must_wait_lowest_first_or_highest_first():
    assert _run(Schedule("lowest"), TWO) == ["a0", "a1", "a2", "end", "b0", "b1", "b2", "end"]
    assert _run(Schedule("highest", reverse=True), TWO) == ["b0", "b1", "b2", "end", "a0", "a1", "a2", "end"]


def test_a_shuffled_schedule_interleaves_the_same_way_every_time():
    fixed = {tuple(_run(Schedule("l"), TWO)), tuple(_run(Schedule("h", reverse=True), TWO))}
    orders = []
    for seed in range(4):
        runs = {tuple(_run(Schedule("shuffled", seed=seed, shuffle=0.5), TWO)) for _ in range(5)}
        assert len(runs) == 1, f"seed {seed} gave {len(runs)} orders"
        orders += runs
    assert set(orders) - fixed, "no seed interleaves the two threads"


def test_the_case_schedules_are_fixed_by_the_seed():
    assert schedule.schedules(3) == schedule.schedules(3)
    assert [s.name for s in schedule.schedules(3)] == ["lowest thread first", "highest thread first", "shuffled"]


def test_a_blocked_thread_hands_its_turn_on_and_goes_on_once_it_can():
    flag: list[int] = []

    def wait_for_flag(t, step):
        step(t, "waiting")
        gated(lambda *, thread: TURNS.block(thread, lambda: bool(flag)) and flag.append(2))(thread=t)

    def raise_flag(t, step):
        step(t, "raise")
        gated(lambda *, thread: flag.append(1))(thread=t)

    log = _run(Schedule("lowest"), {WG0: [wait_for_flag, *_steps()], WG1: [raise_flag, *_steps()]})
    assert flag == [1, 2] and log[:2] == ["waiting", "raise"]


def test_when_no_thread_can_go_every_blocked_one_is_told_at_once():
    told: list[bool] = []
    blocked = [lambda t, step: gated(lambda *, thread: told.append(TURNS.block(thread, lambda: False)))(thread=t)]
    _run(Schedule("lowest"), {WG0: blocked + _steps(), WG1: blocked + _steps()})
    assert told == [False, False]


def test_a_warpgroup_away_with_its_warps_comes_back_once_they_have_run():
    log: list[str] = []

    def with_warps(t, step):
        step(t, "start warps", AWAY)
        def warp(w: Warp) -> None:  # one callback, and the one that says the warp is done
            gated(lambda *, thread: log.append(f"warp {thread.warp_id}"))(thread=w)
            gated(lambda *, thread: None, DONE)(thread=w)

        warps = [threading.Thread(target=warp, args=(w,)) for w in t.warps()]
        for w in warps:
            w.start()
        for w in warps:
            w.join(timeout=20)
        step(t, "back")

    order = _run(Schedule("lowest"), {WG0: [with_warps, *_steps()], WG1: _steps("b0")})
    assert order[0] == "start warps" and order[-1] == "end"
    assert sorted(log) == [f"warp {w}" for w in range(4)]
    assert TURNS.most_threads >= 4


@pytest.fixture(autouse=True)
def _idle_scheduler():
    yield
    TURNS.end()
    assert not TURNS.active and DONE == "done"
