"""A race between devices and their copies, told as what went wrong in the ring.

The race detector reports two accesses to one device's buffer that nothing orders, one of them
a write. Across chips that is one of these, each with its own advice:
- a device reads, or sends on, what a copy brings before waiting for it (dma-read-before-wait), or
  after a wait that another copy on the same semaphore ended (dma-wrong-copy);
- a copy lands in a slot its receiver still uses (dma-slot-in-use): because the sender took a
  "slot free" signal meant for another slot (a semaphore two neighbours signal), because the
  slot is the wrong one (a buffer in HBM: each block has a slot of its own), or because nothing
  told the sender the slot was free;
- a device overwrites what its own copy is still sending (dma-slot-in-use);
- anything else: two accesses nothing orders (race), said without the grid's words.
"""

from __future__ import annotations

from typing import Any, Protocol

from pallas_puzzles.engine.targets.tpu_multichip.problems import Access, Race
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import Finding
from pallas_puzzles.source_line import SourceLine


class Lines(Protocol):
    devices: int

    def line(self, where: Any) -> SourceLine | None: ...

    def lines(self, *wheres: Any) -> tuple[SourceLine, ...]: ...


def _at(line: SourceLine | None) -> str:
    return f" at line {line.line}" if line is not None else ""


def explain(said: Lines, p: Race) -> Finding:
    where = said.lines(p.first.where, p.second.where)
    memory = f"{p.memory.upper()} buffer"
    writer = next((a for a in (p.first, p.second) if a.kind == "write" and a.copy is not None), None)
    if writer is None or writer.copy is None:
        return _not_by_a_copy(said, p, where, memory)
    other = p.second if writer is p.first else p.first
    incoming = f"the copy from device {writer.copy.source} (started{_at(said.line(writer.where))})"
    at = _at(said.line(other.where))
    device = other.copy.source if other.copy is not None else other.device if other.device is not None else p.owner
    whose = "its" if device == p.owner else f"device {p.owner}'s"
    if other.kind == "read" and p.earlier_writes == 0:  # nothing was there before: it wanted this copy's data
        reads = f"sends on{at} part of {whose} {memory}" if other.copy is not None else f"reads {whose} {memory}{at}"
        if p.shared is not None:  # it was waited for, on a semaphore another copy signals too
            wait, rival = p.shared
            if said.line(rival.where) == said.line(writer.where):
                signals = "the same line's copies of other steps signal too, and it ended on one of theirs"
            else:
                signals = (f"the copy from device {rival.source} (started{_at(said.line(rival.where))}) signals "
                           "too, and it ended on that copy's bytes")
            return Finding(FindingKind.DMA_WRONG_COPY,
                           f"Device {device} of {said.devices} {reads} before {incoming} has landed there: its wait"
                           f"{_at(said.line(wait))} counts bytes on a semaphore that {signals}.",
                           where=said.lines(other.where, wait, writer.where, rival.where),
                           device=device, devices=said.devices)
        return Finding(FindingKind.DMA_READ_BEFORE_WAIT,
                       f"Device {device} of {said.devices} {reads} before {incoming} has landed there: nothing "
                       f"waited for that copy first.", explanation=_READ_EARLY, where=where, device=device,
                       devices=said.devices)
    verb = "read" if other.kind == "read" else "write"
    user = f"device {device}'s own copy{at}" if other.copy is not None else f"device {device}{at}"
    lands = f"{incoming[0].upper()}{incoming[1:]} writes device {p.owner}'s {memory} while {user} may still {verb} it"
    sender = writer.copy.source
    if p.mixed:  # the sender's "slot free" wait took a signal that may have been meant for another slot
        wait, *signals = (said.line(w) for w in p.mixed)
        lines = ", ".join(str(s.line) for s in signals if s is not None)
        return Finding(FindingKind.DMA_SLOT_IN_USE,
                       f"{lands}. Device {sender} waited{_at(wait)} on a semaphore that more than one device "
                       f"signals{f' (line {lines})' if lines else ''}: the signal it took may have been meant for "
                       "another slot, so it did not say that this one was free.",
                       explanation=_SHARED_FREE, where=said.lines(*p.mixed) + where, device=p.owner,
                       devices=said.devices)
    if p.memory.lower() in ("hbm", "any"):  # one of the kernel's arrays: a slot per block, no reuse to guard
        return Finding(FindingKind.DMA_SLOT_IN_USE,
                       f"{lands}: two blocks meet in one slot of it.", explanation=_SLOT_TAKEN, where=where,
                       device=p.owner, devices=said.devices)
    return Finding(FindingKind.DMA_SLOT_IN_USE, f"{lands}: nothing told device {sender} that the slot was free.",
                   explanation=_SLOT_BUSY, where=where, device=p.owner, devices=said.devices)


def _not_by_a_copy(said: Lines, p: Race, where: tuple[SourceLine, ...], memory: str) -> Finding:
    """No incoming copy writes: a device overwrites what its own copy is still sending, or two accesses race."""
    store = next((a for a in (p.first, p.second) if a.kind == "write" and a.device is not None), None)
    send: Access | None = next((a for a in (p.first, p.second) if a.kind == "read" and a.copy is not None), None)
    if store is not None and send is not None and send.copy is not None:
        return Finding(FindingKind.DMA_SLOT_IN_USE,
                       f"Device {store.device} of {said.devices} writes its {memory}{_at(said.line(store.where))} "
                       f"while its copy to device {send.copy.target} (started{_at(said.line(send.where))}) may "
                       "still be reading it.", explanation=_SEND_BUSY, where=where, device=store.device,
                       devices=said.devices)
    return Finding(FindingKind.RACE, f"Two accesses to device {p.owner}'s {memory} race: nothing orders them, and one "
                   "of them writes.", explanation=_UNORDERED, where=where, device=p.owner, devices=said.devices)


_READ_EARLY = ("A remote copy may land at any moment until the receiver's wait returns; before that its "
               "destination holds old data. Wait for the copy (.wait_recv(), or .wait() on the same descriptor) "
               "before the first line that reads what it brings.")
_SLOT_BUSY = ("A sender knows nothing about what its neighbour is doing: a device can run a step ahead and copy into "
              "the slot its neighbour is still reading. Use two slots, and a REGULAR 'slot free' semaphore: the "
              "receiver signals its sender (pl.semaphore_signal(..., device_id=...)) once it has finished with a "
              "slot, and the sender waits on it (pl.semaphore_wait) before starting the next copy.")
_SLOT_TAKEN = ("Here each block has a slot of its own in the array, so no slot is ever reused and no 'slot free' "
               "signal is needed: a copy that lands where its receiver is still working was sent into the wrong "
               "slot. At step s a device passes on the block it received at step s - 1, into the same slot on its "
               "neighbour: check the slot index of each step against the ring's direction.")
_SHARED_FREE = ("A REGULAR semaphore only counts signals: it cannot tell whose they are. When two neighbours signal "
                "one semaphore (two rings, or two directions), a device waiting for 'my receiver's slot is free' can "
                "take the other neighbour's signal and copy into a slot that is still in use. Give each direction "
                "its own semaphore (free_sems.at[ring]), signalled only by the device that receives from it.")
_SEND_BUSY = ("A copy reads its source while it is in flight, until the sender's wait for it returns. Wait for the "
              "send (.wait_send(), or .wait() on the descriptor) before writing into what it sends, or write the "
              "next value into the other slot.")
_UNORDERED = ("Devices run at their own pace, and a copy runs on its own: two accesses to one buffer, one of them a "
              "write, need a wait between them (a copy's wait, or a semaphore another device signals) that orders "
              "them, or they may happen either way round.")
