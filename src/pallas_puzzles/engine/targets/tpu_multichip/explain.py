"""The monitor's problem records as findings: what happened, on which device of how many, at which line.

No interpreter internals reach the learner: buffer keys, copy ids and vector
clocks become "device 2's HBM buffer", "the copy device 1 started at line 38".
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from pallas_puzzles.engine.learner_lines import make_line, same_file
from pallas_puzzles.engine.targets.tpu_multichip import races
from pallas_puzzles.engine.targets.tpu_multichip.problems import (
    AutoBarrier,
    BadDevice,
    BadDeviceId,
    Deadlock,
    EarlyAccess,
    Leftover,
    LostCopy,
    NoCollectiveId,
    NoOverlap,
    OneWay,
    Race,
    SelfCopies,
    TakingTurns,
)
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import Finding
from pallas_puzzles.source_line import SourceLine

_SUMMARY = re.compile(r"^(.*?):(\d+)(?::\d+)? \((.*)\)$")  # the interpreter's "file:line:col (function)"


def learner_line(where: Any, learner_file: str) -> SourceLine | None:
    """The learner's innermost line in the interpreter's record of an operation (or its one-line summary)."""
    if isinstance(where, str):
        match = _SUMMARY.match(where.strip())
        if match and same_file(match.group(1), learner_file):
            return make_line(match.group(1), int(match.group(2)), match.group(3))
        return None
    for frame in getattr(getattr(where, "traceback", None), "frames", None) or ():
        if same_file(getattr(frame, "file_name", ""), learner_file):
            return make_line(frame.file_name, int(frame.line_num), frame.function_name)
    return None


def _at(line: SourceLine | None) -> str:
    return f" at line {line.line}" if line is not None else ""


def _list(numbers: list[int]) -> str:
    words = [str(n) for n in numbers]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


class Explainer:
    """Turns one shape case's problem records into findings for a learner's file."""

    def __init__(self, learner_file: str, devices: int, call_line: SourceLine | None = None) -> None:
        self.file, self.devices, self.call_line = learner_file, devices, call_line

    def line(self, where: Any) -> SourceLine | None:
        return learner_line(where, self.file)

    def lines(self, *wheres: Any) -> tuple[SourceLine, ...]:
        return tuple(dict.fromkeys(line for line in map(self.line, wheres) if line is not None))

    def dev(self, device: int) -> str:
        return f"device {device} of {self.devices}"

    def finding(self, problem: Any) -> Finding:
        method = getattr(self, f"_{type(problem).__name__}", None)
        if method is None:  # an exception inside the checker's own rules
            return Finding(FindingKind.INTERNAL, f"The multi-device checker failed: {problem!r}")
        return method(problem)

    def _Deadlock(self, p: Deadlock) -> Finding:
        groups: dict[tuple[Any, ...], list[int]] = defaultdict(list)
        for w in p.waits:
            line = self.line(w.where)
            groups[(w.kind, w.role, w.wanted, w.has, line)].append(w.device)
        parts = []
        for (kind, role, wanted, has, line), devices in groups.items():
            one = len(devices) == 1
            who = f"device {devices[0]} waits" if one else f"devices {_list(devices)} each wait"
            has_text = f"{'has' if one else 'have'} {has}"
            sem = f"{'its' if one else 'their'} {role} semaphore" if role else "a DMA semaphore"
            what = {"dma": f"for {wanted} bytes on {sem} and {has_text}",
                    "barrier": f"for {wanted} signals on the barrier semaphore and {has_text}"}.get(
                kind, f"for a count of {wanted} on a semaphore and {has_text}")
            parts.append(f"{who}{_at(line)} {what}")
        if p.finished:
            parts.append(f"{'device' if len(p.finished) == 1 else 'devices'} {_list(list(p.finished))} "
                         f"{'has' if len(p.finished) == 1 else 'have'} already finished")
        return Finding(FindingKind.DEADLOCK,
                       f"Deadlock over {self.devices} devices: {'; '.join(parts)}. Nothing left running can end "
                       f"these waits, so the check stopped the kernel.",
                       where=self.lines(*(w.where for w in p.waits)), device=p.waits[0].device, devices=self.devices)

    def _EarlyAccess(self, p: EarlyAccess) -> Finding:
        line = self.line(p.where)
        verb = "copies to" if p.what == "copy" else "signals"
        return Finding(FindingKind.NO_HANDSHAKE,
                       f"{self.dev(p.device).capitalize()} {verb} device {p.target}{_at(line)} before a barrier "
                       f"handshake with it: device {p.target} may not have entered the kernel yet.",
                       where=self.lines(p.where), device=p.device, devices=self.devices)

    def _Leftover(self, p: Leftover) -> Finding:
        if p.short is not None:
            return self._short_wait(p, *p.short)
        lines = self.lines(*p.where)
        at = (f" (raised at line{'s' if len(lines) > 1 else ''} {', '.join(str(s.line) for s in lines)})" if lines
              else "")
        what = {"dma": f"{p.count} bytes on a DMA semaphore{at}: a copy's wait_send or wait_recv is missing",
                "barrier": f"the barrier semaphore at {p.count}{at}: more handshake signals arrived than it "
                           f"waited for"}.get(p.kind, f"a semaphore at {p.count}{at}: a signal nobody waited for")
        return Finding(FindingKind.SEMAPHORE_LEFT, f"{self.dev(p.device).capitalize()} ends the kernel with {what}.",
                       where=lines, device=p.device, devices=self.devices)

    def _short_wait(self, p: Leftover, wait: Any, wanted: int, copy: Any, brings: int) -> Finding:
        return Finding(FindingKind.SEMAPHORE_LEFT,
                       f"{self.dev(p.device).capitalize()} ends the kernel with {p.count} bytes on a DMA semaphore: "
                       f"the wait{_at(self.line(wait))} takes {wanted} bytes, but the copy started"
                       f"{_at(self.line(copy))} brings {brings}. The wait's descriptor covers a smaller window than "
                       "the copy; wait with the copy's own descriptor (copy.wait()).",
                       where=self.lines(wait, copy), device=p.device, devices=self.devices)

    def _LostCopy(self, p: LostCopy) -> Finding:
        line = self.line(p.where)
        return Finding(FindingKind.COPY_NOT_WAITED,
                       f"{self.dev(p.device).capitalize()} starts a copy to device {p.target}{_at(line)} that "
                       f"device {p.target} never waits for, so it never lands.",
                       where=self.lines(p.where), device=p.target, devices=self.devices)

    def _BadDevice(self, p: BadDevice) -> Finding:
        line = self.line(p.where)
        verb = "copies to" if p.what == "copy" else "signals"
        said = (f"{self.dev(p.device).capitalize()} {verb} device {p.target}{_at(line)}, but the ring has "
                f"only {p.devices} devices (0 to {p.devices - 1})")
        if p.target < 0:  # lax.rem keeps the sign of what it divides: the usual way to get here
            return Finding(FindingKind.DEVICE_ID, f"{said}: a neighbour's number came out negative.",
                           explanation=_NEGATIVE, where=self.lines(p.where), device=p.device, devices=self.devices)
        return Finding(FindingKind.DEVICE_ID, f"{said}.", where=self.lines(p.where), device=p.device,
                       devices=self.devices)

    def _SelfCopies(self, p: SelfCopies) -> Finding:
        line = self.line(p.where)
        return Finding(FindingKind.DEVICE_ID,
                       f"Every remote copy went back to the device that started it ({self.dev(p.device)} copies to "
                       f"itself{_at(line)}): device_id names the receiving device, so no block reached a neighbour.",
                       explanation="device_id={'x': d} sends to device d of the ring. The right neighbour is "
                                   "lax.rem(me + 1, lax.axis_size('x')) with me = lax.axis_index('x'); "
                                   "lax.axis_index alone names this device.",
                       where=self.lines(p.where), device=p.device, devices=self.devices)

    def _BadDeviceId(self, p: BadDeviceId) -> Finding:
        line = self.line(p.where)
        axes = ", ".join(repr(a) for a in p.axes)
        return Finding(FindingKind.DEVICE_ID,
                       f"The device_id used{_at(line)} is {p.given}, "
                       f"but the mesh has the axis{'es' if len(p.axes) > 1 else ''} "
                       f"{axes}: give one coordinate per axis, e.g. {{{p.axes[0]!r}: index}}.",
                       where=self.lines(p.where), detail=p.error, devices=self.devices)

    def _NoCollectiveId(self, p: NoCollectiveId) -> Finding:
        line = self.line(p.where)
        return Finding(FindingKind.COLLECTIVE_ID,
                       f"pltpu.get_barrier_semaphore(){_at(line)} needs a collective_id: pass "
                       f"compiler_params=pltpu.CompilerParams(collective_id=0) to the pallas_call.",
                       where=self.lines(p.where) + ((self.call_line,) if self.call_line else ()), devices=self.devices)

    def _AutoBarrier(self, p: AutoBarrier) -> Finding:
        return Finding(FindingKind.COLLECTIVE_ID,
                       "The pallas_call has no collective_id, so Pallas makes every device wait for all the others "
                       "before the kernel starts. This puzzle asks for the handshake with the neighbours instead: "
                       "give the call compiler_params=pltpu.CompilerParams(collective_id=0) and use "
                       "pltpu.get_barrier_semaphore() in the kernel.",
                       where=(self.call_line,) if self.call_line else (), devices=self.devices)

    def _NoOverlap(self, p: NoOverlap) -> Finding:
        start, wait = self.line(p.start), self.line(p.wait)
        return Finding(FindingKind.NO_OVERLAP,
                       f"{self.dev(p.device).capitalize()} waits{_at(wait)} for the copy it started"
                       f"{_at(start)} before computing any product for its output: the copy does not overlap "
                       f"the compute.",
                       where=self.lines(p.wait, p.start), device=p.device, devices=self.devices)

    def _OneWay(self, p: OneWay) -> Finding:
        line = self.line(p.where)
        return Finding(FindingKind.BOTH_WAYS,
                       f"{self.dev(p.device).capitalize()} sends every copy to device {p.target} (the copy started"
                       f"{_at(line)}): both rings go the same way round, so the links the other way carry nothing. "
                       "Send one ring to the right neighbour and the other to the left.",
                       where=self.lines(p.where), device=p.device, devices=self.devices)

    def _TakingTurns(self, p: TakingTurns) -> Finding:
        start, wait = self.line(p.start), self.line(p.wait)
        return Finding(FindingKind.BOTH_WAYS,
                       f"{self.dev(p.device).capitalize()} waits{_at(wait)} for the copy it started{_at(start)} "
                       "before it starts the other ring's copy, and so does every device: the two rings take "
                       "turns instead of running at once. Start both copies, then wait for both.",
                       where=self.lines(p.wait, p.start), device=p.device, devices=self.devices)

    def _Race(self, p: Race) -> Finding:
        return races.explain(self, p)


_NEGATIVE = ("lax.rem, like C's %, keeps the sign of the number it divides: lax.rem(me - 1, n) is -1 on device 0, "
             "not n - 1. Add the ring's size before taking the remainder, so the number divided is never negative: "
             "left = lax.rem(me + n - 1, n).")
