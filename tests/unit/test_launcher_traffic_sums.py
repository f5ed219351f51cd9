"""The launcher's whole HBM traffic: XLA operations around the pallas_calls and the kernel's own
copies are counted, and the card names the launcher line (issue 18, class 2)."""

from __future__ import annotations

from helpers import COURSE

from pallas_puzzles.backends import INTERPRET
from pallas_puzzles.engine.checker import check_puzzle


def test_the_kernels_own_copies_are_counted_for_operands_left_in_hbm():
    result = check_puzzle(COURSE.find("dma_copy"), COURSE.find("dma_copy").solution_path, INTERPRET)
    for case in result.cases:
        x_hbm = next(op for op in case.performance.operands if op.name == "x_hbm")
        z_hbm = next(op for op in case.performance.operands if op.name == "z_hbm")
        assert x_hbm.hbm_bytes == x_hbm.min_bytes and z_hbm.hbm_bytes == z_hbm.min_bytes
        assert "1 copy by the kernel's own DMAs" in x_hbm.note
        assert case.performance.traffic_ratio == 1.0
