"""The multi-device rules and their findings, without running a kernel (no jax).

The hooks report plain numbers and the interpreter's record of a line; these
tests feed the monitor and the explainer such reports and check the rules
(handshake, overlap), the options, the traffic card and the words and lines
of each finding. The kernels themselves are checked in the chapter's tests.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pallas_puzzles.engine.learner_lines import remember_source
from pallas_puzzles.engine.targets.tpu_multichip import options, traffic
from pallas_puzzles.engine.targets.tpu_multichip.explain import Explainer
from pallas_puzzles.engine.targets.tpu_multichip.monitor import Monitor
from pallas_puzzles.engine.targets.tpu_multichip.problems import (
    Access,
    BadDevice,
    CopyInfo,
    Deadlock,
    EarlyAccess,
    Leftover,
    LostCopy,
    NoOverlap,
    OneWay,
    Race,
    TakingTurns,
    Wait,
)
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.report.traffic_card import card_lines

KERNEL = """def kernel(x_ref, o_ref, send_sem, recv_sem):
    copy = make_copy(x_ref, o_ref)
    copy.start()
    copy.wait_recv()
    o_ref[...] += 1.0
    pl.semaphore_signal(free_sem, 1, device_id={"x": left})
"""


@pytest.fixture()
def learner(tmp_path: Path) -> str:
    path = tmp_path / "learner.py"
    path.write_text(KERNEL)
    remember_source(str(path), KERNEL)
    return str(path)


def at(learner: str, line: int) -> str:
    """The interpreter's one-line record of a learner line: 'file:line:column (function)'."""
    return f"{learner}:{line}:4 (kernel)"


def test_a_copy_before_the_handshake_breaks_the_rule_and_one_after_it_does_not():
    monitor = Monitor()
    monitor.start()
    log = monitor.kernel(memory=object(), devices=2)
    monitor.barrier_signal(log, device=0, target=1)  # device 0 has entered and tells device 1
    monitor.remote(log, device=0, target=1, what="copy", where="a")  # device 0 heard nothing from 1 yet
    monitor.barrier_waited(log, device=1)  # device 1 consumed device 0's signal
    monitor.remote(log, device=1, target=0, what="copy", where="b")
    assert monitor.problems == [EarlyAccess(0, 1, "copy", "a", 0)]


def test_the_automatic_barrier_allows_every_copy():
    monitor = Monitor()
    monitor.start()
    log = monitor.kernel(memory=object(), devices=4)
    monitor.everyone_entered(log)
    monitor.remote(log, device=3, target=0, what="signal", where=None)
    assert monitor.problems == []


def test_a_send_that_ran_is_reported_when_its_start_flies_idle():
    monitor = Monitor()
    idle_start, busy_start = "idle start", "busy start"
    monitor.idle = {id(idle_start): "its wait"}  # what overlap.py found in the kernel's jaxpr
    monitor.start()
    log = monitor.kernel(memory=object(), devices=2)
    monitor.event(log, 0, "send", busy_start)
    monitor.event(log, 1, "send", busy_start)
    monitor.event(log, 1, "send", idle_start)
    assert monitor.no_overlap() == [NoOverlap(1, idle_start, "its wait", 0)]


def _ring(devices: int, sends: dict[int, list[int]], events: dict[int, list[str]]) -> Monitor:
    """A monitor after a run: each device's remote copies (their targets) and its sends and waits, in order."""
    monitor = Monitor()
    monitor.start()
    log = monitor.kernel(memory=object(), devices=devices)
    copy = 0
    for device, targets in sends.items():
        for target in targets:
            monitor.copy_made(copy, CopyInfo(device, target, f"copy {copy}", send_sem=1, recv_sem=2))
            copy += 1
    for device, kinds in events.items():
        for i, kind in enumerate(kinds):
            monitor.event(log, device, kind, f"{kind} {i}")
    return monitor


def test_two_rings_run_both_ways_at_once():
    both = {d: [(d + 1) % 5, (d - 1) % 5] for d in range(5)}
    assert _ring(5, both, {d: ["send", "send", "wait", "wait"] for d in range(5)}).both_ways(5) == []
    one_way = {d: [(d + 1) % 5, (d + 1) % 5] for d in range(5)}
    assert _ring(5, one_way, {0: ["send", "send"]}).both_ways(5) == [OneWay(0, 1, "copy 0")]
    # Two devices: left and right are one neighbour, so only taking turns can be told.
    assert _ring(2, {0: [1, 1], 1: [0, 0]}, {0: ["send", "send", "wait"]}).both_ways(2) == []
    turns = _ring(5, both, {d: ["send", "wait", "wait", "send", "wait", "wait"] for d in range(5)})
    assert turns.both_ways(5) == [TakingTurns(0, "send 0", "wait 1", 0)]


def test_options_are_checked_before_any_checker_starts():
    good = {"mesh": {"x": "D"}, "in_specs": [["x"], ["", "x"]], "out_specs": ["x"], "traffic": "all-gather"}
    assert options.problems(good) == []
    parsed = options.parse(good)
    assert parsed.shape({"D": 4}) == (4,) and parsed.in_specs == (("x",), (None, "x"))
    bad = {"mesh": {"x": 9}, "in_specs": [["y"]], "out_specs": ["x"], "traffic": "gossip", "colour": 1}
    found = " ".join(options.problems(bad))
    for words in ("unknown target option 'colour'", "1 to 8 devices", "['y']", "traffic must be one of"):
        assert words in found


def test_the_traffic_card_compares_with_the_collectives_minimum():
    gathered = traffic.measure("all-gather", 4, 4096, [12288] * 4, [12288] * 4)
    assert gathered.minimum == 3 * 4096 and gathered.ratio == pytest.approx(1.0)
    assert "(N-1)/N of the gathered result" in "\n".join(card_lines(gathered))
    reduced = traffic.measure("all-reduce", 4, 8192, [24576] * 4, [24576] * 4)
    assert reduced.minimum == 12288 and reduced.ratio == pytest.approx(2.0)
    assert "2x the minimum" in card_lines(reduced)[-1] and "device 3: sent 24 KiB" in card_lines(reduced)[3]


def test_a_deadlock_names_each_device_its_line_and_the_bytes(learner):
    waits = (Wait(0, "dma", 16384, 4096, at(learner, 4), role="receive"),
             Wait(1, "dma", 16384, 4096, at(learner, 4), role="receive"), Wait(2, "regular", 1, 0, at(learner, 6)))
    finding = Explainer(learner, 4).finding(Deadlock(waits, (3,), 4))
    assert finding.kind is FindingKind.DEADLOCK and finding.device == 0 and finding.devices == 4
    assert ("devices 0 and 1 each wait at line 4 for 16384 bytes on their receive semaphore and have 4096"
            in finding.message)
    assert "device 2 waits at line 6 for a count of 1" in finding.message
    assert "device 3 has already finished" in finding.message
    assert [w.line for w in finding.where] == [4, 6]


@pytest.mark.parametrize(("make", "kind", "line", "words"), [
    (lambda w: EarlyAccess(3, 0, "copy", w(3)), FindingKind.NO_HANDSHAKE, 3,
     "Device 3 of 4 copies to device 0 at line 3 before a barrier handshake"),
    (lambda w: Leftover(2, "regular", 1, (w(6),)), FindingKind.SEMAPHORE_LEFT, 6,
     "a semaphore at 1 (raised at line 6)"),
    (lambda w: LostCopy(1, 2, w(3)), FindingKind.COPY_NOT_WAITED, 3,
     "starts a copy to device 2 at line 3 that device 2 never"),
    (lambda w: BadDevice(1, 2, 2, "copy", w(3)), FindingKind.DEVICE_ID, 3, "but the ring has only 2 devices"),
    (lambda w: NoOverlap(0, w(3), w(4)), FindingKind.NO_OVERLAP, 4,
     "waits at line 4 for the copy it started at line 3"),
    (lambda w: Race(1, "vmem", Access("write", None, CopyInfo(0, 1, w(3)), w(3)), Access("read", 1, None, w(5))),
     FindingKind.DMA_READ_BEFORE_WAIT, 5,
     "Device 1 of 4 reads its VMEM buffer at line 5 before the copy from device 0"),
    (lambda w: Race(1, "vmem", Access("write", None, CopyInfo(0, 1, w(3)), w(3)), Access("write", 1, None, w(5)),
                    earlier_writes=1),
     FindingKind.DMA_SLOT_IN_USE, 3, "nothing told device 0 that the slot was free"),
    (lambda w: Race(1, "vmem", Access("write", None, CopyInfo(1, 1, w(3)), w(3)), Access("read", 1, None, w(5)),
                    shared=(w(4), CopyInfo(0, 1, w(6)))),
     FindingKind.DMA_WRONG_COPY, 4, "its wait at line 4 counts bytes on a semaphore that the copy from device 0 "
     "(started at line 6) signals too"),
    (lambda w: Race(1, "vmem", Access("write", None, CopyInfo(0, 1, w(3)), w(3)), Access("read", 1, None, w(5)),
                    shared=(w(4), CopyInfo(0, 1, w(3)))),
     FindingKind.DMA_WRONG_COPY, 4, "the same line's copies of other steps signal too"),
])
def test_each_problem_becomes_a_finding_with_its_line(learner, make, kind, line, words):
    finding = Explainer(learner, 4).finding(make(lambda n: at(learner, n)))
    assert finding.kind is kind and finding.devices == 4
    assert words in finding.message, finding.message
    assert line in [w.line for w in finding.where]


def test_a_copy_shares_its_semaphore_with_another_copy_into_the_same_device_only():
    monitor = Monitor()
    own, neighbours, elsewhere = CopyInfo(1, 1, "own", recv_sem=7), CopyInfo(0, 1, "send", 5, 7), \
        CopyInfo(0, 2, "send", 5, 7)
    for dma_id, info in enumerate((own, neighbours, elsewhere)):
        monitor.copy_made(dma_id, info)
    assert monitor.shared_landing(own) is None  # nothing waited on it yet
    monitor.dma_waited(1, 7, 4096, "own.wait")
    assert monitor.shared_landing(own) == ("own.wait", neighbours)
    monitor.copy_made(3, CopyInfo(2, 3, "alone", recv_sem=8))
    monitor.dma_waited(3, 8, 4096, "alone.wait")
    assert monitor.shared_landing(monitor.copies[3]) is None  # its semaphore is its own


def test_a_long_wait_on_several_devices_is_left_to_the_targets_watchdog(monkeypatch):
    """dma_watch stops a single-device wait with no progress after STALL_SECONDS; on several devices a
    wait may rightly outlast that (a neighbour still computing), and only a watchdog that sees every
    device may call it stuck."""
    import threading
    import time
    from types import SimpleNamespace

    from pallas_puzzles.backends import INTERPRET
    from pallas_puzzles.engine.targets.pallas_call.intercept import dma_watch
    from pallas_puzzles.engine.targets.pallas_call.intercept.session import StrictSession, session_scope

    semaphore = SimpleNamespace(count_by_core=[0], tasks=[[]])
    check_failed = dma_watch._watch_check_failed(lambda memory: None)
    waited = time.monotonic() - 10 * dma_watch.STALL_SECONDS
    monkeypatch.setitem(dma_watch._waits, threading.get_ident(), dma_watch._Wait(semaphore, 4096, 0, True, 0, waited))
    with session_scope(StrictSession(INTERPRET, "learner.py", multi_device=True)):
        check_failed(None)  # no stall: the multi-device target decides
    with session_scope(StrictSession(INTERPRET, "learner.py")), pytest.raises(dma_watch.SemaphoreStall):
        check_failed(None)


def test_the_place_of_a_finding_is_said_once():
    """The verdict adds the device and grid point only where the message does not already say them."""
    from pallas_puzzles.report.sentences import finding_place
    from pallas_puzzles.results import Finding

    said = Finding(FindingKind.NO_OVERLAP, "Device 0 of 2 waits at line 8 ...", device=0, devices=2, grid_point=(1,))
    assert finding_place(said) == "at grid point (program ids) (1,)"
    unsaid = Finding(FindingKind.DEADLOCK, "Deadlock over 4 devices: ...", device=3, devices=4)
    assert finding_place(unsaid) == "on device 3 of 4"
    assert finding_place(Finding(FindingKind.ERROR, "boom")) == ""
