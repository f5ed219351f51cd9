"""`--chip` and `pp.check(chip=)`: a TPU generation for TPU puzzles, an NVIDIA GPU for GPU puzzles, and the
cases' figures re-estimated for it (the checker estimates for the defaults, v5e and h100)."""

from __future__ import annotations

import dataclasses

from pallas_puzzles.errors import UserError
from pallas_puzzles.perf import chips, gpu_card, gpu_chips
from pallas_puzzles.perf.model import for_chip
from pallas_puzzles.results import CaseResult


def _is_tpu(chip_name: str) -> bool:
    try:
        chips.chip(chip_name)
    except UserError:
        return False
    return True


def check_chip(chip_name: str, number: int | None = None, gpu_puzzle: bool = False) -> None:
    """One sentence when the chip is unknown, or (for puzzle `number`) of the wrong kind."""
    is_gpu = gpu_chips.is_gpu_chip(chip_name)
    if number is None:  # several puzzles: a chip of either kind
        if not is_gpu and not _is_tpu(chip_name):
            raise UserError(f"Unknown chip '{chip_name}'; choose a TPU generation ({', '.join(chips.CHIPS)}) or, "
                            f"for GPU puzzles, an NVIDIA GPU ({', '.join(gpu_chips.GPU_CHIPS)}).")
        return
    if is_gpu != gpu_puzzle and (is_gpu or _is_tpu(chip_name)):
        choices = ", ".join(gpu_chips.GPU_CHIPS if gpu_puzzle else chips.CHIPS)
        raise UserError(f"Puzzle {number} runs on {'an NVIDIA GPU' if gpu_puzzle else 'a TPU'}: "
                        f"--chip takes {choices}, not '{chip_name}'.")
    if gpu_puzzle:
        gpu_chips.gpu_chip(chip_name)  # one sentence when unknown
    else:
        chips.chip(chip_name)


def for_named_chip(cases: list[CaseResult], chip_name: str) -> list[CaseResult]:
    """The cases re-estimated for the named TPU generation or GPU."""
    if not gpu_chips.is_gpu_chip(chip_name):
        return for_chip(cases, chip_name)
    return [dataclasses.replace(c, gpu_card=gpu_card.for_gpu(c.gpu_card, chip_name)) if c.gpu_card else c
            for c in cases]
