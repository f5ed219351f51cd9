"""The cost model against traffic counted by hand, on hand-built call layouts (no jax needed)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import pytest
from rich.console import Console

from pallas_puzzles.errors import UserError
from pallas_puzzles.perf import chips
from pallas_puzzles.perf.model import estimate
from pallas_puzzles.results import CallLayout, OperandLayout

F32 = 4
V5E = chips.chip("v5e")


def operand(name: str, role: str, shape: tuple[int, ...], block: tuple[int, ...],
            index_map: Callable[..., tuple[int, ...]], grid: tuple[int, ...], space: str = "") -> OperandLayout:
    points = list(itertools.product(*(range(g) for g in grid)))
    return OperandLayout(name=name, role=role, shape=shape, dtype="float32", block=block, memory_space=space,
                         block_indices=tuple(index_map(*p) for p in points))


def call(kernel: str, grid: tuple[int, ...], *ops: OperandLayout) -> CallLayout:
    return CallLayout(kernel=kernel, grid=grid, semantics=(), operands=ops)


def nbytes(*shape: int) -> int:
    return math.prod(shape) * F32


def only(calls: tuple[CallLayout, ...], flops: float = 0.0, min_bytes: int = 0):
    return estimate(calls, flops, min_bytes, V5E)


def test_blocked_elementwise_add_reads_and_writes_everything_once():
    grid = (4,)
    add = call("add", grid, operand("x", "input", (1024,), (256,), lambda i: (i,), grid),
               operand("y", "input", (1024,), (256,), lambda i: (i,), grid),
               operand("z", "output", (1024,), (256,), lambda i: (i,), grid))
    perf = only((add,), flops=1024)
    assert (perf.hbm_bytes_read, perf.hbm_bytes_written, perf.hbm_bytes_min) == (8192, 4096, 12288)
    assert perf.vmem_bytes == 3 * 2 * 256 * F32  # two buffers per blocked operand
    assert perf.grid_steps == 4 and perf.traffic_ratio == 1.0 and perf.waste == ""
    assert perf.memory_seconds == pytest.approx(12288 / 820e9)
    assert perf.est_seconds == perf.overhead_seconds == pytest.approx(4 * 0.35e-6)
    assert perf.bound == "overhead"


def _matmul(k_innermost: bool) -> CallLayout:
    # x (256, 512) @ y (512, 384), 128-blocks: 2 row blocks, 3 column blocks, 4 K steps.
    if k_innermost:
        grid, at = (2, 3, 4), (lambda i, j, k: (i, j, k))
    else:
        grid, at = (4, 2, 3), (lambda k, i, j: (i, j, k))
    return call("matmul", grid,
                operand("x", "input", (256, 512), (128, 128), lambda *p: (at(*p)[0], at(*p)[2]), grid),
                operand("y", "input", (512, 384), (128, 128), lambda *p: (at(*p)[2], at(*p)[1]), grid),
                operand("z", "output", (256, 384), (128, 128), lambda *p: (at(*p)[0], at(*p)[1]), grid))


def test_matmul_with_k_innermost():
    perf = only((_matmul(k_innermost=True),), flops=2 * 256 * 512 * 384)
    x, y, z = perf.operands
    # x: every step a new (i, k) block: 24 copies of 64 KiB = x three times (once per column block).
    assert (x.copies, x.hbm_bytes, x.ratio) == (24, 24 * nbytes(128, 128), 3.0)
    assert (y.copies, y.hbm_bytes, y.ratio) == (24, 24 * nbytes(128, 128), 2.0)
    # z stays put across the 4 K steps: 6 output blocks, each written once.
    assert (z.copies, z.hbm_bytes, z.ratio) == (6, nbytes(256, 384), 1.0)
    assert perf.hbm_bytes_read == 48 * nbytes(128, 128)
    assert perf.flops / perf.hbm_bytes == pytest.approx(perf.arithmetic_intensity)
    assert "y: read 2.0×" in perf.waste or "x: read 3.0×" in perf.waste
    assert perf.waste_array == perf.waste.split(":")[0]  # the array travels as data beside its sentence


def test_matmul_with_k_outermost_writes_the_output_back_every_k_step():
    perf = only((_matmul(k_innermost=False),))
    x, y, z = perf.operands
    assert (x.copies, x.ratio) == (8, 1.0)  # (i, k) changes only with i or k: x is read once
    assert (y.copies, y.ratio) == (24, 2.0)
    assert (z.copies, z.hbm_bytes, z.ratio) == (24, 4 * nbytes(256, 384), 4.0)
    assert "grid axis 0" in z.why and "4 steps" in z.why


def test_output_revisited_across_a_reduction_axis_is_written_once_per_visit_run():
    grid = (8, 4)  # row blocks, then the reduction over column blocks
    rows = call("row_sum", grid, operand("x", "input", (64, 1024), (8, 256), lambda i, k: (i, k), grid),
                operand("z", "output", (64, 1), (8, 1), lambda i, k: (i, 0), grid))
    perf = only((rows,))
    assert (perf.hbm_bytes_read, perf.hbm_bytes_written) == (nbytes(64, 1024), nbytes(64, 1))
    flipped_grid = (4, 8)  # the reduction outermost: each output block is left and revisited
    flipped = call("row_sum", flipped_grid,
                   operand("x", "input", (64, 1024), (8, 256), lambda k, i: (i, k), flipped_grid),
                   operand("z", "output", (64, 1), (8, 1), lambda k, i: (i, 0), flipped_grid))
    assert only((flipped,)).hbm_bytes_written == 4 * nbytes(64, 1)


def test_an_overhanging_last_block_moves_only_its_in_bounds_part():
    grid = (2,)
    edge = call("edge", grid, operand("x", "input", (200,), (128,), lambda i: (i,), grid),
                operand("z", "output", (200,), (128,), lambda i: (i,), grid))
    perf = only((edge,))
    assert (perf.hbm_bytes_read, perf.hbm_bytes_written) == (nbytes(200), nbytes(200))
    assert perf.vmem_bytes == 2 * 2 * nbytes(128)  # the buffers are whole blocks


def test_two_call_launcher_sums_its_calls_and_names_the_round_trip():
    grid = (4,)
    first = call("scale", grid, operand("x", "input", (1000,), (256,), lambda i: (i,), grid),
                 operand("y", "output", (1000,), (256,), lambda i: (i,), grid))
    second = call("shift", grid, operand("t", "input", (1000,), (256,), lambda i: (i,), grid),
                  operand("z", "output", (1000,), (256,), lambda i: (i,), grid))
    perf = only((first, second), min_bytes=2 * nbytes(1000))  # the spec: x in, z out
    assert (perf.hbm_bytes_read, perf.hbm_bytes_written, perf.hbm_bytes_min) == (8000, 8000, 8000)
    assert perf.traffic_ratio == 2.0 and perf.grid_steps == 8 and len(perf.calls) == 2
    assert perf.waste.startswith("y makes a round trip") and "pallas_call 2 (shift)" in perf.waste
    assert perf.waste_array == "y"


def test_operands_left_in_hbm_and_scalar_prefetch_are_reported_not_guessed():
    grid = (2,)
    manual = OperandLayout(name="table", role="input", shape=(1000, 128), dtype="float32", block=None,
                           memory_space="any")
    prefetch = OperandLayout(name="idx", role="prefetch", shape=(2,), dtype="int32", block=None,
                             memory_space="smem")
    scratch = OperandLayout(name="acc", role="scratch", shape=(8, 128), dtype="float32", block=None,
                            memory_space="vmem")
    layout = call("gather", grid, prefetch, manual, scratch,
                  operand("z", "output", (16, 128), (8, 128), lambda i: (i, 0), grid))
    perf = only((layout,))
    idx, table, acc, _ = perf.operands
    assert idx.hbm_bytes is None and "prefetch" in idx.note
    assert table.hbm_bytes is None and "left in HBM" in table.note
    assert acc.vmem_bytes == nbytes(8, 128)
    assert perf.hbm_bytes_read == 0 and perf.hbm_bytes_written == nbytes(16, 128)
    assert perf.vmem_bytes == nbytes(8, 128) + 2 * nbytes(8, 128)


def test_compute_bound_and_chip_choice():
    grid = (1,)
    tiny = call("k", grid, operand("x", "input", (8, 128), (8, 128), lambda i: (0, 0), grid),
                operand("z", "output", (8, 128), (8, 128), lambda i: (0, 0), grid))
    perf = estimate((tiny,), 1e9, 0, chips.chip("v6e"))
    assert perf.bound == "compute" and perf.est_seconds == pytest.approx(1e9 / 920e12)
    assert perf.chip == "v6e" and perf.vmem_limit_bytes == 32 << 20
    assert chips.chip("TPU v5e").name == "v5e"


def test_tpu7x_is_modelled_one_tensorcore_at_a_time():
    """TPU7x has no megacore: each of a chip's two TensorCores is a device, so the card models one, with half the
    chip's published bandwidth and bf16 rate (Google Cloud: 7380 GB/s, 2307 TFLOP/s per chip), and says so."""
    from pallas_puzzles.report.perf_card import card

    v7x = chips.chip("v7x")
    assert chips.chip("TPU7x") is v7x and chips.chip("ironwood") is v7x and chips.chip("7x") is v7x
    assert v7x.hbm_bytes_per_second == pytest.approx(7380e9 / 2) and v7x.flops_per_second == pytest.approx(2307e12 / 2)
    assert v7x.vmem_capacity_bytes == 64 << 20 and v7x.tensorcores_per_device == 1
    grid = (4,)
    copy = call("k", grid, operand("x", "input", (32, 128), (8, 128), lambda i: (i, 0), grid),
                operand("z", "output", (32, 128), (8, 128), lambda i: (i, 0), grid))
    on_v5e, on_v7x = estimate((copy,), 0.0, 0, chips.chip("v5e")), estimate((copy,), 0.0, 0, v7x)
    assert on_v7x.memory_seconds == pytest.approx(on_v5e.memory_seconds * 820e9 / 3690e9)
    assert on_v5e.generation == "a TPU v5e" and "TPU7x" in on_v7x.generation
    rendered = Console(width=120, record=True)
    rendered.print(card(on_v7x))
    text = " ".join(rendered.export_text().split())
    assert "Performance on a TPU7x TensorCore (Ironwood) (model)" in text and "JAX device of its own" in text
    with pytest.raises(UserError, match="choose one of v4, v5e, v5p, v6e, v7x"):
        chips.chip("v8")


def test_a_vmapped_call_gets_the_batch_as_outer_grid_axes():
    from pallas_puzzles.perf.model import with_batch

    grid = (2,)
    one = call("gate", grid, operand("x", "input", (10, 150), (8, 150), lambda i: (i, 0), grid),
               operand("z", "output", (10, 150), (8, 150), lambda i: (i, 0), grid))
    batched = with_batch(one, (3,))
    assert batched.grid == (3, 2)
    x = batched.operands[0]
    assert x.shape == (3, 10, 150) and x.block == (1, 8, 150) and x.block_indices[2] == (1, 0, 0)
    perf = only((batched,))
    assert (perf.hbm_bytes_read, perf.hbm_bytes_written) == (3 * nbytes(10, 150), 3 * nbytes(10, 150))
