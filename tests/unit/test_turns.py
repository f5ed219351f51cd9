"""The scheduler of multi-device runs (tpu_multichip/turns.py), with plain threads standing in for devices.

A device thread calls take() before each of its callbacks and give() after it, and block() when a wait
cannot end. Whatever the threads' own timing, a schedule gives the same order of turns every time, the
reversed schedule another, and a state where no device can go is a deadlock at once.
"""

from __future__ import annotations

import random
import threading
import time

from pallas_puzzles.engine.targets.tpu_multichip.turns import Schedule, Turns, schedules


def run_devices(turns: Turns, devices: int, steps: int, jitter: random.Random) -> list[int]:
    """Each device takes `steps` turns, sleeping a random while between them; the order the turns came in."""
    order: list[int] = []

    def device(d: int) -> None:
        time.sleep(jitter.random() / 500)
        for _ in range(steps):
            turns.take(d)
            order.append(d)
            turns.give(d)
            time.sleep(jitter.random() / 1000)
        turns.finish(d)

    threads = [threading.Thread(target=device, args=(d,)) for d in range(devices)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    return order


def test_a_schedule_gives_the_same_order_whatever_the_threads_timing():
    orders = []
    for attempt in range(5):
        turns = Turns()
        turns.begin(4, Schedule(seed=7), on_deadlock=lambda done: None)
        orders.append(run_devices(turns, 4, 3, random.Random(attempt)))
        turns.end()
    assert len(set(map(tuple, orders))) == 1 and sorted(orders[0]) == sorted(list(range(4)) * 3)


def test_the_reversed_schedule_runs_the_devices_the_other_way_round():
    def first_device(reverse: bool) -> int:
        turns = Turns()
        turns.begin(3, Schedule(seed=1, reverse=reverse), on_deadlock=lambda done: None)
        order = run_devices(turns, 3, 2, random.Random(0))
        turns.end()
        return order[0]

    assert first_device(False) != first_device(True)


def test_a_device_that_must_wait_hands_its_turn_on_until_its_semaphore_changes():
    turns = Turns()
    turns.begin(2, Schedule(seed=0), on_deadlock=lambda done: None)
    count = [0]
    log: list[str] = []

    def waiter() -> None:
        turns.take(0)
        while count[0] == 0:
            turns.block(0, lambda: count[0])
        log.append("waited")
        turns.give(0)
        turns.finish(0)

    def signaller() -> None:
        turns.take(1)
        count[0] += 1
        log.append("signalled")
        turns.give(1)
        turns.finish(1)

    threads = [threading.Thread(target=waiter), threading.Thread(target=signaller)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    turns.end()
    assert log == ["signalled", "waited"]


def test_no_device_able_to_go_is_a_deadlock_at_once():
    turns = Turns()
    found: list[list[int]] = []
    turns.begin(3, Schedule(seed=0), on_deadlock=found.append)

    def stuck(d: int) -> None:
        turns.take(d)
        turns.block(d, lambda: 0)  # a semaphore nothing will ever change
        turns.give(d)

    def done(d: int) -> None:
        turns.take(d)
        turns.give(d)
        turns.finish(d)

    threads = [threading.Thread(target=stuck, args=(0,)), threading.Thread(target=stuck, args=(1,)),
               threading.Thread(target=done, args=(2,))]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    turns.end()
    assert found == [[2]] and time.monotonic() - started < 5


def test_a_blocked_device_whose_semaphore_changed_goes_before_ready_ones_of_lower_priority():
    """The device of highest priority blocks; the next one signals it and is ready again at once; the
    signalled device goes first, then the signaller, then the last: priority decides, not readiness."""
    schedule = Schedule(seed=3)
    high, middle, low = schedule.order(3)
    turns = Turns()
    turns.begin(3, schedule, on_deadlock=lambda done: None)
    count = [0]
    log: list[str] = []

    def waiter() -> None:
        turns.take(high)
        while count[0] == 0:
            turns.block(high, lambda: count[0])
        log.append("high went on")
        turns.give(high)
        turns.finish(high)

    def signaller() -> None:
        turns.take(middle)
        count[0] += 1
        log.append("middle signalled")
        turns.give(middle)
        turns.take(middle)
        log.append("middle again")
        turns.give(middle)
        turns.finish(middle)

    def bystander() -> None:
        turns.take(low)
        log.append("low")
        turns.give(low)
        turns.finish(low)

    threads = [threading.Thread(target=f) for f in (bystander, signaller, waiter)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    turns.end()
    assert log == ["middle signalled", "high went on", "middle again", "low"]


def test_the_priority_order_turns_round_when_reversed():
    forward, backward = Schedule(seed=5).order(6), Schedule(seed=5, reverse=True).order(6)
    assert sorted(forward) == list(range(6)) and backward == forward[::-1]


def test_a_case_runs_in_both_priority_orders_and_lands_copies_in_both_orders():
    first, second = schedules(11)
    assert schedules(11) == (first, second)  # fixed by the seed: the same file, the same runs
    assert not first.reverse and not first.oldest_first
    assert second.reverse and second.oldest_first
    assert second.order(5) == first.order(5)[::-1]
