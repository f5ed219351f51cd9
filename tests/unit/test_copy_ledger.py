"""The ledger of a kernel's copies is read while copies start: on several cores, by another core's thread.

pipeline_cores' reference solution failed about once in a hundred checks (the verdict "The kernel failed
... dictionary changed size during iteration") when one core's DMA wait read the ledger while the other
core started a copy. Here the other core is a semaphore id whose comparison starts a copy mid-read, so
the interleaving that failed by chance happens every time.
"""

from __future__ import annotations

from typing import Any

from pallas_puzzles.engine.targets.pallas_call.intercept import dma_ledger
from pallas_puzzles.engine.targets.pallas_call.intercept.records import Copy, Ledger


def _copy(ledger: Ledger, number: int, semaphore: Any = 1, landed: bool = False) -> Copy:
    copy = Copy(id=number, order=len(ledger.copies), semaphore=semaphore, core=0, source_info=None,
                reads_hbm=None, writes_hbm=None, bytes=64 if landed else 0, landed=landed)
    ledger.copies[number] = copy
    return copy


class StartsACopy(int):
    """A semaphore id that, when compared, lets 'the other core' start a copy in the same ledger."""

    ledger: Ledger

    def __eq__(self, other: object) -> bool:
        _copy(self.ledger, 100 + len(self.ledger.copies))
        return int(self) == other

    __hash__ = int.__hash__


def _racing_ledger(landed: bool) -> Ledger:
    ledger = Ledger()
    semaphore = StartsACopy(1)
    semaphore.ledger = ledger
    for number in range(3):
        _copy(ledger, number, semaphore, landed)
    return ledger


def test_a_wait_reads_the_pending_copies_while_another_core_starts_one() -> None:
    ledger = _racing_ledger(landed=False)
    assert [c.id for c in ledger.pending_on(1, 0)] == [0, 1, 2]  # the copies there when the read began


def test_kernel_exit_reads_the_ledger_while_another_core_starts_a_copy() -> None:
    ledger = _racing_ledger(landed=True)
    left, counted = dma_ledger._unwaited(ledger, [(1, 0, 64)])
    assert counted == 64 and [c.id for c in left] == [2]
    assert dma_ledger._short_wait(_with_wait(_racing_ledger(landed=True))) is not None


def _with_wait(ledger: Ledger) -> Ledger:
    ledger.waits.append((1, 0, 16, None))  # a wait for 16 bytes on a semaphore whose copies bring 64
    return ledger
