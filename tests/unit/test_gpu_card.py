"""The GPU card's model without JAX: the chip table, the estimate and the two GPU budgets."""

from __future__ import annotations

import pytest

from pallas_puzzles.course.model import Budget
from pallas_puzzles.errors import UserError
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.perf.gpu_budget import check_gpu_budget
from pallas_puzzles.perf.gpu_card import KernelCounts, estimate, for_gpu
from pallas_puzzles.perf.gpu_chips import GPU_CHIPS, gpu_chip
from pallas_puzzles.source_line import SourceLine

WAIT = SourceLine("k.py", 12, "plgpu.barrier_wait(barriers.at[slot])")


def _counts(**changes) -> KernelCounts:
    fields = dict(gmem_bytes_read=65_536, gmem_bytes_written=65_536, flops=2_097_152, mma_dtype="float16",
                  smem_bytes=32_768, blocks=4, copy_waits=4, overlapped_waits=0, min_bytes=98_304)
    return KernelCounts(**{**fields, **changes})


def test_the_chip_table_holds_the_datasheet_figures_with_their_sources():
    h100, h200, b200 = gpu_chip("h100"), gpu_chip("H200"), gpu_chip("nvidia-b200")
    assert gpu_chip() is h100  # the default
    assert (h100.hbm_bytes_per_second, h100.bf16_flops_per_second, h100.fp8_flops_per_second) == \
        (3.35e12, 989.4e12, 1978.9e12)
    assert (h100.sm_count, h100.smem_per_sm_bytes, h100.smem_per_block_bytes, h100.l2_bytes) == \
        (132, 228 * 1024, 227 * 1024, 50_000_000)
    assert h200.hbm_bytes_per_second == 4.8e12 and h200.bf16_flops_per_second == h100.bf16_flops_per_second
    assert (b200.hbm_bytes_per_second, b200.bf16_flops_per_second, b200.fp8_flops_per_second, b200.sm_count) == \
        (8.0e12, 2.25e15, 4.5e15, 148)
    assert all(chip.sources and all(chip.sources) for chip in GPU_CHIPS.values())
    assert h100.mma_flops_per_second("float8_e4m3fn") == 1978.9e12
    assert h100.mma_flops_per_second("float32") == 494.7e12 and h100.mma_flops_per_second("bfloat16") == 989.4e12
    with pytest.raises(UserError, match="Unknown GPU 'a100'; choose one of h100, h200, b200"):
        gpu_chip("a100")


def test_a_small_grid_gets_its_share_of_the_sms_and_serial_copies_add_up():
    card = estimate(_counts(), gpu_chip("h100"), "M=128")
    share = 4 / 132
    assert card.sm_share == pytest.approx(share)
    # a is read twice and b twice, but all of a, b and z fit in L2: the re-reads come from L2
    assert card.counts.gmem_bytes == 131_072 and card.dram_bytes == 98_304
    assert card.memory_seconds == pytest.approx(98_304 / (3.35e12 * share))
    assert card.compute_seconds == pytest.approx(2_097_152 / (989.4e12 * share))
    assert card.blocks_per_sm == 7  # 228 KiB / 32 KiB
    assert card.overlap == 0.0  # one wait per block, one block per SM: copies and MMAs one after the other
    assert card.est_seconds == pytest.approx(card.memory_seconds + card.compute_seconds + 3e-6)
    assert card.bound == "launch"


def test_a_pipelined_grid_that_fills_the_gpu_overlaps_copies_with_mmas():
    counts = _counts(gmem_bytes_read=10**9, flops=10**13, blocks=1056, copy_waits=8448, overlapped_waits=8448)
    card = estimate(counts, gpu_chip("h100"))
    assert card.sm_share == 1.0 and card.resident == 7  # 8 blocks per SM wanted, 7 fit
    assert card.overlap == 1.0
    assert card.est_seconds == pytest.approx(max(card.memory_seconds, card.compute_seconds) + 3e-6)
    assert card.bound == "compute"
    faster = for_gpu(card, "b200")
    assert faster.chip == "b200" and faster.est_seconds < card.est_seconds and faster.counts == counts


def test_re_reads_go_to_dram_as_far_as_the_arrays_overflow_l2():
    # A 4096 x 4096 by 4096 x 8192 float16 matmul into float16, 128 x 256 tiles: a is read 32 times, b 32 times.
    a, b, z = 4096 * 4096 * 2, 4096 * 8192 * 2, 4096 * 8192 * 2
    counts = _counts(gmem_bytes_read=32 * a + 32 * b, gmem_bytes_written=z, min_bytes=a + b + z,
                     flops=2 * 4096 * 8192 * 4096, blocks=1024, copy_waits=65_536, overlapped_waits=65_536)
    h100 = estimate(counts, gpu_chip("h100"))
    misses = 1 - 50e6 / (a + b + z)  # 50 MB of L2 for 167.8 MB of arrays
    assert h100.dram_bytes == round(counts.gmem_bytes - (counts.gmem_bytes - (a + b + z)) * (1 - misses))
    assert h100.memory_seconds == pytest.approx(h100.dram_bytes / 3.35e12)
    small = _counts(gmem_bytes_read=10 * 98_304, min_bytes=98_304 + 65_536)
    assert estimate(small, gpu_chip("h100")).dram_bytes == small.min_bytes  # all of it fits: only first reads


def test_the_overlap_budget_names_the_wait_that_found_nothing_in_flight():
    card = estimate(_counts(copy_waits=16, overlapped_waits=0), gpu_chip())
    finding = check_gpu_budget(card, Budget(overlap=0.5), None, WAIT)
    assert finding is not None and finding.kind is FindingKind.COPY_NOT_OVERLAPPED
    assert finding.where == (WAIT,) and "Only 0% of the waits" in finding.message and "asks for 50%" in finding.message
    assert check_gpu_budget(estimate(_counts(copy_waits=16, overlapped_waits=8), gpu_chip()), Budget(overlap=0.5),
                            None, WAIT) is None
    # one wait per block: nothing to overlap within a block, so nothing to grade
    assert check_gpu_budget(estimate(_counts(), gpu_chip()), Budget(overlap=0.5), None, WAIT) is None


def test_the_traffic_budget_names_the_busiest_load():
    card = estimate(_counts(gmem_bytes_read=196_608), gpu_chip())  # (196,608 + 65,536) / 98,304 = 2.67×
    finding = check_gpu_budget(card, Budget(traffic=1.5), WAIT, None)
    assert finding is not None and finding.kind is FindingKind.GMEM_REREAD and finding.where == (WAIT,)
    assert "2.67× the minimum GMEM traffic" in finding.message and "allows 1.50×" in finding.message
    assert check_gpu_budget(card, Budget(traffic=3.0), WAIT, None) is None
    assert FindingKind.GMEM_REREAD.is_budget and FindingKind.COPY_NOT_OVERLAPPED.is_budget


def _tiled_matmul(m: int, k: int, n: int, chip: str, tm: int = 128, tn: int = 256, tk: int = 64) -> float:
    """The card's estimate for a float16 matmul into float16 with (tm, tn) output tiles, pipelined over K,
    counted by hand as the interpreter would count it."""
    a, b, z = m * k * 2, k * n * 2, m * n * 2
    blocks, steps = (m // tm) * (n // tn), k // tk
    counts = KernelCounts(gmem_bytes_read=a * (n // tn) + b * (m // tm), gmem_bytes_written=z, flops=2 * m * n * k,
                          mma_dtype="float16", smem_bytes=4 * (tm * tk + tk * tn) * 2, blocks=blocks,
                          copy_waits=blocks * steps, overlapped_waits=blocks * (steps - 1), min_bytes=a + b + z)
    return estimate(counts, gpu_chip(chip)).est_seconds


def test_the_card_against_jaxs_published_mosaic_gpu_matmul_figures():
    # docs/pallas/gpu/collective_matmul.md (jax-ml/jax): an f16 matmul with M=1024, K=4096, N=4096
    # "should take about 43us on a single H100". The card is a roofline: it may only be faster, within 25 %.
    h100 = _tiled_matmul(1024, 4096, 4096, "h100")
    assert 0.75 * 43e-6 <= h100 <= 43e-6
    # docs/pallas/gpu/blackwell_matmul.md: M=4096, K=4096, N=8192 float16 on a B200; the best Pallas kernel
    # (grid tiling) reaches 69.44 % of the 2.25 PFLOP/s tensor-core peak, i.e. 176 us. The card ignores
    # epilogues and scheduling, so it is faster than any kernel, but not by more than 1.5x.
    published = 2 * 4096 * 4096 * 8192 / (0.6944 * 2.25e15)
    b200 = _tiled_matmul(4096, 4096, 8192, "b200")
    assert published / 1.5 <= b200 <= published


def test_the_notebook_refuses_a_chip_of_the_wrong_kind_before_any_check():
    import pallas_puzzles as pp

    with pytest.raises(UserError, match=r"runs on an NVIDIA GPU: --chip takes h100, h200, b200, not 'v5e'"):
        pp.check("pipeline_matmul", lambda a, b: a, chip="v5e")
    with pytest.raises(UserError, match="Unknown TPU generation 'a100'"):
        pp.check("constant_add", lambda x: x, chip="a100")
    with pytest.raises(UserError, match="Unknown GPU 'v9'"):
        pp.check("pipeline_matmul", lambda a, b: a, chip="v9")
