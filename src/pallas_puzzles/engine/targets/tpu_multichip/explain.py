"""The monitor's problem records as findings: what happened, on which device of how many, at which line.

No interpreter internals reach the learner: buffer keys, copy ids and vector
clocks become "device 2's HBM buffer", "the copy device 1 started at line 38".
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from pallas_puzzles.engine.learner_lines import make_line, same_file
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
    Race,
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
        lines = self.lines(*p.where)
        at = (f" (raised at line{'s' if len(lines) > 1 else ''} {', '.join(str(s.line) for s in lines)})" if lines
              else "")
        what = {"dma": f"{p.count} bytes on a DMA semaphore{at}: a copy's wait_send or wait_recv is missing",
                "barrier": f"the barrier semaphore at {p.count}{at}: more handshake signals arrived than it "
                           f"waited for"}.get(p.kind, f"a semaphore at {p.count}{at}: a signal nobody waited for")
        return Finding(FindingKind.SEMAPHORE_LEFT, f"{self.dev(p.device).capitalize()} ends the kernel with {what}.",
                       where=lines, device=p.device, devices=self.devices)

    def _LostCopy(self, p: LostCopy) -> Finding:
        line = self.line(p.where)
        return Finding(FindingKind.COPY_NOT_WAITED,
                       f"{self.dev(p.device).capitalize()} starts a copy to device {p.target}{_at(line)} that "
                       f"device {p.target} never waits for, so it never lands.",
                       where=self.lines(p.where), device=p.target, devices=self.devices)

    def _BadDevice(self, p: BadDevice) -> Finding:
        line = self.line(p.where)
        verb = "copies to" if p.what == "copy" else "signals"
        return Finding(FindingKind.DEVICE_ID,
                       f"{self.dev(p.device).capitalize()} {verb} device {p.target}{_at(line)}, but the ring has "
                       f"only {p.devices} devices (0 to {p.devices - 1}).",
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

    def _Race(self, p: Race) -> Finding:
        where = self.lines(p.first.where, p.second.where)
        memory = f"{p.memory.upper()} buffer"
        writer = next((a for a in (p.first, p.second) if a.kind == "write" and a.copy is not None), None)
        if writer is None or writer.copy is None:
            return Finding(FindingKind.RACE, f"Two accesses to device {p.owner}'s {memory} race: nothing orders "
                           f"them, and one of them writes.", where=where, device=p.owner, devices=self.devices)
        other = p.second if writer is p.first else p.first
        incoming = f"the copy from device {writer.copy.source} (started{_at(self.line(writer.where))})"
        at = _at(self.line(other.where))
        device = other.copy.source if other.copy is not None else other.device if other.device is not None else p.owner
        whose = "its" if device == p.owner else f"device {p.owner}'s"
        if other.kind == "read" and p.earlier_writes == 0:  # nothing was there before: it wanted this copy's data
            reads = (f"sends on{at} part of {whose} {memory}" if other.copy is not None
                     else f"reads {whose} {memory}{at}")
            return Finding(FindingKind.DMA_READ_BEFORE_WAIT,
                           f"Device {device} of {self.devices} {reads} before {incoming} has landed there: nothing "
                           f"waited for that copy first.", explanation=_READ_EARLY, where=where, device=device,
                           devices=self.devices)
        verb = "read" if other.kind == "read" else "write"
        user = f"device {device}'s own copy{at}" if other.copy is not None else f"device {device}{at}"
        return Finding(FindingKind.DMA_SLOT_IN_USE,
                       f"{incoming[0].upper()}{incoming[1:]} writes device {p.owner}'s {memory} while {user} may still "
                       f"{verb} it: nothing told device {writer.copy.source} that the slot was free.",
                       explanation=_SLOT_BUSY, where=where, device=p.owner, devices=self.devices)


_READ_EARLY = ("A remote copy may land at any moment until the receiver's wait returns; before that its "
               "destination holds old data. Wait for the copy (.wait_recv(), or .wait() on the same descriptor) "
               "before the first line that reads what it brings.")
_SLOT_BUSY = ("A sender knows nothing about what its neighbour is doing: a device can run a step ahead and copy into "
              "the slot its neighbour is still reading. Use two slots, and a REGULAR 'slot free' semaphore: the "
              "receiver signals its sender (pl.semaphore_signal(..., device_id=...)) once it has finished with a "
              "slot, and the sender waits on it (pl.semaphore_wait) before starting the next copy.")
