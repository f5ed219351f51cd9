"""A semaphore wait is ordered after the signals it takes, in arrival order, not after every signal so far."""

from __future__ import annotations

import threading

import numpy as np

from pallas_puzzles.engine.targets.pallas_call.intercept import semaphore_clocks


class FakeSemaphore:
    """JAX's TPU interpreter's Semaphore, as far as clocks go: signals merge into one clock per core,
    and a wait that ends takes that clock whole (the behaviour the hooks refine)."""

    detect_races = True

    def __init__(self) -> None:
        self.cv = threading.Condition()
        self.count = [0, 0]
        self.clocks: list[np.ndarray | None] = [None, None]
        self.seen: list[np.ndarray] = []  # the clock each finished wait took

    def signal(self, inc: int, core: int, clock: np.ndarray) -> None:
        with self.cv:
            self.count[core] += inc
            if self.clocks[core] is None:
                self.clocks[core] = clock.copy()
            else:
                np.maximum(self.clocks[core], clock, out=self.clocks[core])

    def wait(self, value: int, core: int) -> None:
        with self.cv:
            assert self.count[core] >= value  # the test signals first: nothing blocks
            self.count[core] -= value
            self.seen.append(self.clocks[core].copy())


signal = semaphore_clocks._keeping_arrivals(FakeSemaphore.signal)
wait = semaphore_clocks._taking_first_arrivals(FakeSemaphore.wait)
RUNNING, PARTIAL = np.array([0, 1, 0]), np.array([0, 5, 0])  # core 1's clock at each signal


def test_a_wait_for_one_of_two_signals_is_ordered_after_the_first_only() -> None:
    sem = FakeSemaphore()
    signal(sem, 1, 0, RUNNING)
    signal(sem, 1, 0, PARTIAL)
    wait(sem, 1, 0)
    wait(sem, 1, 0)
    assert [list(c) for c in sem.seen] == [[0, 1, 0], [0, 5, 0]]


def test_a_wait_for_both_is_ordered_after_both_and_a_signal_of_two_serves_two_waits() -> None:
    sem = FakeSemaphore()
    signal(sem, 1, 0, RUNNING)
    signal(sem, 1, 0, PARTIAL)
    wait(sem, 2, 0)
    signal(sem, 2, 1, RUNNING)
    wait(sem, 1, 1)
    signal(sem, 1, 1, PARTIAL)
    wait(sem, 1, 1)  # still the first signal's second unit
    wait(sem, 1, 1)
    assert [list(c) for c in sem.seen] == [[0, 5, 0], [0, 1, 0], [0, 1, 0], [0, 5, 0]]
